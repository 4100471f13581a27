"""Widgets: views of the app's state, one per file."""
