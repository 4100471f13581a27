"""Kueue's queue positions are polled only while a queue screen shows them (cluster/kube/queue_positions.py):
the screens that show them (`POSITIONS = True`: Quota, ClusterQueue) say so when they come and go."""

from __future__ import annotations

from textual.app import App

from kubeview.cluster.source import ReportsQueuePositions


def want_positions(app: App) -> None:
    """Ask the source for positions while the screen shown now shows them, else stop asking (called when
    a queue screen comes or goes; read from `app.screen`, not the screen calling: at start the app visits
    every screen at once, and only the one left shown counts)."""
    source = getattr(app, "source", None)
    if not isinstance(source, ReportsQueuePositions):
        return
    if getattr(app.screen, "POSITIONS", False):
        source.want_positions.set()
    else:
        source.want_positions.clear()
