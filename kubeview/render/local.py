"""A render on the local cluster: the producer as a Deployment, the consumers as a ReplicaSet.

Both the headless `kubeview --render` and the TUI drive a `LocalRenderJob`: `start()` checks the
scene and creates the workloads, `poll()` reads the producer's /status and the pods' state (one HTTP
request, short timeout, safe to call from a worker thread), `scale()` changes the consumer count,
`stop()` deletes everything it created. The pods are real processes run by the local cluster's
kubelet, so a consumer that dies is restarted and its task is leased again by the producer. The
producer checkpoints into a private work directory, so a producer that dies is restarted from its
checkpoint, and `poll()` says so (`producer_deaths.py`). Producer and consumers share a random token
there: another local process cannot feed the render made-up results.
"""

from __future__ import annotations

import http.client
import secrets
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.source import ActionError
from kubeview.model.quantity import QuantityError, to_units
from kubeview.render.pod_state import pod_phase as _phase
from kubeview.render.pod_state import pod_restarts
from kubeview.render.pod_state import pod_running as _running
from kubeview.render.producer_deaths import DeathWatch
from kubeview.render.status import RenderStatus, StatusError, parse_status

NAMESPACE = "render"
PRODUCER = "producer"
CONSUMER = "consumer"
PRODUCER_CPU = "50m"  # small: leaves the 7 x 1000m consumers per CPU node of the default cluster
CONSUMER_GRACE = 10  # seconds between SIGTERM (hand back the task) and SIGKILL
HOST = "127.0.0.1"
EXIT_USAGE = 2  # the renderer's exit code for bad input (scene, address, token file)
EXIT_OUTPUT = 3  # the producer's exit code when the image could not be written where asked (kept elsewhere)
CHECKPOINT = "checkpoint.npz"  # in the job's work directory
TOKEN = "token"  # ditto: the shared secret producer and consumers present


class RenderError(Exception):
    """The render cannot go on; the message is one sentence for the user.

    `exit_code` 2 means bad input (a scene the renderer rejects), 1 anything else.
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True, slots=True)
class RenderSettings:
    scene: Path
    output: Path
    raw: Path | None = None
    replicas: int = 1
    cpu: str = "1000m"
    namespace: str = NAMESPACE
    job_args: tuple[str, ...] = ()  # --width/--height/--spp for the producer (SceneChoice.producer_args)


@dataclass(frozen=True, slots=True)
class RenderProgress:
    """One look at the job: the producer's status (None until it answers) and the consumer pods."""

    status: RenderStatus | None
    running: int  # consumer pods Running
    pending: int  # consumer pods not yet bound or started
    restarts: int  # restarts of consumer pods, summed
    pending_reason: str | None  # the scheduler's message for a pending consumer
    producer_phase: str  # Pending | Running | Failed | Succeeded | Missing
    waiting: tuple[str, ...] = ()  # "pod: why it is not running yet", for each render pod not running
    notices: tuple[str, ...] = ()  # what happened to the producer since the last poll (died, resumed at N%)
    producer_deaths: int = 0

    @property
    def finished(self) -> bool:
        return self.status is not None and self.status.finished


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def resolve_scene(arg: str, validate: bool = True) -> Path:
    """A scene path or bundled name; raises RenderError naming the file (and the field, if validated).

    `validate=False` only checks that the file exists: the producer validates the scene anyway and
    exits 2 with the same one line (`poll` reports it), which keeps a BVH build off the start-up path.
    """
    from renderer.scene import SceneError, load, resolve

    path = resolve(arg)
    if not path.is_file():
        raise RenderError(f"{arg}: no such scene file or bundled scene", exit_code=2)
    if validate:
        try:
            load(path)
        except SceneError as exc:
            raise RenderError(str(exc), exit_code=2) from None
    return path.resolve()


