"""The local cluster's YAML file (`--cluster FILE`): nodes, node groups and system workloads, validated.

Every problem is one `ClusterFileError` naming the file and the field, so `kubeview` prints one
line and exits instead of showing a traceback. The bundled default lives in `clusters/default.yaml`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kubeview.cluster.source import SourceError
from kubeview.model.quantity import QuantityError, parse
from renderer import bounded_yaml

DEFAULT_FILE = Path(__file__).parent / "clusters" / "default.yaml"
MEMORY_EVICTION = 100 * 2**20  # kubelet's default --eviction-hard memory.available<100Mi
NODEFS_EVICTION = 0.10  # nodefs.available<10%
SYSTEM_KINDS = ("DaemonSet", "Deployment", "Static")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


class ClusterFileError(SourceError):
    """The cluster YAML (`--cluster FILE`) is unusable; the message names the file and the field.
    A file named on the command line: a usage error (exit 2), as a bad scene is."""

    def __init__(self, message: str) -> None:
        super().__init__(message, usage=True)


@dataclass(frozen=True, slots=True)
class DraSpec:
    """A node's DRA GPUs in the cluster YAML (`dra:`): `gpus` full GPUs, or each partitioned into `mig`
    (profile -> count per GPU)."""

    gpus: int
    driver: str = "gpu.nvidia.com"
    product: str = "NVIDIA H100 80GB HBM3"
    memory: str = "80Gi"
    mig: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NodeSpec:
    name: str
    capacity: dict[str, str]
    allocatable: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict] = field(default_factory=list)
    control_plane: bool = False
    dra: DraSpec | None = None  # GPUs published as a ResourceSlice instead of status.capacity (local/dra.py)


@dataclass(frozen=True, slots=True)
class NodeGroupSpec:
    """An autoscaled node group (`nodeGroups:`): `size` nodes at start, grown by the embedded autoscaler
    (local/node_groups.py) up to `max_size` when pods wait; each node is `template` (its name unused:
    nodes are `<group>-<5 letters>`), registered `provision_seconds` after the scale-up asked for it."""

    name: str
    min_size: int
    max_size: int
    size: int
    template: NodeSpec
    provision_seconds: float = 5.0


@dataclass(frozen=True, slots=True)
class SystemWorkload:
    kind: str  # DaemonSet | Deployment | Static
    name: str
    namespace: str
    image: str
    replicas: int = 1
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    source: str
    nodes: list[NodeSpec]
    system: list[SystemWorkload]
    node_groups: list[NodeGroupSpec] = field(default_factory=list)


def _fmt_bytes(value: int) -> str:
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value % size == 0:
            return f"{value // size}{suffix}"
    return str(value)


def default_allocatable(capacity: dict[str, str]) -> dict[str, str]:
    """What a kubelet with no reservations reports: capacity less the hard eviction thresholds."""
    out = dict(capacity)
    if "memory" in capacity:
        out["memory"] = _fmt_bytes(max(0, int(parse(capacity["memory"])) - MEMORY_EVICTION))
    if "ephemeral-storage" in capacity:
        total = int(parse(capacity["ephemeral-storage"]))
        out["ephemeral-storage"] = str(total - int(total * NODEFS_EVICTION))
    return out


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> ClusterFileError:
        return ClusterFileError(f"{self.source}: {where}: {problem}")

    def mapping(self, value: object, where: str) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, "must be a mapping")
        return value

    def strings(self, value: object, where: str) -> dict[str, str]:
        out = {}
        for k, v in self.mapping(value, where).items():
            if not isinstance(k, str) or isinstance(v, dict | list):
                raise self.fail(f"{where}.{k}", "must be a string")
            out[k] = "" if v is None else str(v)
        return out

    def quantities(self, value: object, where: str) -> dict[str, str]:
        out = self.strings(value, where)
        for k, v in out.items():
            try:
                if parse(v) < 0:
                    raise self.fail(f"{where}.{k}", "must not be negative")
            except QuantityError:
                raise self.fail(f"{where}.{k}", f"not a quantity: {v!r}") from None
        return out

    def tolerations(self, value: object, where: str) -> list[dict]:
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            raise self.fail(where, "must be a list of mappings")
        out = []
        for i, t in enumerate(value):
            tol = {k: str(v) for k, v in t.items()}
            tol.setdefault("operator", "Equal" if "value" in tol else "Exists")
            if tol["operator"] not in ("Equal", "Exists"):
                raise self.fail(f"{where}[{i}].operator", "must be Equal or Exists")
            out.append(tol)
        return out

    def node(self, raw: object, i: int, where: str = "") -> NodeSpec:
        where = where or f"nodes[{i}]"
        raw = self.mapping(raw, where)
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(f"{where}.name", "missing")
        capacity = self.quantities(raw.get("capacity"), f"{where}.capacity")
        for required in ("cpu", "memory"):
            if required not in capacity:
                raise self.fail(f"{where}.capacity.{required}", "missing")
        capacity.setdefault("pods", "110")
        capacity.setdefault("ephemeral-storage", "100Gi")
        capacity.setdefault("hugepages-1Gi", "0")
        capacity.setdefault("hugepages-2Mi", "0")
        allocatable = default_allocatable(capacity)
        allocatable.update(self.quantities(raw.get("allocatable"), f"{where}.allocatable"))
        taints = raw.get("taints") or []
        if not isinstance(taints, list):
            raise self.fail(f"{where}.taints", "must be a list")
        clean = []
        for j, t in enumerate(taints):
            t = self.strings(t, f"{where}.taints[{j}]")
            if not t.get("key"):
                raise self.fail(f"{where}.taints[{j}].key", "missing")
            if t.get("effect") not in TAINT_EFFECTS:
                raise self.fail(f"{where}.taints[{j}].effect", f"must be one of {', '.join(TAINT_EFFECTS)}")
            clean.append(t)
        return NodeSpec(name=name, capacity=capacity, allocatable=allocatable,
                        labels=self.strings(raw.get("labels"), f"{where}.labels"), taints=clean,
                        control_plane=bool(raw.get("controlPlane", False)),
                        dra=self.dra(raw.get("dra"), f"{where}.dra"))

    def node_group(self, raw: object, i: int) -> NodeGroupSpec:
        """`{name, minSize, maxSize, size, provisionSeconds, template: {labels, capacity, taints, ...}}`."""
        where = f"nodeGroups[{i}]"
        raw = self.mapping(raw, where)
        unknown = set(raw) - {"name", "minSize", "maxSize", "size", "provisionSeconds", "template"}
        if unknown:
            raise self.fail(f"{where}.{sorted(unknown)[0]}",
                            "unknown field (name, minSize, maxSize, size, provisionSeconds, template)")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(f"{where}.name", "missing")
        sizes = {}
        for key, default in (("minSize", 0), ("maxSize", None), ("size", raw.get("minSize", 0))):
            value = raw.get(key, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise self.fail(f"{where}.{key}", "must be a non-negative integer")
            sizes[key] = value
        if not sizes["minSize"] <= sizes["size"] <= sizes["maxSize"]:
            raise self.fail(f"{where}.size", f"must be between minSize {sizes['minSize']} and maxSize "
                            f"{sizes['maxSize']}")
        delay = raw.get("provisionSeconds", 5.0)
        if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
            raise self.fail(f"{where}.provisionSeconds", "must be a non-negative number")
        template = {**self.mapping(raw.get("template"), f"{where}.template"), "name": name}
        spec = self.node(template, i, f"{where}.template")
        return NodeGroupSpec(name=name, min_size=sizes["minSize"], max_size=sizes["maxSize"], size=sizes["size"],
                             template=spec, provision_seconds=float(delay))

    def dra(self, value: object, where: str) -> DraSpec | None:
        """`dra: {gpus: N, driver:, productName:, memory:, mig: {profile: count per GPU}}`."""
        if value is None:
            return None
        raw = self.mapping(value, where)
        unknown = set(raw) - {"gpus", "driver", "productName", "memory", "mig"}
        if unknown:
            raise self.fail(f"{where}.{sorted(unknown)[0]}", "unknown field (gpus, driver, productName, memory, mig)")
        gpus = raw.get("gpus")
        if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
            raise self.fail(f"{where}.gpus", "must be a positive integer")
        mig = {}
        for profile, count in self.mapping(raw.get("mig"), f"{where}.mig").items():
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise self.fail(f"{where}.mig.{profile}", "must be a positive integer (devices per GPU)")
            mig[str(profile)] = count
        memory = self.quantities({"memory": raw.get("memory", "80Gi")}, where)["memory"]
        return DraSpec(gpus=gpus, driver=str(raw.get("driver") or "gpu.nvidia.com"),
                       product=str(raw.get("productName") or "NVIDIA H100 80GB HBM3"), memory=memory, mig=mig)

    def workload(self, raw: object, i: int) -> SystemWorkload:
        where = f"system[{i}]"
        raw = self.mapping(raw, where)
        kind = raw.get("kind")
        if kind not in SYSTEM_KINDS:
            raise self.fail(f"{where}.kind", f"must be one of {', '.join(SYSTEM_KINDS)}")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(f"{where}.name", "missing")
        replicas = raw.get("replicas", 1)
        if not isinstance(replicas, int) or replicas < 0:
            raise self.fail(f"{where}.replicas", "must be a non-negative integer")
        return SystemWorkload(
            kind=kind, name=name, namespace=str(raw.get("namespace") or "kube-system"),
            image=str(raw.get("image") or f"{name}:latest"), replicas=replicas,
            requests=self.quantities(raw.get("requests"), f"{where}.requests"),
            limits=self.quantities(raw.get("limits"), f"{where}.limits"),
            node_selector=self.strings(raw.get("nodeSelector"), f"{where}.nodeSelector"),
            tolerations=self.tolerations(raw.get("tolerations"), f"{where}.tolerations"),
        )


def parse_cluster(text: str, source: str = "<cluster>") -> ClusterConfig:
    """Validate cluster YAML text; `source` names it in error messages."""
    check = _Checker(source)
    try:
        doc = bounded_yaml.safe_load(text, loader=yaml.SafeLoader)
    except bounded_yaml.TooDeep as exc:
        raise check.fail(f"line {exc.line}", f"nested more than {exc.limit} levels deep") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "yaml"
        raise check.fail(where, f"not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    doc = check.mapping(doc, "top level")
    raw_groups = doc.get("nodeGroups") or []
    if not isinstance(raw_groups, list):
        raise check.fail("nodeGroups", "must be a list")
    groups = [check.node_group(g, i) for i, g in enumerate(raw_groups)]
    raw_nodes = doc.get("nodes") or []
    if not isinstance(raw_nodes, list) or not (raw_nodes or groups):
        raise check.fail("nodes", "must be a non-empty list")
    nodes = [check.node(n, i) for i, n in enumerate(raw_nodes)]
    seen: set[str] = set()
    for i, n in enumerate(nodes):
        if n.name in seen:
            raise check.fail(f"nodes[{i}].name", f"duplicate node {n.name!r}")
        seen.add(n.name)
    for i, g in enumerate(groups):
        if g.name in {h.name for h in groups[:i]}:
            raise check.fail(f"nodeGroups[{i}].name", f"duplicate node group {g.name!r}")
    raw_system = doc.get("system") or []
    if not isinstance(raw_system, list):
        raise check.fail("system", "must be a list")
    return ClusterConfig(source=source, nodes=nodes, system=[check.workload(w, i) for i, w in enumerate(raw_system)],
                         node_groups=groups)


def load_cluster(path: str | Path | None = None) -> ClusterConfig:
    """Read the cluster file (default: the bundled 5-node cluster)."""
    p = Path(path) if path else DEFAULT_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ClusterFileError(f"{p}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_cluster(text, str(p) if path else p.name)
