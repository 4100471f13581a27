"""`kubeview fit MANIFEST`: would these pods fit on the cluster now, where, and why not — without applying them.

Reads the manifest (YAML or JSON, several documents, `-` for stdin), reads the cluster once like
`snapshot` (any source: kubeconfig, `--local`, `--demo`), and places the manifest's units with
`scheduling/workload_fit.py` (gangs all or nothing through `gang_fit.fit_gang`, the one
implementation the TUI, the snapshot and the embedded scheduler use). Exit 0: everything fits; 1: something
does not, or the cluster could not be read (one line); 2: the manifest is bad (one line).
"""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from kubeview.cluster.source import SourceError
from kubeview.model.cluster import ClusterModel
from kubeview.model.snapshot_gangs import fit_doc
from kubeview.scheduling.gang_fit import group_claim_nodes
from kubeview.scheduling.workload_fit import (
    ManifestError,
    Unit,
    UnitFit,
    fit_units,
    resolve_groups,
    units_from,
)
from renderer import bounded_yaml

MAX_BYTES = 16 * 2**20  # a manifest is text a person wrote; more is a mistake


def run(args: argparse.Namespace) -> int:
    try:  # the manifest first: a bad one is exit 2 before any cluster is read
        docs = read_manifest(args.manifest)
        units, skipped = units_from(docs, getattr(args, "namespace", None) or "default", _admission(args))
    except ManifestError as exc:
        sys.stderr.write(f"kubeview: fit: {args.manifest}: {exc}\n")
        return 2
    except SourceError as exc:  # _admission: cluster options that cannot apply (--demo beside --context)
        sys.stderr.write(f"kubeview: {exc}\n")
        return exc.exit_code
    from kubeview.commands.snapshot import collect_packed

    try:
        model, config, where = collect_packed(args, policy=getattr(args, "policy", None))
    except SourceError as exc:
        sys.stderr.write(f"kubeview: {exc}\n")
        return exc.exit_code
    resolve_groups(units, lambda key: _known_group(model, key))
    fits = fit_units(model.allocation(), units, config, lambda unit: _claim_nodes(model, unit))
    ok = all(f.fits for f in fits)
    if getattr(args, "json", False):
        doc = {"fits": ok, "policy": config.policy, "policySource": where, "cluster": model.title,
               "skipped": skipped, "units": [_unit_doc(f, config.policy) for f in fits]}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(text(fits, config.policy, where, skipped))
    return 0 if ok else 1


def read_manifest(path: str) -> list:
    """The documents of a manifest file (or stdin); ManifestError in one sentence."""
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
    gang = model.gangs.get(*unit.group) if unit.group is not None else None
    return group_claim_nodes(model, gang) if gang is not None else None


def _unit_doc(f: UnitFit, policy: str) -> dict:
    return {"what": f.unit.what, "gang": f.unit.gang, "minCount": f.unit.min_count, "size": len(f.unit.pods),
            "fits": f.fits, "waitingForGroup": f.unit.missing_group, **fit_doc(f.fit, policy),
            "members": [{"pod": m.pod.name, "node": m.node, "message": m.message} for m in f.fit.members]}


def text(fits: list[UnitFit], policy: str, where: str, skipped: list[str]) -> str:
    lines = [f"policy: {policy} ({where})"]
    for f in fits:
        unit, fit = f.unit, f.fit
        kind = f"gang, minCount {unit.min_count}" if unit.gang else f"{len(unit.pods)} pod{'s' * (len(unit.pods) != 1)}"
        lines.append(f"{unit.what} ({kind}): {'fits' if f.fits else 'does not fit'}")
        lines.append(f"  {fit.summary}")
        if unit.missing_group:
            lines.append(f"  why: {unit.missing_group}")
        elif fit.message:
            lines.append(f"  why: {fit.message}")
        for node, reasons in sorted(fit.saturated.items()):
            lines.append(f"  saturated {node}: " + ", ".join(f"{n} {r}" for r, n in reasons.items()))
        for reason, count in fit.excluded_counts().items():
            lines.append(f"  excluded: {count} node{'s' * (count != 1)} {reason}")
        for m in fit.members:
            if m.node and (f.fits or not unit.gang):
                lines.append(f"  {m.pod.name} -> {m.node}")
            elif m.message:
                lines.append(f"  {m.pod.name}: {m.message}")
        lines.extend(f"  note: {n}" for n in fit.notes)
    if skipped:
        lines.append(f"skipped (nothing to place): {', '.join(skipped)}")
    return "\n".join(lines) + "\n"
