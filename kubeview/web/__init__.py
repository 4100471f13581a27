"""`kubeview serve`: the TUI served to web browsers through textual-serve, one process per session."""
