"""scheduler_perf-style scenario files: test cases of op templates, instantiated by workloads with params.

The shape follows Kubernetes' `test/integration/scheduler_perf/config/performance-config.yaml`
(`workloadTemplate` ops with `count`/`countParam: $name`, `workloads` with `params` and
`threshold`), with node and pod templates inline instead of in template files. See the bundled
`scenarios/scheduler.yaml` for every field. Loading validates everything and raises `ScenarioError`
with one sentence naming the place.

Gangs as scheduler_perf's `podgroup/gangscheduling` test case makes them: `createPodGroups` makes
PodGroups `gang-<i>` with `minCount`, and a `createPods` op with
`podGroupSize` N puts its i-th pod into group `gang-<i // N>` (`spec.schedulingGroup.podGroupName`,
the template's `gang-{{DivideInt .Index .podsPerGroup}}`).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubeview.scheduling.config import PackingConfig

BUNDLED = Path(__file__).resolve().parents[1] / "scenarios" / "scheduler.yaml"
OPCODES = ("createNodes", "createPods", "createPodGroups", "deletePods", "barrier")
GROUP_PREFIX = "gang-"
DEFAULT_SAMPLE_INTERVAL = 0.05


class ScenarioError(ValueError):
    """A scenario file kubeview cannot run; the message says where and why."""


@dataclass(slots=True)
class Op:
    opcode: str
    count: int
    templates: list[dict]  # node or pod objects (API shape; metadata.namePrefix names them)
    collect: bool = False  # measured: SchedulingThroughput is collected while these pods schedule
    min_count: int = 0  # createPodGroups: each group's gang minCount
    group_size: int = 0  # createPods: pods per PodGroup (0: no group)


@dataclass(slots=True)
class Workload:
    test: str
    name: str
    ops: list[Op]
    packing: PackingConfig
    sample_interval: float = DEFAULT_SAMPLE_INTERVAL
    threshold: float | None = None  # pods/s

    @property
    def full_name(self) -> str:
        """scheduler_perf's `Name` label: `<test case>/<workload>`."""
        return f"{self.test}/{self.name}"

    @property
    def nodes(self) -> int:
        return sum(op.count for op in self.ops if op.opcode == "createNodes")

    @property
    def gang_size(self) -> int:
        """Pods per group of the measured pods (0: plain pods), for the gang-vs-plain line."""
        return max((op.group_size for op in self.ops if op.opcode == "createPods" and op.collect), default=0)

    @property
    def has_groups(self) -> bool:
        return any(op.opcode == "createPodGroups" and op.count for op in self.ops)


def load(path: str | Path | None = None) -> list[Workload]:
    """Every workload of a scenario file (the bundled one when `path` is None)."""
    source = Path(path) if path else BUNDLED
    try:
        doc = yaml.safe_load(source.read_text())
    except OSError as exc:
        raise ScenarioError(f"cannot read {source}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{source} is not valid YAML: {exc}") from exc
    if not isinstance(doc, list) or not doc:
        raise ScenarioError(f"{source} must be a list of test cases")
    return [w for i, case in enumerate(doc) for w in _test_case(case, f"{source.name}[{i}]")]


def _test_case(case: Any, where: str) -> list[Workload]:
    if not isinstance(case, dict) or not isinstance(case.get("name"), str):
        raise ScenarioError(f"{where}: a test case needs a name")
    where = f"{where} ({case['name']})"
    try:
        packing = PackingConfig.from_dict(case.get("packing") or {})
    except ValueError as exc:
        raise ScenarioError(f"{where}: packing: {exc}") from exc
    interval = case.get("sampleInterval", DEFAULT_SAMPLE_INTERVAL)
    if not isinstance(interval, int | float) or isinstance(interval, bool) or interval <= 0:
        raise ScenarioError(f"{where}: sampleInterval must be a positive number of seconds")
    template = case.get("workloadTemplate")
    workloads = case.get("workloads")
    if not isinstance(template, list) or not template:
        raise ScenarioError(f"{where}: workloadTemplate must be a non-empty list of ops")
    if not isinstance(workloads, list) or not workloads:
        raise ScenarioError(f"{where}: workloads must be a non-empty list")
    defaults = {"createNodes": case.get("defaultNodeTemplate"), "createPods": case.get("defaultPodTemplate")}
    out = []
    for j, w in enumerate(workloads):
        if not isinstance(w, dict) or not isinstance(w.get("name"), str):
            raise ScenarioError(f"{where}: workloads[{j}] needs a name")
        params = w.get("params") or {}
        threshold = w.get("threshold")
        if threshold is not None and (not isinstance(threshold, int | float) or threshold <= 0):
            raise ScenarioError(f"{where}: workload {w['name']}: threshold must be a positive number")
        ops = [_op(op, params, defaults, f"{where}: workload {w['name']}: op {k}") for k, op in enumerate(template)]
        out.append(Workload(case["name"], w["name"], ops, packing, float(interval),
                            None if threshold is None else float(threshold)))
    return out


