"""The Textual app: screens, widgets and styles."""
