"""What the user can do to the cluster, each in a worker thread: scale a workload, apply packing.

Each action ends with an `ActionDone` message (the one-line result, or the API's refusal) and never
blocks the UI. Packing goes to the embedded scheduler (local sources have `set_packing`) or to the
extender's `/config` (`--extender URL`); the header's `packing_label` says which one is live.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work

from kubeview.cluster.extender_client import ExtenderClient
from kubeview.cluster.source import ActionError
from kubeview.scheduling.config import PackingConfig
from kubeview.tui.messages import ActionDone

if TYPE_CHECKING:
    from kubeview.tui.host import AppHost


class ActionsMixin:
    """Scaling and packing for `KubeviewApp` (kept out of app.py so that stays small)."""

    def init_packing(self: AppHost) -> None:
        live = getattr(self.source, "packing", None)
        if isinstance(live, PackingConfig) and hasattr(self.source, "set_packing"):
            self.packing_where = "embedded scheduler"
            self.set_packing_live(live)
        elif self.extender_url:
            self.packing_where = f"extender {self.extender_url}"
            self.packing_label = f"? · {self.packing_where}"
        else:
            self.packing_where = ""
            self.packing_label = "not managed here (start with --extender URL)"

    def set_packing_live(self: AppHost, config: PackingConfig) -> None:
        self.packing_live = config
        self.packing_label = f"{config.policy} · {self.packing_where}"

    def _extender(self: AppHost) -> ExtenderClient:
        return ExtenderClient.from_options(self.extender_url or "", self.extender_token_file)

    @work(thread=True, group="actions", exit_on_error=False, name="reading the extender's config")
    def fetch_packing(self: AppHost) -> None:
        try:
            config = self._extender().get_config()
        except ActionError as exc:
            self.post_message(ActionDone(str(exc), ok=False))
            return
        self.call_from_thread(self.set_packing_live, config)

    @work(thread=True, group="actions", exit_on_error=False, name="scaling")
    def scale(self: AppHost, kind: str, namespace: str, name: str, replicas: int) -> None:
        """`source.scale` in a thread; the result or refusal comes back as one line."""
        try:
            text = self.source.scale(kind, namespace, name, replicas)
        except ActionError as exc:
            self.post_message(ActionDone(str(exc), ok=False))
        except Exception as exc:  # a bug or an unexpected error: one line, not a traceback
            self.post_message(ActionDone(f"scaling {kind} {namespace}/{name} failed: {exc}", ok=False))
        else:
            self.post_message(ActionDone(text or f"{kind} {namespace}/{name} scaled to {replicas}."))

    @work(thread=True, group="actions", exit_on_error=False, name="changing a Job")
    def job_action(self: AppHost, namespace: str, name: str, *, parallelism: int | None = None,
                   suspend: bool | None = None) -> None:
        """`source.set_parallelism` or `source.suspend_job` in a thread; one line back."""
        source: Any = self.source
        try:
            if parallelism is not None:
                text = source.set_parallelism(namespace, name, parallelism)
            else:
                text = source.suspend_job(namespace, name, bool(suspend))
        except ActionError as exc:
            self.post_message(ActionDone(str(exc), ok=False))
        except AttributeError:
            self.post_message(ActionDone("this cluster source cannot change Jobs.", ok=False))
        except Exception as exc:  # a bug or an unexpected error: one line, not a traceback
            self.post_message(ActionDone(f"changing Job {namespace}/{name} failed: {exc}", ok=False))
        else:
            self.post_message(ActionDone(text))

    @work(thread=True, group="actions", exit_on_error=False, name="preempting a node")
    def preempt(self: AppHost, node: str) -> None:
        """The embedded cluster's `preempt_node` in a thread; one line back."""
        source: Any = self.source
        try:
            text = source.preempt_node(node)
        except ActionError as exc:
            self.post_message(ActionDone(str(exc), ok=False))
        except Exception as exc:  # a bug or an unexpected error: one line, not a traceback
            self.post_message(ActionDone(f"preempting node {node} failed: {exc}", ok=False))
        else:
            self.post_message(ActionDone(text))

    @work(thread=True, group="actions", exit_on_error=False, name="applying packing")
    def apply_packing(self: AppHost, config: PackingConfig) -> None:
        """Make `config` live: on the embedded scheduler, else on the extender."""
        source: Any = self.source
        try:
            if self.packing_where == "embedded scheduler":
                text = source.set_packing(config)
                live = source.packing if isinstance(getattr(source, "packing", None), PackingConfig) else config
            elif self.extender_url:
                live = self._extender().put_config(config)
                text = f"packing policy {live.policy} is live on the extender {self.extender_url}."
            else:
                raise ActionError("no scheduler to send the policy to: start kubeview with --extender URL.")
        except ActionError as exc:
            self.post_message(ActionDone(str(exc), ok=False))
            return
        except ValueError as exc:
            self.post_message(ActionDone(f"the policy was refused: {exc}", ok=False))
            return
        self.call_from_thread(self.set_packing_live, live)
        self.post_message(ActionDone(text or f"packing policy {live.policy} is live."))
