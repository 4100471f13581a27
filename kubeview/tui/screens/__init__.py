"""Screens: one per view of the cluster (k9s's resources), plus help and modal prompts."""
