"""Gangs: groups of pods that run together or not at all, across upstream Kubernetes and the batch
schedulers (KAI, Kueue, Volcano). Pure.

`store.py` holds `GangStore` (the model's `model.gangs`: each gang with its members, from the pods),
`objects.py` reads each scheduler's group object into one shape (`GroupHeader`), and `messages.py`
holds kube-scheduler's gang words (condition types, reasons, messages).

May import the rest of `kubeview.model` (and the standard library); never the cluster sources, the
scheduler, the TUI or the snapshot (tests/test_boundaries.py).
"""
