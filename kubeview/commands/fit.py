"""`kubeview fit MANIFEST`: would these pods fit on the cluster now, where, and why not — without applying them.

Reads the manifest (YAML or JSON, several documents, `-` for stdin), reads the cluster once like
`snapshot` (any source: kubeconfig, `--local`, `--demo`), and places the manifest's units with
`scheduling/workload_fit.py` (gangs all or nothing through `gang_fit.fit_gang`, the one
implementation the TUI, the snapshot and the embedded scheduler use). Pods that fit no node now are
tried on a new node of each node group the cluster's autoscalers keep (`scheduling/group_fit.py`): "would
fit a new node of gpu-pool (it can add 32)", or "would fit a node of gpu-pool, but gpu-pool is at its
maximum 6". Before placing, what the API server
would refuse is refused: on a real cluster by a server-side dry run of each Pod and workload
(`cluster/kube/dry_run.py`), elsewhere, or where RBAC forbids the dry run or the server cannot do
one, by the API server's own resource validation (`model/resource_validation.py`), one line per object
in its words. The namespace's ResourceQuotas are checked before the nodes (`model/quota/admit.py`, the
quota admission's arithmetic on the controller's status.used): "fits on gpu-node-3, but namespace
team-a's quota gpus requests.nvidia.com/gpu is 8/8" does not fit. An object naming a Kueue LocalQueue
waits while its ClusterQueue has no room ("ClusterQueue team-a-cq's nominal nvidia.com/gpu 4 is used
4/4": commands/fit_queue.py); in a cohort it may borrow, which is said and not counted against it.
Exit 0: everything fits; 1: something does not, the API server refuses it for now (quota, LimitRange),
or the cluster could not be read (one line); 2: the manifest is bad (one line per object).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections import Counter
from typing import TYPE_CHECKING

import yaml

from kubeview.cluster.source import SourceError
from kubeview.commands.options import connection_options
from renderer import bounded_yaml

if TYPE_CHECKING:  # the work's imports wait for `run`: cli.py imports this module to build its parser
    from kubeview.model.cluster import ClusterModel
    from kubeview.model.queues.admit import QueueRefusal
    from kubeview.model.quota.admit import QuotaAnswer
    from kubeview.scheduling.config import PackingConfig
    from kubeview.scheduling.group_fit import GroupAnswer
    from kubeview.scheduling.workload_fit import Skipped, Unit, UnitFit

MAX_BYTES = 16 * 2**20  # a manifest is text a person wrote; more is a mistake
SHOWN_PLACED = 20  # "pod -> node" lines per unit; the summary counts the rest per node


NAME = "fit"  # `kubeview fit`


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    fit = sub.add_parser(NAME, parents=[connection_options(True, ("cluster",))],
                         help="would a Pod, Deployment, Job or gang manifest fit now, and where",
                         description="Would the pods of MANIFEST fit on the cluster now, where (one placement), and "
                                     "why not, without applying it. A gang (pods of a PodGroup, a Job with "
                                     "spec.scheduling) is placed all or nothing, as kube-scheduler does. Exit 0: "
                                     "it fits; 1: it does not (or the cluster could not be read); 2: bad input.")
    fit.add_argument("manifest", metavar="MANIFEST", help="YAML or JSON file, one or more documents ('-' for stdin)")
    fit.add_argument("--json", action="store_true", help="one JSON document instead of text")
    fit.add_argument("--policy", choices=["pack", "spread", "balanced"],
                     help="score nodes with this policy (default: the embedded scheduler's, else spread)")
    fit.add_argument("--native", action="store_true",
                     help="score as kube-scheduler's own NodeResourcesFit does under kubeview's native profile for "
                          "the policy (`kubeview scheduler-manifests`; pack: MostAllocated, spread: LeastAllocated)")
    fit.add_argument("--within", metavar="LABEL",
                     help="every pod inside one domain of this node label, e.g. nvidia.com/gpu.clique (one NVLink "
                          "domain); default: a gang's TopologyConstraint (PodGroup or Job schedulingConstraints), "
                          "else Kueue's podset-required-topology annotation, where the manifest has one; "
                          "a different --within than a gang's key is refused (exit 2)")
    return fit


def run(args: argparse.Namespace) -> int:
    from kubeview.scheduling.workload_fit import ManifestError, fit_units, flatten, resolve_groups, units_from

    namespace = getattr(args, "namespace", None) or "default"
    try:  # the manifest first: a bad one is exit 2 before any cluster is read
        docs = read_manifest(args.manifest)
        sent = copy.deepcopy(docs)  # as written: units_from fills in what it needs
        units, skipped = units_from(docs, namespace, _admission(args))
        refused = refusals(args, flatten(sent), namespace)
    except ManifestError as exc:
        sys.stderr.write(f"kubeview: fit: {args.manifest}: {exc}\n")
        return 2
    except SourceError as exc:  # _admission: cluster options that cannot apply (--demo beside --context)
        sys.stderr.write(f"kubeview: {exc}\n")
        return exc.exit_code
    if refused:
        sys.stderr.writelines(f"kubeview: fit: {args.manifest}: {line}\n" for line, _ in refused)
        return max(code for _, code in refused)
    from kubeview.commands.snapshot import collect_packed

    try:
        model, config, where = collect_packed(args, policy=getattr(args, "policy", None))
    except SourceError as exc:
        sys.stderr.write(f"kubeview: {exc}\n")
        return exc.exit_code
    if getattr(args, "native", False):
        from kubeview.scheduling.native_profile import native_config

        try:
            config = native_config(config)
        except ValueError as exc:
            sys.stderr.write(f"kubeview: fit: --native: {exc}\n")
            return 2
        where = f"{where}, as kube-scheduler's native profile scores it ({config.native.strategy})"  # type: ignore[union-attr]
    resolve_groups(units, lambda key: _known_group(model, key))
    fits = fit_units(model.allocation(), units, config, lambda unit: _claim_nodes(model, unit))
    from kubeview.commands.fit_gpus import gpu_notes_of, within, within_doc

    try:
        domain, asked_by, asked_words = within(args, model, units, config, flatten(sent),
                                               lambda unit: _claim_nodes(model, unit))
    except ManifestError as exc:
        sys.stderr.write(f"kubeview: fit: {args.manifest}: {exc}\n")
        return 2
    if domain is not None:  # inside one domain, or nothing placed at all when there is none
        fits = domain.fits
    gpu_notes = gpu_notes_of(model, fits)
    quota = [quota_answer(model, f.unit) for f in fits]  # the namespace's quotas first: no node helps past them
    from kubeview.commands.fit_queue import queue_answer, queue_doc, queues_of

    named = queues_of(flatten(docs), namespace)
    queued = [queue_answer(model, f.unit, named) for f in fits]
    admits = [q.admits_all and (k is None or k.borrow) for q, k in zip(quota, queued, strict=True)]
    ok = all(f.fits and a for f, a in zip(fits, admits, strict=True)) and (domain is None or domain.ok)
    groups = model.autoscaling.groups()
    scaling = [autoscaling_answer(f, groups, config) for f in fits]
    from kubeview.model.kinds import quota_unavailable

    unchecked = quota_unavailable(model.unavailable)
    if getattr(args, "json", False):
        doc = {"fits": ok, "policy": config.policy, "policySource": where, "cluster": model.title,
               "quotaUnchecked": unchecked, "skipped": [{"what": s.what, "why": s.why} for s in skipped],
               "units": [{**_unit_doc(f, config.policy), "fits": f.fits and ad, "quota": _quota_doc(q),
                          "queue": queue_doc(k), "autoscaling": _scaling_doc(a), "gpuNotes": n}
                         for f, q, k, ad, a, n in zip(fits, quota, queued, admits, scaling, gpu_notes, strict=True)],
               "within": within_doc(domain, asked_by)}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        out = text(fits, config.policy, where, skipped, scaling, quota, unchecked, queued, gpu_notes)
        if domain is not None:
            head, _, rest = out.partition("\n")
            by = f" ({asked_words})" if asked_words else ""
            out = f"{head}\nwithin: {domain.words()}{by}\n{rest}"
        sys.stdout.write(out)
    return 0 if ok else 1


def quota_answer(model: ClusterModel, unit: Unit) -> QuotaAnswer:
    """Would the unit's namespace's quotas admit its pods now (model/quota/admit.py)? Pods the cluster
    already has (a known group's members) were admitted when they were created."""
    from kubeview.model.quota.admit import admit_pods

    new = [p for p in unit.pods if p.key not in model.pods]
    return admit_pods(model.quotas.quotas(), new, unit.template, unit.replicas)


def _quota_doc(q: QuotaAnswer) -> dict:
    b = q.block
    return {"admitted": q.admitted, "total": q.total, "admitsAll": q.admits_all,
            "words": None if b is None else q.words(), "notes": list(q.notes),
            "block": None if b is None else {"namespace": b.namespace, "quota": b.quota, "key": b.key,
                                             "used": b.used, "hard": b.hard, "asked": b.asked}}


def quota_line(f: UnitFit, q: QuotaAnswer) -> str | None:
    """"quota: fits on gpu-node-3, but namespace team-a's quota gpus requests.nvidia.com/gpu is 8/8"."""
    if q.block is None:
        return None
    nodes = {m.node for m in f.fit.members if m.node}
    where = (f"fits on {next(iter(nodes))}" if len(nodes) == 1 else "fits on the nodes") if f.fits else ""
    return f"  quota: {where}, but {q.words()}" if where else f"  quota: {q.words()}"


def read_manifest(path: str) -> list:
    """The documents of a manifest file (or stdin); ManifestError in one sentence."""
    from kubeview.scheduling.workload_fit import ManifestError

    try:
        if path == "-":
            data = sys.stdin.read(MAX_BYTES + 1)
        else:
            with open(path, encoding="utf-8") as f:
                data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise ManifestError("no such file") from None
    except IsADirectoryError:
        raise ManifestError("is a directory; name a YAML or JSON file") from None
    except UnicodeDecodeError as exc:
        raise ManifestError(f"not UTF-8 text (byte {exc.start}); a manifest is YAML or JSON") from None
    except OSError as exc:
        raise ManifestError(f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise ManifestError(f"larger than {MAX_BYTES // 2**20} MiB")
    try:
        bounded_yaml.check_depth(data)
        docs = list(yaml.load_all(data, Loader=bounded_yaml.LOADER))
    except bounded_yaml.TooDeep as exc:
        raise ManifestError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ManifestError(f"is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not any(d is not None for d in docs):
        raise ManifestError("is empty")
    return docs


def refusals(args: argparse.Namespace, objects: list[dict], namespace: str) -> list[tuple[str, int]]:
    """What the API server refuses, one (line, exit code) per object: on a real cluster its dry-run
    answers (422 and the like: 2, what was typed is wrong; 403, quota or LimitRange: 1, not now), else
    its validation of container resources done here (2). Where no dry run could be asked (RBAC, a
    server that cannot dry-run the kind: 404, 405, 501; a server error) one line says so and the
    local checks stand in; an unreachable server says nothing here (reading the cluster says it)."""
    from kubeview.cluster.select import wants_kube
    from kubeview.model.resource_validation import object_errors, refusal

    if wants_kube(args):
        from kubeview.cluster.kube.config import connect
        from kubeview.cluster.kube.dry_run import dry_run

        answer = dry_run(connect(getattr(args, "kubeconfig", None), getattr(args, "context", None)).api_client,
                         objects, namespace)
        if answer.asked:
            return [(r.message, 1 if r.status == 403 else 2) for r in answer.refused]
        if answer.why_not:
            sys.stderr.write(f"kubeview: fit: {answer.why_not}\n")
    return [(refusal(obj, errors), 2) for obj in objects if (errors := object_errors(obj))]


def _admission(args: argparse.Namespace):
    """The embedded cluster's admission (its API server adds the ExtendedResourceToleration plugin's
    tolerations, as the bundled cluster's tainted GPU nodes expect); for a real cluster kubeview cannot
    know the admission plugins and applies only the defaulting every API server does."""
    from kubeview.cluster.select import wants_kube

    if wants_kube(args):
        return None
    from kubeview.cluster.local.objects import admit_pod

    return admit_pod


def _known_group(model: ClusterModel, key: tuple[str, str, str]) -> tuple[int, list] | None:
    """A group the cluster has: its minCount and its members' pods (bound ones stay where they are)."""
    gang = model.gangs.get(*key)
    if gang is None:
        return None
    return gang.min_count, [p for m in gang.members if (p := model.pods.get(m.key)) is not None]


def _claim_nodes(model: ClusterModel, unit: Unit) -> tuple[str, ...] | None:
    """The nodes of the shared claims of a gang whose group the cluster already has (a group new in the
    manifest has no allocated claims yet)."""
    from kubeview.scheduling.gang_fit import group_claim_nodes

    gang = model.gangs.get(*unit.group) if unit.group is not None else None
    return group_claim_nodes(model, gang) if gang is not None else None


def autoscaling_answer(f: UnitFit, groups: list, config: PackingConfig) -> tuple[int, GroupAnswer] | None:
    """For a unit some of whose pods fit no node now: how many, and whether a node its node groups
    could add would take them (scheduling/group_fit.py); None when all fit or no group is known."""
    from kubeview.scheduling.group_fit import group_answer

    if f.fits or f.unit.missing_group is not None or not groups:
        return None
    placed = f.fit.room if f.room is None else f.room
    unplaced = f.unit.size - placed
    pod = next((m.pod for m in f.fit.members if m.node is None), f.unit.template)
    if unplaced <= 0 or pod is None:
        return None
    answer = group_answer(pod, groups, config)
    return None if answer is None else (unplaced, answer)


def _scaling_doc(scaling: tuple[int, GroupAnswer] | None) -> dict | None:
    if scaling is None:
        return None
    unplaced, a = scaling
    group = None if a.group is None else {"autoscaler": a.group.autoscaler, "name": a.group.name}
    return {"unplaced": unplaced, "words": a.words, "group": group, "canAdd": a.can_add, "perNode": a.per_node,
            "willCome": a.will_come}


def _unit_doc(f: UnitFit, policy: str) -> dict:
    from kubeview.snapshot.gangs import fit_doc

    doc = fit_doc(f.fit, policy)
    doc.update(fits=f.fits, room=f.fit.room if f.room is None else f.room, notes=[*doc["notes"], *f.notes])
    return {"what": f.unit.what, "podsFrom": list(f.unit.made_by), "gang": f.unit.gang,
            "minCount": f.unit.min_count, "size": f.unit.size,
            "fits": f.fits, "waitingForGroup": f.unit.missing_group, **doc,
            "members": [{"pod": m.pod.name, "node": m.node, "message": m.message} for m in f.fit.members],
            "untried": {"count": f.untried, "message": f.untried_message} if f.untried else None}


def text(fits: list[UnitFit], policy: str, where: str, skipped: list[Skipped],
         scaling: list[tuple[int, GroupAnswer] | None] | None = None, quota: list[QuotaAnswer] | None = None,
         quota_unchecked: str | None = None, queued: list[QueueRefusal | None] | None = None,
         gpu_notes: list[list[str]] | None = None) -> str:
    from kubeview.commands.fit_queue import queue_line

    lines = [f"policy: {policy} ({where})"]
    if quota_unchecked:
        lines.append(f"note: {quota_unchecked}; quota not checked")
    for i, (f, said) in enumerate(zip(fits, scaling or [None] * len(fits), strict=True)):
        unit, fit = f.unit, f.fit
        q = quota[i] if quota else None
        size = unit.size
        kind = f"gang, minCount {unit.min_count:,}" if unit.gang else f"{size:,} pod{'s' * (size != 1)}"
        kind += f", pods from {', '.join(unit.made_by)}" if unit.made_by else ""
        k = queued[i] if queued else None
        fits_all = f.fits and (q is None or q.admits_all) and (k is None or k.borrow)
        lines.append(f"{unit.what} ({kind}): {'fits' if fits_all else 'does not fit'}")
        if q is not None and (line := quota_line(f, q)) is not None:
            lines.append(line)
        if k is not None:
            lines.append(queue_line(f, k))
        lines.extend(f"  note: {n}" for n in (q.notes if q is not None else ()))
        lines.append(f"  {fit.summary}")
        if unit.missing_group:
            lines.append(f"  why: {unit.missing_group}")
        elif fit.message:
            lines.append(f"  why: {fit.message}")
        for node, reasons in sorted(fit.saturated.items()):
            lines.append(f"  saturated {node}: " + ", ".join(f"{n} {r}" for r, n in reasons.items()))
        for reason, count in fit.excluded_counts().items():
            lines.append(f"  excluded: {count} node{'s' * (count != 1)} {reason}")
        if said is not None:
            unplaced, answer = said
            lines.append(f"  node groups: {unplaced:,} pod{'s' * (unplaced != 1)} fit no node now; {answer.words}")
        lines.extend(member_lines(f))
        lines.extend(f"  note: {n}" for n in (*fit.notes, *f.notes, *(gpu_notes[i] if gpu_notes else ())))
    lines.extend(f"ignored: {s.what}: {s.why}" for s in skipped)
    return "\n".join(lines) + "\n"


def member_lines(f: UnitFit) -> list[str]:
    """Each member's node or message; a run of members with the same message is one line with its
    count (the untried replicas join the run they continue), and past `SHOWN_PLACED` placed members
    only how many more on each node."""
    runs: list[list] = []  # [first pod, last pod, count, " -> node" or ": message"]
    for m in f.fit.members:
        if m.node and (f.fits or not f.unit.gang):
            runs.append([m.pod.name, m.pod.name, 1, f" -> {m.node}"])
        elif m.message:
            said = f": {m.message}"
            if runs and runs[-1][3] == said:
                runs[-1][1:3] = [m.pod.name, runs[-1][2] + 1]
            else:
                runs.append([m.pod.name, m.pod.name, 1, said])
    if f.untried:
        base = f.fit.members[-1].pod.name.rpartition("-")[0] if f.fit.members else "pod"
        said = f": {f.untried_message}" if f.untried_message else ": not placed one by one (see the note)"
        last = f"{base}-{f.unit.size - 1}"
        if runs and runs[-1][3] == said:
            runs[-1][1:3] = [last, runs[-1][2] + f.untried]
        else:
            runs.append([f"{base}-{f.unit.size - f.untried}", last, f.untried, said])
    out: list[str] = []
    placed, hidden = 0, Counter[str]()
    for first, last, count, said in runs:
        if said.startswith(" ->"):
            placed += 1
            if placed > SHOWN_PLACED:
                hidden[said[4:]] += 1
                continue
        elif hidden:
            out.append(_more_placed(hidden))
            hidden = Counter()
        out.append(f"  {first}{said}" if count == 1 else f"  {first} … {last} ({count:,} pods){said}")
    if hidden:
        out.append(_more_placed(hidden))
    return out


def _more_placed(per_node: Counter) -> str:
    where = ", ".join(f"{node} {n:,}" for node, n in sorted(per_node.items()))
    return f"  … {sum(per_node.values()):,} more placed: {where}"