def producer_deployment(settings: RenderSettings, listen: int, status: int, workdir: Path | None = None) -> dict:
    """`workdir` holds the checkpoint and the token file (see `LocalRenderJob.start`)."""
    argv = ["python", "-m", "renderer", "producer", str(settings.scene), "--listen", f"{HOST}:{listen}",
            "--status", f"{HOST}:{status}", "-o", str(settings.output), "--serve-after-done", *settings.job_args]
    if workdir is not None:
        argv += ["--checkpoint", str(workdir / CHECKPOINT), "--token-file", str(workdir / TOKEN)]
    if settings.raw is not None:
        argv += ["--raw", str(settings.raw)]
    labels = {"app": PRODUCER}
    return {"kind": "Deployment",
            "metadata": {"name": PRODUCER, "namespace": settings.namespace, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "terminationGracePeriodSeconds": 5,
                         "containers": [{"name": PRODUCER, "image": "kubeview/renderer", "command": argv,
                                         "ports": [{"containerPort": listen, "name": "tasks"},
                                                   {"containerPort": status, "name": "status"}],
                                         "resources": {"requests": {"cpu": PRODUCER_CPU}}}]}}}}


def consumer_replicaset(settings: RenderSettings, listen: int, workdir: Path | None = None) -> dict:
    labels = {"app": CONSUMER}
    token = ["--token-file", str(workdir / TOKEN)] if workdir is not None else []
    return {"kind": "ReplicaSet",
            "metadata": {"name": CONSUMER, "namespace": settings.namespace, "labels": labels},
            "spec": {"replicas": settings.replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         # A consumer exits 0 when the job is done: that pod Succeeded, it did not crash.
                         # (A real cluster would run consumers as a Job; the local one honours OnFailure.)
                         "restartPolicy": "OnFailure",
                         "terminationGracePeriodSeconds": CONSUMER_GRACE,
                         "containers": [{"name": CONSUMER, "image": "kubeview/renderer",
                                         "command": ["python", "-m", "renderer", "consumer"],
                                         # the producer's status then names each consumer by its pod
                                         "args": ["--connect", f"{HOST}:{listen}", "--name", "$(POD_NAME)", *token],
                                         "env": [{"name": "POD_NAME", "valueFrom": {
                                             "fieldRef": {"fieldPath": "metadata.name"}}}],
                                         "resources": {"requests": {"cpu": settings.cpu}}}]}}}}


def _last_terminated(pod: dict) -> dict | None:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        return (cs.get("lastState") or {}).get("terminated") or (cs.get("state") or {}).get("terminated")
    return None


def _unschedulable(pod: dict) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message") or "Unschedulable"
    return None


