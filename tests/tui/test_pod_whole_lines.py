"""The whole pod's lines on the pod screen (rows/pod_whole.py): what `kubectl describe pod` shows that
the model does not keep, from the pod's JSON."""

from __future__ import annotations

from kubeview.tui.rows.pod_whole import MAX_LABELS, whole_pod_lines

POD = {
    "metadata": {"name": "p", "labels": {f"k{i:02d}": str(i) for i in range(MAX_LABELS + 3)}},
    "spec": {"schedulerName": "kubeview-scheduler", "nodeSelector": {"gpu": "a100"},
             "tolerations": [{"operator": "Exists"},
                             {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                             {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                              "tolerationSeconds": 300},
                             {"key": "team", "value": "vision", "effect": "NoSchedule"}],
             "initContainers": [{"name": "fetch", "image": "busybox:1.36"}],
             "containers": [{"name": "main", "image": "trainer:v3", "ports": [{"containerPort": 8000}]}]},
    "status": {"podIP": "10.0.0.7", "qosClass": "Burstable",
               "initContainerStatuses": [{"name": "fetch", "ready": False, "restartCount": 0,
                                          "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}],
               "containerStatuses": [{"name": "main", "ready": False, "restartCount": 4,
                                      "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
}


def test_every_part_describe_shows() -> None:
    text = "\n".join(whole_pod_lines(POD))
    assert "[b]IP[/b]  10.0.0.7" in text and "[b]QoS Class[/b]  Burstable" in text
    assert "[b]Scheduler[/b]  kubeview-scheduler" in text
    assert "k00=0" in text and f"k{MAX_LABELS - 1:02d}" in text and f"k{MAX_LABELS:02d}=" not in text
    assert "… 3 more" in text
    assert "gpu=a100" in text
    assert "<all keys>" in text and "nvidia.com/gpu:NoSchedule" in text
    assert "node.kubernetes.io/not-ready:NoExecute for 300s" in text and "team=vision:NoSchedule" in text
    assert "[b]fetch[/b]  busybox:1.36" in text and "Terminated (Completed, exit 0), not ready, restarts 0" in text
    assert "Waiting (CrashLoopBackOff), not ready, restarts 4" in text and "ports 8000/TCP" in text
    assert text.index("Init Containers") < text.index("[b]Containers[/b]")


def test_a_bare_pod_gives_only_its_containers() -> None:
    assert whole_pod_lines({"spec": {"containers": [{"name": "c", "image": "x"}]}}) == [
        "", "[b]Containers[/b]", "  [b]c[/b]  x"]
    assert whole_pod_lines({}) == []
