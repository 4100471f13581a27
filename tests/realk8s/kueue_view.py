"""What kubeview should show of Kueue's objects, derived here from the objects as Kueue wrote them (read
fresh from the API server), and the differences from what kubeview shows: its live model's queue store
(model/queues/) and `kubeview snapshot --json`'s `queues`. Each difference is one line naming the object.

The expectations are read from the raw objects independently of kubeview's readers: a Workload's state
is Kueue's conditions in its order (Finished, Admitted, QuotaReserved, else pending) and its reason and
message those of the condition that decides it; a queue's counts and usage are its status, amounts
compared in kubeview's units (GPUs whole, cpu in millicores).
"""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel

GPU = "nvidia.com/gpu"


def _cpu_milli(text: str) -> int:
    return int(text[:-1]) if text.endswith("m") else int(float(text) * 1000)


def _units(resource: str, text: object) -> int:
    return _cpu_milli(str(text)) if resource == "cpu" else int(str(text))


def _usage(status: dict, field: str) -> dict[tuple[str, str], int]:
    """(flavor, resource) -> total of a flavorsUsage/flavorsReservation, memory left out (bytes: the
    test's own parsing is kept to whole numbers and millicores)."""
    return {(f["name"], r["name"]): _units(r["name"], r.get("total", 0))
            for f in status.get(field) or () for r in f.get("resources") or () if r["name"] != "memory"}


def expected_state(wl: dict) -> tuple[str, str, str]:
    """(state, reason, message) as Kueue's conditions say."""
    conds = {c["type"]: c for c in (wl.get("status") or {}).get("conditions") or ()}
    for state, kind in (("finished", "Finished"), ("admitted", "Admitted"), ("quota reserved", "QuotaReserved")):
        if conds.get(kind, {}).get("status") == "True":
            return state, conds[kind].get("reason", ""), conds[kind].get("message", "")
    c = conds.get("QuotaReserved", {})
    return "pending", c.get("reason", ""), c.get("message", "")


def differences(m: ClusterModel, written: dict[str, list[dict]]) -> list[str]:
    """Where kubeview's live model differs from Kueue's objects as written (empty: it agrees)."""
    out: list[str] = []
    q = m.queues
    for cq in written["clusterqueues"]:
        name, status = cq["metadata"]["name"], cq.get("status") or {}
        view = q.cluster_queue(name)
        if view is None:
            out.append(f"ClusterQueue {name}: not in kubeview's model")
            continue
        if view.resource_version != cq["metadata"]["resourceVersion"]:
            out.append(f"ClusterQueue {name}: kubeview holds version {view.resource_version}, "
                       f"the API server {cq['metadata']['resourceVersion']}")
        counts = (view.pending, view.reserving, view.admitted)
        want = (status.get("pendingWorkloads"), status.get("reservingWorkloads"), status.get("admittedWorkloads"))
        if counts != want:
            out.append(f"ClusterQueue {name}: pending/reserving/admitted {counts}, status says {want}")
        used, reserved = _usage(status, "flavorsUsage"), _usage(status, "flavorsReservation")
        for key in sorted(set(used) | set(reserved)):
            rows = [r for r in view.resources if (r.flavor, r.resource) == key]
            have = (rows[0].used, rows[0].reserved) if rows else None
            if have != (used.get(key, 0), reserved.get(key, 0)):
                out.append(f"ClusterQueue {name} {key}: used/reserved {have}, status says "
                           f"{(used.get(key, 0), reserved.get(key, 0))}")
        for group in cq["spec"].get("resourceGroups") or ():
            for f in group["flavors"]:
                for r in f["resources"]:
                    rows = [x for x in view.resources if (x.flavor, x.resource) == (f["name"], r["name"])]
                    if r["name"] != "memory" and (not rows or rows[0].nominal != _units(r["name"], r["nominalQuota"])):
                        out.append(f"ClusterQueue {name} {(f['name'], r['name'])}: nominal "
                                   f"{rows[0].nominal if rows else None}, spec says {r['nominalQuota']}")
    for lq in written["localqueues"]:
        meta, status = lq["metadata"], lq.get("status") or {}
        view = q.local_queue(meta["namespace"], meta["name"])
        where = f"LocalQueue {meta['namespace']}/{meta['name']}"
        if view is None:
            out.append(f"{where}: not in kubeview's model")
            continue
        have = (view.cluster_queue, view.pending, view.reserving, view.admitted,
                {k: v for k, v in view.usage.items() if k[1] != "memory"})
        want = (lq["spec"]["clusterQueue"], status.get("pendingWorkloads"), status.get("reservingWorkloads"),
                status.get("admittedWorkloads"), _usage(status, "flavorsUsage"))
        if have != want:
            out.append(f"{where}: (clusterQueue, pending, reserving, admitted, usage) {have}, the object says {want}")
    for wl in written["workloads"]:
        meta = wl["metadata"]
        view = q.workload(meta["namespace"], meta["name"])
        where = f"Workload {meta['namespace']}/{meta['name']}"
        if view is None:
            out.append(f"{where}: not in kubeview's model")
            continue
        admission = (wl.get("status") or {}).get("admission") or {}
        have = (view.state, view.reason, view.message, view.queue, view.cluster_queue)
        want = (*expected_state(wl), wl["spec"].get("queueName", ""), admission.get("clusterQueue"))
        if have != want:
            out.append(f"{where}: (state, reason, message, queue, clusterQueue) {have}, Kueue wrote {want}")
    return out


