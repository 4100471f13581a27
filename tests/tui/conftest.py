"""Fixtures for the TUI tests: no cursor blink (stable snapshots), deterministic sources, settling."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest
from textual.reactive import reactive
from textual.widgets import Input

from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.select import open_source
from kubeview.cluster.synthetic import SyntheticSource


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking cursor makes screenshots depend on the clock."""
    still = reactive(False, init=False)
    still.__set_name__(Input, "cursor_blink")
    monkeypatch.setattr(Input, "cursor_blink", still)


@pytest.fixture
def small_cluster() -> SyntheticSource:
    """12 nodes (3 with 8 GPUs), 80 pods, 5 of them Pending; no events: the same every run."""
    return SyntheticSource(nodes=12, pods=80, seed=1)


@pytest.fixture
def demo() -> Iterator[LocalSource]:
    """`--demo` opened as `kubeview` opens it (the app closes it when it quits)."""
    args = argparse.Namespace(local=False, demo=True, kubeconfig=None, context=None, namespace=None, cluster=None)
    source = open_source(args)
    try:
        yield source
    finally:
        source.close()