def _op(op: Any, params: dict, defaults: dict, where: str) -> Op:
    if not isinstance(op, dict) or op.get("opcode") not in OPCODES:
        raise ScenarioError(f"{where}: opcode must be one of {', '.join(OPCODES)}")
    opcode = op["opcode"]
    if opcode == "barrier":
        return Op(opcode, 0, [])
    if opcode == "deletePods":  # pods leaving: every other pod named namePrefix*, in creation order
        prefix = op.get("namePrefix")
        if not isinstance(prefix, str) or not prefix:
            raise ScenarioError(f"{where}: deletePods needs namePrefix (the pods it deletes every other one of)")
    count = _number(op, "count", params, where)
    if opcode == "createPodGroups":
        min_count = _number(op, "minCount", params, where)
        if min_count < 1 and count:
            raise ScenarioError(f"{where}: createPodGroups needs minCount >= 1 (each group's gang minCount)")
        return Op(opcode, count, [], min_count=min_count)
    if opcode == "deletePods":
        return Op(opcode, count, [{"metadata": {"namePrefix": op["namePrefix"]}}])
    single = "nodeTemplate" if opcode == "createNodes" else "podTemplate"
    templates = op.get("podTemplates") if opcode == "createPods" and "podTemplates" in op else [
        op.get(single) or defaults[opcode]]
    if not isinstance(templates, list) or not templates or not all(isinstance(t, dict) for t in templates):
        raise ScenarioError(f"{where}: needs a {single} (or the test case's default one)")
    size = _number(op, "podGroupSize", params, where) if opcode == "createPods" else 0
    return Op(opcode, count, [copy.deepcopy(t) for t in templates], bool(op.get("collectMetrics", False)),
              group_size=size)


def _number(op: dict, key: str, params: dict, where: str) -> int:
    """A whole number >= 0 given as `key` or as `keyParam: $name` (0 when neither is there)."""
    if f"{key}Param" in op:
        ref = op[f"{key}Param"]
        name = ref[1:] if isinstance(ref, str) and ref.startswith("$") else None
        if name is None or name not in params:
            raise ScenarioError(f"{where}: {key}Param {ref!r} names no param of this workload")
        value = params[name]
    else:
        value = op.get(key, None if key == "count" else 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ScenarioError(f"{where}: {key} must be a whole number >= 0, not {value!r}")
    return value


def node_objects(op: Op, start: int) -> list[dict]:
    """`op.count` Node objects from the template, named `<namePrefix><index>`; allocatable = capacity
    unless given (scheduler_perf's templates only set capacity)."""
    out = []
    for i in range(op.count):
        obj = copy.deepcopy(op.templates[i % len(op.templates)])
        meta = obj.setdefault("metadata", {})
        meta["name"] = f"{meta.pop('namePrefix', 'node-')}{start + i:05d}"
        meta.setdefault("labels", {})["kubernetes.io/hostname"] = meta["name"]
        status = obj.setdefault("status", {})
        status.setdefault("allocatable", dict(status.get("capacity") or {}))
        status.setdefault("capacity", dict(status["allocatable"]))
        out.append(obj)
    return out


def pod_objects(op: Op, start: int, namespace: str = "default", group_prefix: str = GROUP_PREFIX) -> list[dict]:
    """`op.count` Pending Pod objects cycling through the op's templates; with `op.group_size`, the i-th
    in PodGroup `<group_prefix><i // group_size>`."""
    out = []
    for i in range(op.count):
        template = op.templates[i % len(op.templates)]
        obj = {k: v for k, v in template.items() if k != "metadata"}  # specs are shared read-only
        if op.group_size:
            obj["spec"] = {**(obj.get("spec") or {}),
                           "schedulingGroup": {"podGroupName": f"{group_prefix}{i // op.group_size}"}}
        meta = dict(template.get("metadata") or {})
        name = f"{meta.pop('namePrefix', 'pod-')}{start + i}"
        meta.update(name=name, namespace=meta.get("namespace", namespace), uid=f"uid-{name}",
                    resourceVersion="1")
        obj["metadata"] = meta
        obj["status"] = {"phase": "Pending"}
        out.append(obj)
    return out


def pod_group_objects(op: Op, group_prefix: str = GROUP_PREFIX) -> list[dict]:
    """`op.count` PodGroups (scheduling.k8s.io/v1beta1) with the op's gang minCount."""
    return [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
             "metadata": {"name": f"{group_prefix}{i}"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": op.min_count}}}} for i in range(op.count)]


def scaled(workloads: list[Workload], factor: float) -> list[Workload]:
    """Every count multiplied by `factor` (at least 1): `--quick` smoke runs. Group sizes and minCounts
    stay, and grouped pods come in whole groups (a tenth of 125 groups of 8 is 12 groups: 96 pods)."""
    def count(o: Op) -> int:
        n = max(1, int(o.count * factor)) if o.count else 0
        return max(o.group_size, n // o.group_size * o.group_size) if o.group_size and n else n
    return [Workload(w.test, w.name, [dataclasses.replace(o, count=count(o)) for o in w.ops], w.packing,
                     w.sample_interval, w.threshold) for w in workloads]
