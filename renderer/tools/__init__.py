"""Developer tools for the renderer (not needed at run time)."""
