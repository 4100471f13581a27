"""The README quotes train-c's Pending reason in the demo word for word (#24 item 16: it said
"5 cannot allocate all claims" where the app shows 2)."""

from __future__ import annotations

import re
from pathlib import Path

from kubeview.cluster.local.demo import open_demo

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_quotes_train_c_as_the_demo_shows_it() -> None:
    text = " ".join(README.read_text().split())
    quoted = re.search(r"the third stays Pending \(`([^`]+)`", text)
    assert quoted is not None
    source = open_demo()
    try:
        model = source.model()
        shown = next(p.pending_reason for p in model.pending() if p.name == "train-c")
    finally:
        source.close()
    assert quoted.group(1) == shown
