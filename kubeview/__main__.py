"""`python -m kubeview` is the same as the `kubeview` command."""

from kubeview.cli import main

if __name__ == "__main__":  # guarded: spawn-based multiprocessing re-imports this module
    raise SystemExit(main())
