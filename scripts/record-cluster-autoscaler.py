#!/usr/bin/env python3
"""Record what the real Cluster Autoscaler writes into tests/fixtures/autoscaling/ca-recorded/.

    python scripts/record-cluster-autoscaler.py [OUTDIR] [--ca BINARY]     # ~2.5 min

BINARY defaults to scripts/build-cluster-autoscaler.sh's (CA 1.36.1, kwok provider); the plane is the
realk8s `plane` (tests/realk8s/plane.py, Kubernetes v1.37.2, kwok as the kubelets). CA runs on it with
its kwok cloud provider and four node groups (tests/realk8s/ca_objects.py) through the story in
tests/realk8s/ca_story.py: a GPU batch larger than gpu-pool's max 6, a group whose nodes the "cloud"
refuses (quota-pool), a group whose nodes never finish starting (slow-pool), a plain scale-up
(cpu-pool), a group held by CA's own --cores-total (batch-pool). Every status ConfigMap state is saved as the server answered it at that moment, then the
events (on the pods and on the status ConfigMap), pods and nodes. The README says what each file is.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubernetes import client  # noqa: E402

from tests.realk8s import ca_objects as ca  # noqa: E402
from tests.realk8s.ca_story import NS, Story  # noqa: E402
from tests.realk8s.objects import api, ensure_namespace  # noqa: E402
from tests.realk8s.plane import Plane  # noqa: E402
from tests.realk8s.recorder import Recorder, on_plane  # noqa: E402

STATUS_PATH = f"/api/v1/namespaces/{ca.NS}/configmaps/{ca.STATUS}"


class StatusKeeper:
    """Reads the status ConfigMap raw and keeps the states the README names, each once."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.kept: set[str] = set()

    def read(self) -> dict | None:
        ans = self.rec.call("GET", STATUS_PATH)
        return ans.body if ans.status == 200 else None

    def keep(self, name: str, cm: dict | None, note: str) -> None:
        if cm is None or name in self.kept:
            return
        self.kept.add(name)
        (self.rec.out / name).write_text(json.dumps(cm, indent=1) + "\n")
        self.rec.index.append({"file": name, "method": "GET", "path": STATUS_PATH, "status": 200, "note": note})
        doc = ca.status_doc(cm)
        self.rec.say(f"saved {name:<44} {doc.get('autoscalerStatus')}: " + ", ".join(
            f"{g['name']} {g['scaleUp'].get('status')} {g['health']['cloudProviderTarget']}/{g['health']['maxSize']}"
            for g in doc.get("nodeGroups") or ()))

    def watch(self, cm: dict | None) -> None:
        doc = ca.status_doc(cm)
        if doc.get("autoscalerStatus") == "Initializing":
            self.keep("status-initializing.json", cm, "CA's first write, before its first loop (caught by polling)")
        if (ca.group_status(cm, "gpu-pool").get("scaleUp") or {}).get("status") == "InProgress":
            self.keep("status-gpu-in-progress.json", cm,
                      "gpu-pool's scale-up 0 -> 6 in progress (kwok makes nodes Ready in about a second: caught by polling)")


def describe(rec: Recorder, story: Story, group: str) -> None:
    for p in story.pods(group):
        rec.say(f"  {p.metadata.name}: {p.status.phase} node={p.spec.node_name} CA events={story.reasons(p.metadata.name)}")


