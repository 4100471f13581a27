"""A 403 on the DRA lists (a ClusterRole from before DRA) degrades like Events and Jobs (#24 item 0):
kubeview keeps going without DRA devices and says so, instead of stopping at
"Listing deviceclasses was forbidden (403)"."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kubeapi import KubeAPI, WatchScript
from test_kube_dra import run, serve_dra

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Scope

DRA = "/apis/resource.k8s.io/v1"
FORBIDDEN = "status-403-forbidden-serviceaccount.json"
REASON = ("DRA devices are not shown, so GPU figures leave them out: Listing {} was forbidden (403): pods "
          '"err-sa" is forbidden: error looking up service account default/missing: serviceaccount "missing" '
          "not found; ask a cluster admin for access.")


def forbid_dra(api: KubeAPI) -> None:
    serve_dra(api)
    for plural in ("deviceclasses", "resourceslices", "resourceclaims"):
        api.respond_fixture("GET", f"{DRA}/{plural}", FORBIDDEN)


def test_dra_lists_forbidden_leave_dra_out_and_the_source_runs(kube_api: KubeAPI) -> None:
    forbid_dra(kube_api)
    kube_api.script_watch("/apis/batch/v1/jobs", WatchScript([], end="close"))
    events = run(kube_api)
    model = ClusterModel()
    model.apply_all(events)
    assert [e.state for e in events if isinstance(e, ConnectionState)][-1] == "live"
    assert {"Node", "Pod", "DeviceClass", "ResourceSlice", "ResourceClaim"} <= model.synced
    assert len(model.nodes) > 0 and len(model.pods) > 0 and model.gpus.empty
    scope = [e for e in events if isinstance(e, Scope)][-1]
    assert scope.title.endswith(" (DRA devices not shown)")
    assert scope.partial in {REASON.format(p) for p in ("deviceclasses", "resourceslices", "resourceclaims")}
    assert not kube_api.requests_to(f"{DRA}/deviceclasses", watch=True)  # no watch after the refusal


def test_snapshot_exits_0_and_says_dra_devices_are_not_shown(kube_api: KubeAPI) -> None:
    forbid_dra(kube_api)
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env["KUBECONFIG"] = str(kube_api.kubeconfig)
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert out.stderr in {f"kubeview: {REASON.format(p)}\n" for p in ("deviceclasses", "resourceslices",
                                                                      "resourceclaims")}  # one line
    assert doc["cluster"]["title"].endswith("(DRA devices not shown)")
    assert doc["cluster"]["partial"]["reason"] in {REASON.format(p) for p in ("deviceclasses", "resourceslices",
                                                                               "resourceclaims")}
    assert doc["dra"]["devices"] == []
