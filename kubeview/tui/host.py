"""What screens, widgets' owners and the actions mixin may use of the app: a Protocol, so that they
reach `KubeviewApp` without importing `app.py` (which imports every screen; #26 cut that circle)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from textual.app import App
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
    native_scheduler: bool

    @property
    def stopping(self) -> threading.Event:
        """Set when kubeview is quitting: workers that loop end."""

    def jump(self, target: str) -> None: ...
    def yield_to_ui(self) -> None: ...
    def post_message(self, message: Message) -> bool: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...
    def set_packing_live(self, config: PackingConfig) -> None: ...
    # Actions run in workers: each returns its `Worker` (`object` here: callers do not wait on it).
    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> object: ...
    def job_action(self, namespace: str, name: str, *, parallelism: int | None = None,
                   suspend: bool | None = None) -> object: ...
    def preempt(self, node: str) -> object: ...
    def apply_packing(self, config: PackingConfig) -> object: ...


def host_of(app: App[Any]) -> AppHost:
    """The running app as screens and widgets see it. Textual types `self.app` as a plain `App`; the
    one app that runs them is `KubeviewApp`, which implements `AppHost` (checked by the type checker
    where `KubeviewApp` calls the actions mixin)."""
    return cast("AppHost", app)
