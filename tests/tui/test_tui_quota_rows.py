"""The Quota screen's rows and panels, pure: which key each column shows, the note, the words of a
namespace, from ResourceQuota objects and FailedCreate Events applied to a ClusterModel."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.tui.rows import quota as rows
from kubeview.tui.rows.quota_panel import detail, panel

GPU = "requests.nvidia.com/gpu"


def quota(ns: str, name: str, hard: dict, used: dict, **spec: object) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "uid": f"{ns}-{name}", "resourceVersion": "1"},
            "spec": {"hard": hard, **spec}, "status": {"hard": hard, "used": used}}


def pod(ns: str, name: str, requests: dict) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "uid": name, "resourceVersion": "1"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
            "status": {"phase": "Pending"}}


def held_event(ns: str) -> tuple[dict, dict]:
    job = {"metadata": {"name": "sweep", "namespace": ns, "uid": "job-1", "resourceVersion": "1"},
           "spec": {"parallelism": 2, "completions": 2}, "status": {}}
    event = {"metadata": {"name": "sweep.1", "namespace": ns, "uid": "ev-1", "resourceVersion": "1"},
             "involvedObject": {"kind": "Job", "namespace": ns, "name": "sweep", "uid": "job-1"},
             "reason": "FailedCreate", "type": "Warning", "count": 2, "source": {"component": "job-controller"},
             "firstTimestamp": "2026-11-29T10:00:00Z", "lastTimestamp": "2026-11-29T10:00:05Z",
             "message": f'Error creating: pods "sweep-abcde" is forbidden: exceeded quota: gpus, requested: {GPU}=1, '
                        f"used: {GPU}=2, limited: {GPU}=2"}
    return job, event


def model() -> ClusterModel:
    m = ClusterModel("test")
    job, event = held_event("team-a")
    m.apply(Listed("Pod", [pod("team-a", "a", {"cpu": "1", "nvidia.com/gpu": "2"}),
                           pod("team-b", "b", {"cpu": "500m", "memory": "1Gi"})], "1"))
    m.apply(Listed("Job", [job], "1"))
    m.apply(Listed("Event", [event], "1"))
    m.apply(Listed("ResourceQuota", [
        quota("team-a", "gpus", {GPU: "2", "limits.cpu": "8"}, {GPU: "2", "limits.cpu": "0"}),
        quota("team-a", "compute", {"requests.cpu": "4", "requests.memory": "8Gi"},
              {"requests.cpu": "1", "requests.memory": "0"}),
        quota("team-b", "compute", {"cpu": "2", "memory": "4Gi", "pods": "10"},
              {"cpu": "1", "memory": "1Gi", "pods": "1"})], "1"))  # cpu: kubeview counts 500m
    return m


def build(m: ClusterModel) -> rows.QuotaRows:
    return rows.build(m.quotas.quotas(), m.quota_uses(), m.held())


def test_each_column_shows_the_namespaces_tightest_key_requests_first() -> None:
    assert [rows.kind_of(k) for k in (GPU, "gpu.deviceclass.resource.k8s.io/devices", "limits.cpu", "cpu",
                                      "requests.memory", "pods", "count/jobs.batch")] == [
        "gpu", "gpu", "cpu", "cpu", "memory", None, None]
    data = build(model())
    a = data.namespaces["team-a"]
    assert {k: (q, u.key) for k, (q, u) in a.tightest.items()} == {
        "gpu": ("gpus", GPU), "cpu": ("compute", "requests.cpu"), "memory": ("compute", "requests.memory")}
    assert rows.order(data) == ["team-a", "team-b"]  # holding workloads back first
    assert rows.order(data, "team-b") == ["team-b"] and rows.order(data, "sweep") == ["team-a"]


def test_cells_say_the_hold_and_where_kubeview_counts_otherwise() -> None:
    data = build(model())
    cells = [c if isinstance(c, str) else c.plain for c in rows.cells(data, "team-a", {"gpu": 15})]
    assert cells[:2] == ["team-a", "compute, gpus"] and cells[2] == "██████████ 2/2" and cells[5] == "1"
    assert cells[6] == f"Job sweep held by quota gpus: {GPU} 2/2 — 2 pods not created"
    b = [c if isinstance(c, str) else c.plain for c in rows.cells(data, "team-b", {"cpu": 5})]
    assert b[2] == "-" and b[3] == "1/2"  # too narrow for a bar: the figure whole
    assert b[6] == "kubeview counts cpu 500m, compute's status says 1"


def test_the_panel_and_the_namespace_say_it_in_words() -> None:
    data = build(model())
    lines = panel(data.namespaces["team-a"])
    assert lines[0] == "[b]team-a[/b] quota [b]compute[/b]: requests.cpu 1/4 · requests.memory 0/8Gi"
    assert lines[1] == f"[b]team-a[/b] quota [b]gpus[/b]: limits.cpu 0/8 · [bold red]{GPU} 2/2 (full)[/bold red]"
    assert lines[-2] == f"[yellow]Job sweep[/yellow]: held by quota gpus: {GPU} 2/2 — 2 pods not created"
    assert lines[-1] == "[dim]  from job-controller's FailedCreate Events (x2) and the Job's status[/dim]"
    b = panel(data.namespaces["team-b"])
    assert "cpu 1/2 [cyan](kubeview counts 500m)[/cyan]" in b[0] and b[-1].endswith("held by its quota[/dim]")
    text = detail("team-a", data.namespaces["team-a"], now=0.0)
    assert "the API server said (" in text and ", 2 times): Error creating: pods \"sweep-abcde\" is forbidden" in text
    assert detail("gone", None).endswith("no quota here any more[/dim]")
