"""What the user can do to the cluster, each in a worker thread: scale a workload, apply packing.

Each action ends with an `ActionDone` message (the one-line result, or the API's refusal) and never
blocks the UI. Packing goes to the embedded scheduler (a source that `RunsPacking`), to the
extender's `/config` (`--extender URL`), or with `--native-scheduler` into the second scheduler's
native profile, which restarts it (cluster/kube/native_scheduler.py); the header's `packing_label`
says which one is live. What a
source can do is read from its declared capabilities (cluster/source.py), never probed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work

from kubeview.cluster.extender_client import TIMEOUT, ExtenderClient
from kubeview.cluster.source import ActionError, EditsJobs, Preempts, RunsPacking, Scales, TalksToKube
from kubeview.scheduling.config import PackingConfig
from kubeview.tui.messages import ActionDone

if TYPE_CHECKING:
    from textual.message import Message

    from kubeview.tui.host import AppHost


def report_action(post: Callable[[Message], object], act: Callable[[], str | None], done: str = "",
                  failed: str | None = None) -> None:
    """Run `act` (in a worker thread) and post its outcome as one `ActionDone` line: its result (or
    `done` when it said nothing), the refusal of an ActionError, else `failed: the error` (a bug or an
    unexpected error: one line, not a traceback), or the error's own words when `failed` is None."""
    try:
        text = act()
    except ActionError as exc:
        post(ActionDone(str(exc), ok=False))
    except Exception as exc:
        post(ActionDone(str(exc) if failed is None else f"{failed}: {exc}", ok=False))
    else:
        post(ActionDone(text or done))


def _extender(host: AppHost) -> ExtenderClient:
    return ExtenderClient.from_options(host.extender_url or "", host.extender_token_file)


def _kube(host: AppHost) -> TalksToKube:
    """The real API server the native profile lives on; ActionError where there is none."""
    if not isinstance(host.source, TalksToKube):
        raise ActionError("--native-scheduler needs a real cluster (a kubeconfig), not this source.")
    return host.source


def _read_packing(host: AppHost) -> PackingConfig:
    if host.native_scheduler:
        from kubeview.cluster.kube.native_scheduler import read_native

        kube = _kube(host)
        return read_native(kube.api_client, kube.server, TIMEOUT)
    return _extender(host).get_config()


class ActionsMixin:
    """Scaling and packing for `KubeviewApp` (kept out of app.py so that stays small)."""

    # what the packing methods set (on `KubeviewApp`: reactives the header watches)
    packing_live: PackingConfig | None
    packing_where: str
    packing_label: str

    def init_packing(self: AppHost) -> None:
        if isinstance(self.source, RunsPacking):
            self.packing_where = "embedded scheduler"
            self.set_packing_live(self.source.packing)
        elif self.native_scheduler:
            self.packing_where = "native profile, kubeview-scheduler"
            self.packing_label = f"? · {self.packing_where}"
        elif self.extender_url:
            self.packing_where = f"extender {self.extender_url}"
            self.packing_label = f"? · {self.packing_where}"
        else:
            self.packing_where = ""
            self.packing_label = "not managed here (start with --extender URL or --native-scheduler)"

    def set_packing_live(self: AppHost, config: PackingConfig) -> None:
        self.packing_live = config
        self.packing_label = f"{config.policy} · {self.packing_where}"

    @work(thread=True, group="actions", exit_on_error=False, name="reading the packing config")
    def fetch_packing(self: AppHost) -> None:
        try:
            config = _read_packing(self)
        except ActionError as exc:
            self.post_message(ActionDone(str(exc), ok=False))
            return
        self.call_from_thread(self.set_packing_live, config)

    @work(thread=True, group="actions", exit_on_error=False, name="scaling")
    def scale(self: AppHost, kind: str, namespace: str, name: str, replicas: int) -> None:
        """`source.scale` in a thread; the result or refusal comes back as one line."""
        source = self.source
        if not isinstance(source, Scales):
            self.post_message(ActionDone("this cluster source cannot scale workloads.", ok=False))
            return
        report_action(self.post_message, lambda: source.scale(kind, namespace, name, replicas),
                      f"{kind} {namespace}/{name} scaled to {replicas}.", f"scaling {kind} {namespace}/{name} failed")

    @work(thread=True, group="actions", exit_on_error=False, name="changing a Job")
    def job_action(self: AppHost, namespace: str, name: str, *, parallelism: int | None = None,
                   suspend: bool | None = None) -> None:
        """`source.set_parallelism` or `source.suspend_job` in a thread; one line back."""
        source = self.source
        if not isinstance(source, EditsJobs):
            self.post_message(ActionDone("this cluster source cannot change Jobs.", ok=False))
            return
        report_action(self.post_message,
                      lambda: source.set_parallelism(namespace, name, parallelism) if parallelism is not None
                      else source.suspend_job(namespace, name, bool(suspend)),
                      failed=f"changing Job {namespace}/{name} failed")

    @work(thread=True, group="actions", exit_on_error=False, name="preempting a node")
    def preempt(self: AppHost, node: str) -> None:
        """The embedded cluster's `preempt_node` in a thread; one line back."""
        source = self.source
        if not isinstance(source, Preempts):
            self.post_message(ActionDone("this cluster source cannot preempt nodes.", ok=False))
            return
        report_action(self.post_message, lambda: source.preempt_node(node), failed=f"preempting node {node} failed")

    @work(thread=True, group="actions", exit_on_error=False, name="applying packing")
    def apply_packing(self: AppHost, config: PackingConfig) -> None:
        """Make `config` live: on the embedded scheduler, else on the extender."""
        source = self.source
        try:
            if isinstance(source, RunsPacking):
                text = source.set_packing(config)
                live = source.packing
            elif self.native_scheduler:
                from kubeview.cluster.kube.native_scheduler import apply_native

                kube = _kube(self)
                text, live = apply_native(kube.api_client, kube.server, TIMEOUT, config), config
            elif self.extender_url:
                live = _extender(self).put_config(config)
                text = f"packing policy {live.policy} is live on the extender {self.extender_url}."
            else:
                raise ActionError("no scheduler to send the policy to: start kubeview with --extender URL "
                                  "or --native-scheduler.")
        except ActionError as exc:
            self.post_message(ActionDone(str(exc), ok=False))
            return
        except ValueError as exc:
            self.post_message(ActionDone(f"the policy was refused: {exc}", ok=False))
            return
        self.call_from_thread(self.set_packing_live, live)
        self.post_message(ActionDone(text or f"packing policy {live.policy} is live."))