class LocalRenderJob:
    """One render on a `LocalSource`; see the module docstring."""

    def __init__(self, source: LocalSource, settings: RenderSettings) -> None:
        self.source = source
        self.settings = settings
        self.listen_port = 0
        self.status_port = 0
        self.started = False
        self._last_status: RenderStatus | None = None
        self._consumers_released = False
        self.workdir: Path | None = None
        self.deaths = DeathWatch()

    # --- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        s = self.settings
        if s.replicas < 0:
            raise RenderError(f"--replicas must be 0 or more, not {s.replicas}", exit_code=2)
        try:
            if to_units("cpu", s.cpu) <= 0:
                raise QuantityError
        except QuantityError:
            raise RenderError(f"--cpu {s.cpu!r} is not a cpu amount (examples: 1000m, 0.5, 2)", exit_code=2) from None
        for path in (s.output, s.raw):
            if path is not None and not path.parent.is_dir():
                raise RenderError(f"{path}: directory {str(path.parent)!r} does not exist", exit_code=2)
        self.listen_port = free_port()
        self.status_port = free_port()
        while self.status_port == self.listen_port:
            self.status_port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="kubeview-render-"))  # 0700: the token stays ours
        (self.workdir / TOKEN).write_text(secrets.token_hex(32))
        self.deaths = DeathWatch(checkpoint=str(self.workdir / CHECKPOINT))
        self.started = True  # from here on, stop() removes whatever exists
        try:
            self.source.apply_workload(producer_deployment(s, self.listen_port, self.status_port, self.workdir))
            self.source.apply_workload(consumer_replicaset(s, self.listen_port, self.workdir))
        except ActionError as exc:
            raise RenderError(str(exc)) from None
        pods = self.source.workload_pods("ReplicaSet", s.namespace, CONSUMER)
        if pods and all(_unschedulable(p) for p in pods):
            why = _unschedulable(pods[0]) or ""
            raise RenderError(f"no consumer fits on the cluster at cpu {s.cpu}: {why.rstrip('.')}"
                              f"{self._cpu_advice(pods[0])}")

    def _cpu_advice(self, pod: dict) -> str:
        """What to say after the scheduler's message: the --cpu that fits a node today (cpu_hint.py)."""
        from kubeview.render.cpu_hint import cpu_option, fitting_cpu

        millis = fitting_cpu(self.source.model().allocation(), pod)
        return f"; {cpu_option(millis)} would fit (the most cpu a node that takes consumers has free)." \
            if millis else "."

    def scale(self, replicas: int) -> str:
        try:
            return self.source.scale("ReplicaSet", self.settings.namespace, CONSUMER, replicas)
        except ActionError as exc:
            raise RenderError(str(exc)) from None

    def stop(self) -> None:
        """Delete the consumers and the producer (their processes get SIGTERM)."""
        if not self.started:
            return
        self.started = False
        for kind, name in (("ReplicaSet", CONSUMER), ("Deployment", PRODUCER)):
            if self.source.get(kind, self.settings.namespace, name) is not None:
                self.source.delete_workload(kind, self.settings.namespace, name)
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def pods_left(self) -> int:
        """Render pods still there (terminating ones too): the tuner waits for 0 between trials."""
        return len(self.source.pods(self.settings.namespace))

    # --- following ----------------------------------------------------------------------------------
    def _get(self, path: str, timeout: float = 2.0) -> bytes | None:
        conn = http.client.HTTPConnection(HOST, self.status_port, timeout=timeout)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            return body if resp.status == 200 else None
        except OSError:
            return None
        finally:
            conn.close()

    def poll(self) -> RenderProgress:
        """The job's state now; raises RenderError when the producer has failed for good."""
        ns = self.settings.namespace
        producer = self.source.workload_pods("Deployment", ns, PRODUCER)
        consumers = self.source.workload_pods("ReplicaSet", ns, CONSUMER)
        phase = _phase(producer[0]) if producer else "Missing"
        body = self._get("/status")
        status = fresh = None
        if body is not None:
            try:
                status = fresh = parse_status(body)
            except StatusError as exc:
                raise RenderError(str(exc)) from None
            self._last_status = status
        status = status or self._last_status
        notices: list[str] = []
        if producer:
            notices = self.deaths.observe(pod_restarts(producer[0]), _last_terminated(producer[0]), fresh)
            self._check_producer(producer[0])
        if status is not None and status.finished and not self._consumers_released:
            # Done: consumers exit 0 on their own; scale to 0 so the ReplicaSet does not replace them.
            self._consumers_released = True
            self.scale(0)
        running = sum(1 for p in consumers if _running(p))
        reasons = [r for r in map(_unschedulable, consumers) if r]
        return RenderProgress(status=status, running=running, pending=len(consumers) - running,
                              restarts=sum(pod_restarts(p) for p in consumers),
                              pending_reason=reasons[0] if reasons else None, producer_phase=phase,
                              notices=tuple(notices), producer_deaths=self.deaths.deaths)

    def _check_producer(self, pod: dict) -> None:
        """Raise RenderError if the producer rejected its input (exit 2), could not write the image
        (exit 3), or died again and again without the render getting further."""
        codes = [t.get("exitCode") for cs in (pod.get("status") or {}).get("containerStatuses") or []
                 for t in ((cs.get("state") or {}).get("terminated"), (cs.get("lastState") or {}).get("terminated"))
                 if t]
        give_up = self.deaths.give_up()
        if EXIT_USAGE not in codes and EXIT_OUTPUT not in codes and give_up is None:
            return
        tail = self.source.log_tail(self.settings.namespace, pod["metadata"]["name"], 1)
        line = tail[-1].removeprefix("renderer: ") if tail else ""
        if EXIT_USAGE in codes:
            raise RenderError(line or "the producer rejected the scene", exit_code=2)
        if EXIT_OUTPUT in codes:
            raise RenderError(line or f"the producer could not write {self.settings.output}")
        raise RenderError(f"{give_up}" + (f"; its last log line: {line}" if line else ""))

    def image_png(self) -> bytes | None:
        """The image so far (the final one when finished), or None if the producer does not answer."""
        return self._get("/image.png", timeout=10.0)