def record(plane: Plane, out: Path, binary: Path) -> None:
    rec = Recorder(plane, out)
    core = client.CoreV1Api(api(plane.kubeconfig))
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    rec.say(f"== {binary}: {version or 'Cluster Autoscaler 1.36.1'}; {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    rec.save("version.json", "GET", "/version")
    ca.setup_groups(plane)
    ensure_namespace(core, NS)
    rec.save("kwok-provider-config.json", "GET", f"/api/v1/namespaces/{ca.NS}/configmaps/kwok-provider-config",
             note="the kwok provider's config (ours)")
    rec.save("kwok-provider-templates.json", "GET", f"/api/v1/namespaces/{ca.NS}/configmaps/kwok-provider-templates",
             note="the node templates: one node group per template, min/max in annotations (ours)")
    rec.save("cloud-quota-policy.json", "GET",
             "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/cloud-quota",
             note="the stand-in for the cloud's quota: refuses quota-pool's Nodes (ours)")
    keeper = StatusKeeper(rec)
    story = Story(core, watch=keeper.watch, read=keeper.read)
    ca.start(plane, binary)
    story.idle()
    keeper.keep("status-idle.json", story.status(), "CA running, every group at 0, nothing pending")

    rec.say("== gpu-pool: 10 pods x 8 GPUs (one a node) and `huge` (16 GPUs); max 6 nodes")
    story.gpu_batch()
    describe(rec, story, "gpu-pool")
    keeper.keep("status-gpu-at-max.json", story.status(), "gpu-pool at its max: 6 of 6 nodes ready, 5 pods left")

    rec.say("== quota-pool: 2 pods x 4 GPUs; the cloud refuses its nodes")
    story.quota()
    describe(rec, story, "quota-pool")
    keeper.keep("status-quota-backoff.json", story.status(), "quota-pool in Backoff with the cloud's words")

    rec.say("== slow-pool: 2 pods; its nodes keep a startup taint (never ready for CA)")
    story.slow(lambda cm: keeper.keep("status-slow-in-progress.json", cm,
                                      "slow-pool's scale-up 0 -> 1 in progress (its node not started)"))
    describe(rec, story, "slow-pool")
    keeper.keep("status-slow-timed-out.json", story.status(),
                f"slow-pool in Backoff after its scale-up timed out ({ca.PROVISION_TIME})")

    rec.say("== cpu-pool: 3 pods x 6 cpu; max 3 nodes of 8 cpu")
    story.cpu()
    describe(rec, story, "cpu-pool")
    keeper.keep("status-cpu-done.json", story.status(), "cpu-pool's scale-up done: 3 of 3 nodes ready")

    rec.say(f"== batch-pool: 4 pods x 12 cpu; 16-cpu nodes, max 10, but --cores-total=0:{ca.CORES_TOTAL} leaves room for 2")
    story.limited()
    describe(rec, story, "batch-pool")
    keeper.keep("status-final.json", story.status(),
                "every state at once: at max, two backoffs, finished scale-ups, one held by the cores limit")

    sel = f"involvedObject.name%3D{ca.STATUS}"
    for name, path, note in (
            ("events-pods.json", f"/api/v1/namespaces/{NS}/events", "every event on the pods: scheduler and CA"),
            ("events-status.json", f"/api/v1/namespaces/{ca.NS}/events?fieldSelector={sel}",
             "CA's events on its status ConfigMap: ScaledUpGroup, FailedToScaleUpGroup, ScaleUpTimedOut, ..."),
            ("pods.json", f"/api/v1/namespaces/{NS}/pods", ""),
            ("nodes.json", "/api/v1/nodes", "the nodes CA created (kwok provider)")):
        rec.save(name, "GET", path, note=note)
    missing = {"status-initializing.json", "status-gpu-in-progress.json"} - keeper.kept
    if missing:
        rec.say(f"not caught this run (transient): {', '.join(sorted(missing))}")
    rec.finish()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=REPO / "tests" / "fixtures" / "autoscaling" / "ca-recorded")
    parser.add_argument("--ca", type=Path, default=None, help="the cluster-autoscaler binary")
    args = parser.parse_args()
    binary = args.ca or ca.binary()
    if binary is None or not binary.is_file():
        sys.stderr.write("no cluster-autoscaler binary: bash scripts/build-cluster-autoscaler.sh --source DIR\n")
        return 1
    return on_plane(lambda plane: record(plane, args.out, binary))


if __name__ == "__main__":
    sys.exit(main())
