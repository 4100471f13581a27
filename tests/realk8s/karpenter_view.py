"""What kubeview shows of a settled Karpenter round, compared with what the real controllers wrote.

`Settled` is the premise (test_karpenter_real._pool_settled): a NodePool at its GPU limit, its
NodeClaims, its bound and Pending pods, and Karpenter's FailedScheduling words on each Pending pod,
all read from the API server. `model_differences` reads kubeview's live model (KubeSource through
LiveView) and `snapshot_differences` the JSON of `kubeview snapshot --json`; each returns what
differs, one line per difference ([] when kubeview shows exactly what Karpenter wrote).
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.autoscaling.groups import KARPENTER, WAIT_NEVER
from kubeview.model.cluster import ClusterModel

GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class Settled:
    pool: str
    limit: int  # spec.limits nvidia.com/gpu
    used: int  # status.resources nvidia.com/gpu
    nodes: int  # status.nodes
    claims: dict[str, str]  # NodeClaim -> its node
    pending: dict[str, list[str]]  # Pending pod -> Karpenter's FailedScheduling messages on it
    namespace: str


def model_differences(model: ClusterModel, s: Settled, now: float) -> list[str]:
    out: list[str] = []
    group = model.autoscaling.group((KARPENTER, s.pool))
    if group is None:
        return [f"no NodePool {s.pool} among {[g.key for g in model.autoscaling.groups()]}"]
    limits = {lim.resource: (lim.used, lim.limit) for lim in group.limits}
    if limits.get(GPU) != (s.used, s.limit):
        out.append(f"{s.pool}: limits {limits}, the NodePool says {GPU} {s.used}/{s.limit}")
    reached = group.at_limit
    if reached is None or reached.resource != GPU:
        out.append(f"{s.pool}: at_limit {reached}, expected {GPU}")
    if group.size != s.nodes:
        out.append(f"{s.pool}: size {group.size}, status.nodes {s.nodes}")
    claims = {c.name: (c.node, c.stage) for c in model.autoscaling.nodeclaims(s.pool)}
    want = {name: (node, "ready") for name, node in s.claims.items()}
    if claims != want:
        out.append(f"{s.pool}: NodeClaims {claims}, Karpenter's {want}")
    words = f"NodePool {s.pool} at its limit {GPU} {s.used}/{s.limit}"
    for pod, said in sorted(s.pending.items()):
        wait = model.pod_wait((s.namespace, pod), now)
        if wait is None:
            out.append(f"{pod}: no wait (kubeview does not hold it as pending)")
            continue
        if wait.state != WAIT_NEVER or wait.group != group.key or wait.words != words:
            out.append(f"{pod}: {wait.state} {wait.group} {wait.words!r}, expected never, {group.key}, {words!r}")
        if wait.detail not in said:
            out.append(f"{pod}: detail {wait.detail!r} is not Karpenter's words on it {said}")
    return out


def snapshot_differences(doc: dict, s: Settled) -> list[str]:
    """The same comparison on `kubeview snapshot --json`'s `autoscaling` section."""
    section = doc.get("autoscaling") or {}
    groups = {(g["autoscaler"], g["name"]): g for g in section.get("groups", [])}
    g = groups.get((KARPENTER, s.pool))
    if g is None:
        return [f"snapshot: no NodePool {s.pool} among {sorted(groups)}"]
    out: list[str] = []
    limits = {lim["resource"]: (lim["used"], lim["limit"], lim["reached"]) for lim in g["limits"]}
    if limits.get(GPU) != (s.used, s.limit, True):
        out.append(f"snapshot {s.pool}: limits {limits}, the NodePool says {GPU} {s.used}/{s.limit}")
    words = f"NodePool {s.pool} at its limit {GPU} {s.used}/{s.limit}"
    if (g["state"], g["words"], g["size"]) != ("at-limit", words, s.nodes):
        out.append(f"snapshot {s.pool}: {g['state']} {g['words']!r} size {g['size']}, expected at-limit {words!r} "
                   f"size {s.nodes}")
    claims = {c["name"]: (c["node"], c["stage"]) for c in g["nodeClaims"]}
    if claims != {name: (node, "ready") for name, node in s.claims.items()}:
        out.append(f"snapshot {s.pool}: NodeClaims {claims}, Karpenter's {s.claims}")
    if g["waitingPods"] != len(s.pending):
        out.append(f"snapshot {s.pool}: {g['waitingPods']} pods waiting on it, {len(s.pending)} Pending")
    waits = {w["name"]: w for w in section.get("waits", []) if w["namespace"] == s.namespace}
    for pod, said in sorted(s.pending.items()):
        w = waits.get(pod)
        if w is None:
            out.append(f"snapshot {pod}: no wait")
        elif (w["state"], w["words"], w["group"]) != (WAIT_NEVER, words, {"autoscaler": KARPENTER, "name": s.pool}) \
                or w["detail"] not in said:
            out.append(f"snapshot {pod}: {w}, expected never {words!r} with Karpenter's words {said}")
    return out
