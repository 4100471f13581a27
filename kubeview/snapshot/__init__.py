"""The snapshot document: what `kubeview snapshot` prints, read from the pure cluster model.

`document.py` builds the `--json` document and its JSON Schema (`--schema`), with its parts in
`gangs.py` (gangs), `jobs.py` (Jobs) and `dra.py` (DRA devices and claims); `ksm.py` writes the same
numbers as kube-state-metrics-named series (`--metrics`); `schema.py` checks a document against the
schema (the subset kubeview's schemas use).

May import: `kubeview.model` (and the standard library). Never the cluster sources, the scheduler,
the TUI or the commands; and `kubeview.model` never imports this package (tests/test_boundaries.py).
"""
