"""The model-wide quota reads `ClusterModel` caches: every quota's use, every workload held by quota.

Both are bounded by what can matter: the quotas, read against each namespace's tally of its pods
(tally.py: one pass when first read, then pod by pod), and the workloads the EventLog holds Events
about (a hold is always said in an Event).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubeview.model.gpus.dra import ClaimView
from kubeview.model.jobs.store import JobStore
from kubeview.model.kube_events import EventLog
from kubeview.model.quota.counting import QuotaUse, claim_usage, quota_uses
from kubeview.model.quota.held import HELD_KINDS, Held, held_of, job_not_created
from kubeview.model.quota.objects import QuotaKey, QuotaView
from kubeview.model.quota.store import QuotaStore
from kubeview.model.quota.tally import QuotaTally, count_from_totals
from kubeview.model.workloads import WorkloadView

WorkloadKey = tuple[str, str, str]


class KeptQuotaUses:
    """Every quota's use, (namespace, name) -> its keys with the controller's used and kubeview's count
    (the pods' from the tally, tally.py; claims where read); each quota's figures kept while the quota is
    the same view, no pod of its namespace moved (the tally's `changed` since the last read) and its namespace's claims count the same:
    a pod event is one namespace's quotas again, not 500 (a snapshot and the header read them at every
    model version). Read only by the model, after every change (`ClusterModel.quota_uses`), since the
    tally says what moved since the read before."""

    def __init__(self) -> None:
        self._kept: dict[QuotaKey, tuple[QuotaView, dict | None, tuple[QuotaUse, ...]]] = {}

    def read(self, quotas: QuotaStore, tally: QuotaTally,
             claims: Mapping[tuple[str, str], ClaimView] | None = None) -> dict[QuotaKey, tuple[QuotaUse, ...]]:
        if not len(quotas):
            self._kept = {}
            return {}
        totals = tally.current()
        changed = tally.changed
        claimed = _claimed(set(quotas.namespaces()), claims)
        kept, out = self._kept, {}
        for q in quotas.quotas():
            mine = claimed.get(q.namespace)
            got = kept.get(q.key)
            if got is None or got[0] is not q or changed is None or q.namespace in changed or got[1] != mine:
                got = (q, mine, quota_uses(q, count_from_totals(q, totals.get(q.namespace), mine)))
            out[q.key] = got[2]
            kept[q.key] = got
        if len(kept) > len(out):
            self._kept = {k: kept[k] for k in out}
        return out


def _claimed(namespaces: set[str], claims: Mapping[tuple[str, str], ClaimView] | None) -> dict[str, dict]:
    """Per namespace with a quota, what its ResourceClaims count (none where claims are not read)."""
    if claims is None:
        return {}
    of_ns: dict[str, list[ClaimView]] = {ns: [] for ns in namespaces}
    for (ns, _), claim in claims.items():
        if ns in of_ns:
            of_ns[ns].append(claim)
    return {ns: claim_usage(c) for ns, c in of_ns.items()}


def all_held(events: EventLog, jobs: JobStore, workloads: Mapping[WorkloadKey, WorkloadView],
             quotas: QuotaStore) -> dict[WorkloadKey, Held]:
    """Every Job, ReplicaSet and StatefulSet held by quota now, by (kind, namespace, name)."""
    out: dict[WorkloadKey, Held] = {}
    for kind in HELD_KINDS:
        for ns, name in events.involved(kind):
            if kind == "Job":
                job = jobs.jobs.get((ns, name))
                missing = 0 if job is None else job_not_created(job, jobs.pods_of(ns, name))
                uid = "" if job is None else job.uid
            else:
                view = workloads.get((kind, ns, name))
                missing = 0 if view is None else view.desired - view.current
                uid = ""
            if missing <= 0:
                continue
            held = held_of(kind, ns, name, events.for_object(kind, ns, name, uid=uid), missing, quotas.get)
            if held is not None:
                out[held.key] = held
    return dict(sorted(out.items()))
