"""Cluster Autoscaler's status ConfigMap (kube-system/cluster-autoscaler-status) as kubeview reads it.

Two formats, both under `data.status`:
- YAML (CA 1.29+): `api.ClusterAutoscalerStatus` marshalled (kubernetes/autoscaler
  cluster-autoscaler/clusterstate/api/types.go; an example is clusterstate/utils/status_test.yaml):
  `autoscalerStatus`, `time`, `clusterWide`, and `nodeGroups[]` with `name`, `health` (`status`,
  `nodeCounts.registered.total/ready`, `cloudProviderTarget`, `minSize`, `maxSize`), `scaleUp`
  (`status` InProgress / Backoff / NoActivity / Unhealthy, `backoffInfo.errorCode/errorMessage` with
  the cloud's words, `lastTransitionTime`) and `scaleDown`;
- text (older CA): "Cluster-autoscaler status at <time>:" then "Cluster-wide:" and "NodeGroups:"
  blocks of `Name:`, `Health:      Healthy (ready=6 ... registered=6 ... cloudProviderTarget=38
  (minSize=0, maxSize=38))` and `ScaleUp:     InProgress (ready=6 cloudProviderTarget=38)` lines with
  `LastTransitionTime:` under each (clusterstate/api/utils.go `GetReadableString`, clusterstate.go
  `buildHealthStatusNodeGroup`); it has no error words.
Pure; a status that reads as neither is an empty `CaStatus` with `problem` saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import yaml

from kubeview.model.kube_events import parse_time

STATUS_NAME = "cluster-autoscaler-status"
STATUS_NAMESPACE = "kube-system"
IN_PROGRESS, BACKOFF = "InProgress", "Backoff"
TEXT_HEAD = "Cluster-autoscaler status at "
MAX_STATUS = 4 * 2**20  # a ConfigMap holds at most 1 MiB; more is not CA's


@dataclass(frozen=True, slots=True)
class CaGroupStatus:
    name: str
    health: str  # Healthy / Unhealthy
    registered: int
    ready: int
    target: int | None  # cloudProviderTarget
    min_size: int | None
    max_size: int | None
    scale_up: str  # InProgress / Backoff / NoActivity / Unhealthy / ""
    scale_up_since: float | None  # scaleUp.lastTransitionTime
    error_code: str = ""  # backoffInfo.errorCode
    error_message: str = ""  # backoffInfo.errorMessage: the cloud's words


@dataclass(frozen=True, slots=True)
class CaStatus:
    autoscaler_status: str  # Running / Initializing ("" when not said)
    time: float | None
    health: str  # cluster-wide health
    groups: tuple[CaGroupStatus, ...]
    problem: str | None = None  # why nothing could be read


def status_of(configmap: dict) -> CaStatus:
    """The status a ConfigMap carries (YAML or text)."""
    text = ((configmap.get("data") or {}).get("status")) or ""
    if not isinstance(text, str) or not text.strip():
        return CaStatus("", None, "", (), "the ConfigMap has no data.status")
    if len(text) > MAX_STATUS:
        return CaStatus("", None, "", (), "data.status is too large to be Cluster Autoscaler's")
    if text.startswith(TEXT_HEAD):
        return _from_text(text)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return CaStatus("", None, "", (), f"data.status is not YAML: {getattr(exc, 'problem', None) or exc}")
    if not isinstance(doc, dict):
        return CaStatus("", None, "", (), "data.status is not Cluster Autoscaler's status")
    return _from_yaml(doc)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _stamp(value: object) -> float | None:
    if isinstance(value, datetime):  # YAML may read an unquoted timestamp as one
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    return parse_time(value) if isinstance(value, str) else go_time(str(value)) if value else None


def _from_yaml(doc: dict) -> CaStatus:
    groups = []
    for g in doc.get("nodeGroups") or ():
        if not isinstance(g, dict) or not g.get("name"):
            continue
        health, up = _dict(g.get("health")), _dict(g.get("scaleUp"))
        registered = _dict(_dict(health.get("nodeCounts")).get("registered"))
        backoff = _dict(up.get("backoffInfo"))
        groups.append(CaGroupStatus(
            name=str(g["name"]), health=str(health.get("status") or ""),
            registered=_int(registered.get("total")) or 0, ready=_int(registered.get("ready")) or 0,
            target=_int(health.get("cloudProviderTarget")), min_size=_int(health.get("minSize")),
            max_size=_int(health.get("maxSize")), scale_up=str(up.get("status") or ""),
            scale_up_since=_stamp(up.get("lastTransitionTime")),
            error_code=str(backoff.get("errorCode") or ""), error_message=str(backoff.get("errorMessage") or "")))
    wide = _dict(doc.get("clusterWide"))
    return CaStatus(str(doc.get("autoscalerStatus") or ""), go_time(str(doc.get("time") or "")),
                    str(_dict(wide.get("health")).get("status") or ""), tuple(groups))


_GO_TIME = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-]\d\d)(\d\d)")
_COUNTS = re.compile(r"(\w+)=(-?\d+)")
_LINE = re.compile(r"^  (Name|Health|ScaleUp|ScaleDown):\s+(\S+)(?: \((.*)\))?\s*$")
_TRANSITION = re.compile(r"^\s+LastTransitionTime:\s+(.*)$")


def go_time(text: str) -> float | None:
    """Go's `time.Time.String()` ("2023-11-24 04:28:19.546750398 +0000 UTC", maybe " m=+1.2"), or RFC 3339."""
    m = _GO_TIME.search(text)
    if m is None:
        return parse_time(text.strip()) if text.strip() else None
    date, clock, frac, hours, minutes = m.groups()
    micro = int((frac or ".0")[1:7].ljust(6, "0"))
    sign = -1 if hours.startswith("-") else 1
    offset = timedelta(hours=int(hours), minutes=sign * int(minutes))
    base = datetime.fromisoformat(f"{date}T{clock}").replace(microsecond=micro, tzinfo=timezone(offset))
    return base.timestamp()


def _from_text(text: str) -> CaStatus:
    lines = text.splitlines()
    when = go_time(lines[0][len(TEXT_HEAD):])
    section, health = "", ""
    groups: list[dict] = []
    last: dict | None = None  # the line a LastTransitionTime belongs to
    for line in lines[1:]:
        if line in ("Cluster-wide:", "NodeGroups:"):
            section = line[:-1]
            continue
        m = _LINE.match(line)
        if m is not None:
            field, status, detail = m.groups()
            counts = {k: int(v) for k, v in _COUNTS.findall(detail or "")}
            if section == "Cluster-wide" and field == "Health":
                health = status
            elif section == "NodeGroups" and field == "Name":
                groups.append({"name": status})
            elif section == "NodeGroups" and groups and field in ("Health", "ScaleUp"):
                last = groups[-1]
                last[field] = (status, counts)
            continue
        t = _TRANSITION.match(line)
        if t is not None and last is not None and "ScaleUp" in last and "since" not in last:
            last["since"] = go_time(t.group(1))
    out = []
    for g in groups:
        status, counts = g.get("Health", ("", {}))
        up, _ = g.get("ScaleUp", ("", {}))
        out.append(CaGroupStatus(g["name"], status, counts.get("registered", 0), counts.get("ready", 0),
                                 counts.get("cloudProviderTarget"), counts.get("minSize"), counts.get("maxSize"),
                                 up, g.get("since")))
    return CaStatus("", when, health, tuple(out))
