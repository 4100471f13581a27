"""`kubeview snapshot` as a user runs it: a subprocess, KUBECONFIG pointing at the test API server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from kubeapi import KubeAPI
from test_kube_source import other_namespace_pods

from kubeview.snapshot.document import SCHEMA_VERSION, SNAPSHOT_SCHEMA
from kubeview.snapshot.schema import validate


def kubeview(api: KubeAPI, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env["KUBECONFIG"] = str(api.kubeconfig)
    return subprocess.run([sys.executable, "-m", "kubeview", "snapshot", *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.mark.slow
def test_snapshot_json_against_the_test_server(kube_api: KubeAPI) -> None:
    out = kubeview(kube_api, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    assert doc["schemaVersion"] == SCHEMA_VERSION
    assert doc["cluster"]["title"] == f"kubeview-test @ {kube_api.url}"
    assert doc["cluster"]["synced"] == ["Deployment", "Event", "Job", "Node", "Pod", "ReplicaSet", "ResourceQuota",
                                       "StatefulSet", "ca.Status"]
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["gpu-node-1"]["resources"]["nvidia.com/gpu"]["requested"] == 1
    assert nodes["gpu-node-1"]["resources"]["nvidia.com/gpu"]["allocatable"] == 2
    assert [nodes[n]["resources"]["cpu"]["requested"] for n in sorted(nodes)] == [100] * 5
    assert [p["name"] for p in doc["pods"] if p["node"] is None] == ["gpu-c"]
    assert doc["fragmentation"]["sizes"][1] == {"size": 2, "placeable": 0, "ideal": 1, "stranded": 1,
                                                "fitsANode": True}
    assert kube_api.requests_to("/api/v1/pods", watch=False)


@pytest.mark.slow
def test_snapshot_tables_metrics_schema_and_errors(kube_api: KubeAPI) -> None:
    tables = kubeview(kube_api)
    assert tables.returncode == 0, tables.stderr
    assert "gpu-node-1" in tables.stdout and "nvidia.com/gpu" in tables.stdout and "50%" in tables.stdout
    assert "GPU fragmentation" in tables.stdout and "gpu-c" in tables.stdout
    # plain `kubeview` with its output piped: no TUI, the same tables
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    piped = subprocess.run([sys.executable, "-m", "kubeview"], capture_output=True, text=True, timeout=120,
                           env={**env, "KUBECONFIG": str(kube_api.kubeconfig)})
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == tables.stdout
    metrics = kubeview(kube_api, "--metrics")
    assert 'kube_node_status_allocatable{node="gpu-node-1",resource="nvidia_com_gpu",unit="integer"} 2' in \
        metrics.stdout.splitlines()
    schema = kubeview(kube_api, "--schema")
    assert json.loads(schema.stdout) == json.loads(json.dumps(SNAPSHOT_SCHEMA))
    kube_api.write_kubeconfig(kube_api.kubeconfig, token="expired")
    denied = kubeview(kube_api, "--json")
    assert denied.returncode == 1 and denied.stdout == ""
    assert denied.stderr.count("\n") == 1 and "401 Unauthorized" in denied.stderr
    assert "Traceback" not in denied.stderr


@pytest.mark.slow
def test_namespace_scope_counts_every_pod_and_lists_the_namespace(kube_api: KubeAPI) -> None:
    """-n with cluster-wide pods allowed: node figures count other namespaces' pods too (not partial),
    the pod lists are the namespace's."""
    kube_api.set_list("/api/v1/pods", other_namespace_pods())
    whole = json.loads(kubeview(kube_api, "--json").stdout)
    out = kubeview(kube_api, "--json", "-n", "default")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    assert doc["cluster"]["partial"] is None
    assert doc["cluster"]["title"] == f"kubeview-test @ {kube_api.url} (namespace default)"
    assert doc["nodes"] == whole["nodes"]  # the other namespace's pod counted on gpu-node-1
    assert {p["namespace"] for p in doc["pods"]} == {"default"} and doc["cluster"]["pods"] == len(doc["pods"]) == 6
    assert {p["namespace"] for p in whole["pods"]} == {"default", "other"}


@pytest.mark.slow
def test_namespace_scope_says_node_figures_are_partial_when_pods_are_forbidden(kube_api: KubeAPI) -> None:
    """-n and the cluster-wide pod list answers 403: the namespace's pods only, and the document says
    the free capacity shown is overstated instead of passing for the whole cluster."""
    kube_api.respond_fixture("GET", "/api/v1/pods", "status-403-forbidden-serviceaccount.json", times=2)
    out = kubeview(kube_api, "--json", "-n", "default")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    assert doc["cluster"]["partial"] == {"reason": "pods are listed in namespace default only (-n; listing pods "
                                                   "in all namespaces is forbidden), so node figures leave out "
                                                   "other namespaces' pods"}
    assert doc["cluster"]["title"] == f"kubeview-test @ {kube_api.url} (namespace default; node figures partial)"
    assert kube_api.requests_to("/api/v1/namespaces/default/pods", watch=False)
    tables = kubeview(kube_api, "-n", "default")
    assert tables.returncode == 0 and "node figures partial" in tables.stdout


@pytest.mark.slow
def test_snapshot_json_of_a_dra_cluster_waits_for_the_dra_kinds(kube_api: KubeAPI) -> None:
    kube_api.serve_recording("dra", lists={"/api/v1/pods": "pods.json"})
    out = kubeview(kube_api, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    assert {"DeviceClass", "ResourceClaim", "ResourceSlice"} <= set(doc["cluster"]["synced"])
    assert len(doc["dra"]["devices"]) == 14 and len(doc["dra"]["claims"]) == 6
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["dra-node-1"]["resources"]["nvidia.com/gpu"]["requested"] == 2
