"""`python -m kubeview` is the same as the `kubeview` command."""

from kubeview.cli import main

raise SystemExit(main())
