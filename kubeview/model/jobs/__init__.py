"""batch/v1 Jobs and their pods as kubeview shows them. Pure.

`views.py` reads a Job and its pods from the API (`JobView`, `JobPodView`, index strings), `store.py`
holds `JobStore` (the model's `model.jobs`: each Job with its pods, disrupted pods remembered), and
`progress.py` draws an Indexed Job's index strip and the fate of its disrupted pods.

May import the rest of `kubeview.model` (and the standard library); never the cluster sources, the
scheduler, the TUI or the snapshot (tests/test_boundaries.py).
"""
