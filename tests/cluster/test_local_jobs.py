"""The embedded cluster's Job controller with real processes: an Indexed Job survives a preempted node
(every index succeeds exactly once, the disrupted pods carry DisruptionTarget, `succeeded` never goes
down), per-index backoff, backoffLimit, suspend/resume and parallelism."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.source import ActionError
from kubeview.model.events import WatchEvent

IGNORE_DISRUPTION = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}


def job(name: str, command: str, *, completions: int | None, parallelism: int, indexed: bool = True,
        **spec: object) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "batch"},
            "spec": {"completions": completions, "parallelism": parallelism,
                     **({"completionMode": "Indexed"} if indexed else {}), **spec,
                     "template": {"spec": {"restartPolicy": "Never", "containers": [{
                         "name": "worker", "image": "busybox:1.36", "command": ["sh", "-c", command],
                         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}}


class Watched:
    """A LocalSource and every Job status its watch delivered (a subscriber like the TUI)."""

    def __init__(self, seed: int) -> None:
        self.source = LocalSource(seed=seed)
        self.succeeded: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self.source.run, args=(self._emit, self._stop), daemon=True)
        self._thread.start()

    def _emit(self, event: object) -> None:
        if isinstance(event, WatchEvent) and event.kind == "Job":
            self.succeeded.append(int((event.obj.get("status") or {}).get("succeeded") or 0))

    def status(self, name: str) -> dict:
        return (self.source.get("Job", "batch", name) or {}).get("status") or {}

    def wait(self, predicate, timeout: float = 30.0, what: str = "") -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.02)

    def done(self, name: str) -> str | None:
        for c in self.status(name).get("conditions") or []:
            if c["type"] in ("Complete", "Failed") and c["status"] == "True":
                return c["type"]
        return None

    def pods(self, name: str) -> list[dict]:
        return [p for p in self.source.pods("batch")
                if (p["metadata"].get("labels") or {}).get("batch.kubernetes.io/job-name") == name]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.source.close()


@pytest.fixture
def cluster(request: pytest.FixtureRequest):  # noqa: ANN201
    c = Watched(getattr(request, "param", 1))
    yield c
    c.close()


@pytest.mark.parametrize("cluster", [1, 2, 3], indirect=True)
def test_an_indexed_job_survives_a_preempted_node(cluster: Watched, tmp_path: Path) -> None:
    n = 16
    log = tmp_path / "done.log"
    cluster.source.apply_workload(job("items", f"sleep 0.6; echo $JOB_COMPLETION_INDEX >> {log}", completions=n,
                                      parallelism=6, backoffLimitPerIndex=1, podFailurePolicy=IGNORE_DISRUPTION))
    first = cluster.status("items")  # as job-01-pods-bound: no completedIndexes yet, failedIndexes ""
    assert (first["active"], first["failedIndexes"], "completedIndexes" in first, first["terminating"]) == (
        6, "", False, 0)
    # mid-way: some indexes done, pods running; preempt the node running most of them
    running: list[dict] = []

    def mid_way() -> bool:  # read once per poll: the pods seen running are the ones the node is chosen by
        running[:] = [p for p in cluster.pods("items") if p["status"].get("phase") == "Running"]
        return int(cluster.status("items").get("succeeded") or 0) >= 3 and len(running) >= 2

    cluster.wait(mid_way, what="mid-way")
    nodes = [p["spec"]["nodeName"] for p in running]
    node = max(set(nodes), key=nodes.count)
    before = int(cluster.status("items").get("succeeded") or 0)
    assert before < n
    cluster.source.preempt_node(node)
    assert cluster.source.get("Node", "", node) is None
    cluster.wait(lambda: cluster.done("items") is not None, what="the Job to finish")

    status = cluster.status("items")
    assert cluster.done("items") == "Complete"
    assert (status["succeeded"], status["completedIndexes"], status["failedIndexes"]) == (n, f"0-{n - 1}", "")
    assert "failed" not in status  # the Ignore rule: disruptions are not failures
    pods = cluster.pods("items")
    winners = sorted(int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"])
                     for p in pods if p["status"]["phase"] == "Succeeded")
    assert winners == list(range(n))  # every index succeeded exactly once
    assert set(map(int, log.read_text().split())) == set(range(n))
    disrupted = [p for p in pods if p["status"]["phase"] == "Failed"]
    assert disrupted and all(p["spec"]["nodeName"] == node for p in disrupted)
    for p in disrupted:
        (cond,) = [c for c in p["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        assert (cond["status"], cond["reason"]) == ("True", "TerminationByKubelet")
        i = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        retry = [q for q in pods if q["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == i
                 and q["status"]["phase"] == "Succeeded"]
        assert retry and int(retry[0]["metadata"]["annotations"]["batch.kubernetes.io/job-index-ignored-failure-count"]) >= 1
    # the model kubeview shows follows: the strip is all succeeded, the disrupted pods are listed
    cluster.wait(lambda: cluster.succeeded and cluster.succeeded[-1] == n, what="the watch to catch up")
    assert cluster.succeeded == sorted(cluster.succeeded)  # never went down
    model = cluster.source.model()
    from kubeview.model.jobs.progress import disrupted_pods, index_strip, strip_text

    view = model.jobs.jobs[("batch", "items")]
    history = model.jobs.history_of("batch", "items")
    assert strip_text(index_strip(view, history)) == "S" * n
    assert {d.outcome for d in disrupted_pods(view, history)} == {"succeeded later"}


def test_an_index_that_fails_past_its_limit_fails_the_job_at_the_end(cluster: Watched) -> None:
    cluster.source.apply_workload(job("days", '[ "$JOB_COMPLETION_INDEX" != 2 ]', completions=5, parallelism=2,
                                      backoffLimitPerIndex=1))
    cluster.wait(lambda: cluster.done("days") is not None, what="the Job to finish")
    status = cluster.status("days")
    assert cluster.done("days") == "Failed"
    assert (status["succeeded"], status["failed"], status["completedIndexes"], status["failedIndexes"]) == (
        4, 2, "0,1,3,4", "2")
    failed = [c for c in status["conditions"] if c["type"] in ("FailureTarget", "Failed")]
    assert [(c["type"], c["reason"]) for c in failed] == [("FailureTarget", "FailedIndexes"), ("Failed", "FailedIndexes")]
    tries = sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"]
                   for p in cluster.pods("days") if p["metadata"]["annotations"][
                       "batch.kubernetes.io/job-completion-index"] == "2")
    assert tries == ["0", "1"]  # retried once, as backoffLimitPerIndex 1 allows, then no more


def test_nonindexed_backoff_limit_and_a_preemption_that_counts(cluster: Watched) -> None:
    cluster.source.apply_workload(job("flaky", "exit 1", completions=3, parallelism=1, indexed=False, backoffLimit=2))
    cluster.wait(lambda: cluster.done("flaky") is not None, what="the Job to fail")
    status = cluster.status("flaky")
    assert cluster.done("flaky") == "Failed" and status["failed"] == 3
    assert [c["reason"] for c in status["conditions"] if c["type"] == "Failed"] == ["BackoffLimitExceeded"]
    # no podFailurePolicy: a preempted pod counts against backoffLimit and is replaced
    cluster.source.apply_workload(job("once", "sleep 0.6", completions=1, parallelism=1, indexed=False))
    cluster.wait(lambda: any(p["status"].get("phase") == "Running" for p in cluster.pods("once")), what="running")
    node = cluster.pods("once")[0]["spec"]["nodeName"]
    cluster.source.preempt_node(node)
    cluster.wait(lambda: cluster.done("once") is not None, what="the Job to complete")
    status = cluster.status("once")
    assert (cluster.done("once"), status["succeeded"], status["failed"]) == ("Complete", 1, 1)


def test_suspend_resume_and_parallelism(cluster: Watched) -> None:
    src = cluster.source
    src.apply_workload(job("tunable", "sleep 30", completions=6, parallelism=2, indexed=False))
    cluster.wait(lambda: cluster.status("tunable").get("active") == 2, what="2 active")
    assert src.set_parallelism("batch", "tunable", 4) == "Job batch/tunable parallelism set to 4."
    assert cluster.status("tunable")["active"] == 4
    src.set_parallelism("batch", "tunable", 1)
    assert cluster.status("tunable")["active"] == 1
    assert src.suspend_job("batch", "tunable", True) == "Job batch/tunable suspended."
    status = cluster.status("tunable")
    assert "active" not in status and "startTime" not in status and "failed" not in status
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("Suspended", "True", "JobSuspended")]
    cluster.wait(lambda: not [p for p in cluster.pods("tunable") if p["status"].get("phase") != "Failed"],
                 what="the pods to go")
    src.suspend_job("batch", "tunable", False)
    status = cluster.status("tunable")
    assert status["active"] == 1 and "startTime" in status and "failed" not in status
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [("Suspended", "False", "JobResumed")]
    with pytest.raises(ActionError, match="parallelism must be 0 or more"):
        src.set_parallelism("batch", "tunable", -1)
    with pytest.raises(ActionError, match="not found"):
        src.suspend_job("batch", "nope", True)
    with pytest.raises(ActionError, match="restartPolicy"):
        bad = job("bad", "true", completions=1, parallelism=1)
        bad["spec"]["template"]["spec"]["restartPolicy"] = "Always"
        src.apply_workload(bad)


def test_kubeview_preempt_runs_the_demo_job_across_a_preempted_node(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from kubeview import cli

    assert cli.main(["preempt", "gpu-node-1", "--items", "60", "--after", "0.3", "--json"]) == 0
    captured = capsys.readouterr()
    # with --json, stdout is the document alone; the progress lines go to stderr (#24 item 9)
    assert "succeeded: node gpu-node-1 preempted:" in captured.err  # one line per second, and the preemption
    out = json.loads(captured.out)
    assert (out["state"], out["items"], out["succeededOnce"], out["missing"], out["twice"]) == (
        "Complete", 60, 60, "", "")
    assert out["disrupted"] and {d["reason"] for d in out["disrupted"]} == {"TerminationByKubelet"}
    assert {d["node"] for d in out["disrupted"]} == {"gpu-node-1"}
    assert {d["outcome"] for d in out["disrupted"]} == {"succeeded later"}