def snapshot_differences(doc: dict, written: dict[str, list[dict]]) -> list[str]:
    """Where `snapshot --json`'s `queues` (docs/snapshot.md) differs from Kueue's objects as written."""
    out: list[str] = []
    snap = doc["queues"]
    if snap["unavailable"] is not None:
        out.append(f"queues unavailable: {snap['unavailable']}")
    cqs = {c["name"]: c for c in snap["clusterQueues"]}
    lq_cq = {(q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]["clusterQueue"] for q in written["localqueues"]}
    for cq in written["clusterqueues"]:
        name, status = cq["metadata"]["name"], cq.get("status") or {}
        mine = cqs.get(name)
        if mine is None:
            out.append(f"snapshot: ClusterQueue {name} missing")
            continue
        counts = tuple(mine[f] for f in ("pendingWorkloads", "reservingWorkloads", "admittedWorkloads"))
        want = (status.get("pendingWorkloads"), status.get("reservingWorkloads"), status.get("admittedWorkloads"))
        if counts != want:
            out.append(f"snapshot: ClusterQueue {name} counts {counts}, status says {want}")
        used, reserved = _usage(status, "flavorsUsage"), _usage(status, "flavorsReservation")
        rows = {(r["flavor"], r["resource"]): (r["used"], r["reserved"]) for r in mine["resources"]}
        for key in sorted(set(used) | set(reserved)):
            if rows.get(key) != (used.get(key, 0), reserved.get(key, 0)):
                out.append(f"snapshot: ClusterQueue {name} {key} used/reserved {rows.get(key)}, status says "
                           f"{(used.get(key, 0), reserved.get(key, 0))}")
        feeding = sorted(f"{ns}/{n}" for (ns, n), c in lq_cq.items() if c == name)
        if sorted(mine["localQueues"]) != feeding:
            out.append(f"snapshot: ClusterQueue {name} localQueues {mine['localQueues']}, want {feeding}")
        pending = sorted(f"{w['metadata']['namespace']}/{w['metadata']['name']}" for w in written["workloads"]
                         if expected_state(w)[0] == "pending" and lq_cq.get(
                             (w["metadata"]["namespace"], w["spec"].get("queueName", ""))) == name)
        if sorted(mine["waiting"]) != pending:
            out.append(f"snapshot: ClusterQueue {name} waiting {mine['waiting']}, Kueue holds {pending}")
    lqs = {(q["namespace"], q["name"]): q for q in snap["localQueues"]}
    for lq in written["localqueues"]:
        meta, status = lq["metadata"], lq.get("status") or {}
        mine = lqs.get((meta["namespace"], meta["name"]))
        have = None if mine is None else (mine["clusterQueue"], mine["pendingWorkloads"], mine["reservingWorkloads"],
                                          mine["admittedWorkloads"])
        want = (lq["spec"]["clusterQueue"], status.get("pendingWorkloads"), status.get("reservingWorkloads"),
                status.get("admittedWorkloads"))
        if have != want:
            out.append(f"snapshot: LocalQueue {meta['namespace']}/{meta['name']} {have}, the object says {want}")
    wls = {(w["namespace"], w["name"]): w for w in snap["workloads"]}
    for wl in written["workloads"]:
        meta = wl["metadata"]
        mine = wls.get((meta["namespace"], meta["name"]))
        admission = (wl.get("status") or {}).get("admission") or {}
        queue = wl["spec"].get("queueName", "")
        have = None if mine is None else (mine["state"], mine["reason"], mine["message"], mine["queue"], mine["clusterQueue"])
        want = (*expected_state(wl), queue, admission.get("clusterQueue") or lq_cq.get((meta["namespace"], queue)))
        if have != want:
            out.append(f"snapshot: Workload {meta['namespace']}/{meta['name']} {have}, Kueue wrote {want}")
    held = sum(1 for w in written["workloads"] if expected_state(w)[0] == "pending")
    if snap["held"] < held:  # other modules' Workloads may be held too
        out.append(f"snapshot: held {snap['held']}, Kueue holds at least {held}")
    return out
