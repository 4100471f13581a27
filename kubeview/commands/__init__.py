"""One module per command; each exposes `run(args) -> int`."""
