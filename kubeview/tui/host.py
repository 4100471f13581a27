"""What screens, widgets' owners and the actions mixin may use of the app: a Protocol, so that they
reach `KubeviewApp` without importing `app.py` (which imports every screen; #26 cut that circle)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message

    from kubeview.cluster.source import ClusterSource
    from kubeview.scheduling.config import PackingConfig
    from kubeview.tui.state import ClusterState


class AppHost(Protocol):
    state: ClusterState
    source: ClusterSource
    render_job: Any
    banner: tuple[str, str]
    sticky_banner: tuple[str, str]
    packing_live: PackingConfig | None
    packing_where: str
    packing_label: str
    extender_url: str | None
    extender_token_file: str | None

    @property
    def stopping(self) -> threading.Event:
        """Set when kubeview is quitting: workers that loop end."""

    def jump(self, target: str) -> None: ...
    def yield_to_ui(self) -> None: ...
    def post_message(self, message: Message) -> bool: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...
    def set_packing_live(self, config: PackingConfig) -> None: ...
    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> None: ...
    def job_action(self, namespace: str, name: str, *, parallelism: int | None = None,
                   suspend: bool | None = None) -> None: ...
    def preempt(self, node: str) -> None: ...
    def apply_packing(self, config: PackingConfig) -> None: ...
