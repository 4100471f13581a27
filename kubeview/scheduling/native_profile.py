"""kubeview's packing policy as kube-scheduler's own scoring: a KubeSchedulerConfiguration profile.

Native mode packs GPUs without the extender: NodeResourcesFit scores with `MostAllocated` (or
`RequestedToCapacityRatio`, the same ramp as a shape) for `pack` and `LeastAllocated` for `spread`,
with the policy's weights as integer resource weights (kube-scheduler accepts 1..100: the largest
policy weight becomes 100, the others in proportion, never below 1). cpu and memory join at weight 1
when the policy leaves them out, so a pod requesting none of the policy's resources is still packed,
as the extender falls back to cpu and memory, and GPU ties go to the fuller node instead of a coin.

Two default score plugins are disabled, both for the same reason: a point of theirs can outvote a
point of packing, and the what-if (`scoring.native_scores`) would have to guess it.
NodeResourcesBalancedAllocation rewards even fractions of cpu, memory and GPU, which pulls against
packing (it is what strands the 2-GPU pod of the 1-1-2 story); ImageLocality prefers nodes holding
the image, from `node.status.images`, which kubeview does not model. The others stay at their
defaults: they are equal on every node for a plain GPU pod (no tolerations of PreferNoSchedule
taints, preferred affinity, spread constraints or owner) and express the user's own intent otherwise.
`percentageOfNodesToScore: 100` makes kube-scheduler score every feasible node, as the what-if does
(above 100 nodes it would otherwise score a sample). Pure: a config in, dicts out.

`balanced` has no native form (BalancedAllocation would, but its std of fractions is not the
extender's): it is refused with the reason. Per-node bias and avoid, live weights and binding are
the extender's alone; see docs/scheduler.md, "Native packing".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from kubeview.scheduling.config import FALLBACK_RESOURCES, PackingConfig

SCHEDULER_NAME = "kubeview-scheduler"  # the second scheduler of manifests/scheduler/second-scheduler
NATIVE_POLICIES = ("pack", "spread")  # the policies with a native form
STRATEGIES = ("MostAllocated", "LeastAllocated", "RequestedToCapacityRatio")
MAX_RESOURCE_WEIGHT = 100  # kube-scheduler's validation: a resource weight is 1..100
MAX_SHAPE_SCORE = 10  # config.MaxCustomPriorityScore: shape scores are 0..10, scaled x10 by the plugin
DISABLED_SCORES = ("NodeResourcesBalancedAllocation", "ImageLocality")
PACK_SHAPE = ((0, 0), (100, MAX_SHAPE_SCORE))  # RequestedToCapacityRatio's form of MostAllocated


@dataclass(frozen=True, slots=True)
class NativeScoring:
    """NodeResourcesFit's scoring strategy as the profile writes it and the what-if computes it."""

    strategy: str = "MostAllocated"
    resources: tuple[tuple[str, int], ...] = (("nvidia.com/gpu", 100), ("cpu", 1), ("memory", 1))
    """(resource, integer weight 1..100), in the profile's order."""
    shape: tuple[tuple[int, int], ...] = ()
    """(utilization 0..100, score 0..10) points, RequestedToCapacityRatio only."""

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {self.strategy!r}")
        if not self.resources or any(not 1 <= w <= MAX_RESOURCE_WEIGHT for _, w in self.resources):
            raise ValueError(f"resource weights must be integers 1..{MAX_RESOURCE_WEIGHT}")
        if (self.strategy == "RequestedToCapacityRatio") != bool(self.shape):
            raise ValueError("a shape goes with RequestedToCapacityRatio, and only with it")
        utils = [u for u, _ in self.shape]
        if utils != sorted(set(utils)) or any(not 0 <= u <= 100 or not 0 <= s <= MAX_SHAPE_SCORE
                                              for u, s in self.shape):
            raise ValueError("shape points need increasing utilization 0..100 and scores 0..10")

    @classmethod
    def from_config(cls, config: PackingConfig, strategy: str | None = None) -> NativeScoring:
        """The policy's native form; `strategy` picks RequestedToCapacityRatio over MostAllocated for
        `pack`. Raises ValueError where the policy has none (`balanced`, or spread with a shape)."""
        if config.policy == "balanced":
            raise ValueError("policy balanced has no native form (kube-scheduler's BalancedAllocation is not "
                             "kubeview's); use pack or spread, or the extender")
        chosen = strategy or ("MostAllocated" if config.policy == "pack" else "LeastAllocated")
        wanted = {"pack": ("MostAllocated", "RequestedToCapacityRatio"), "spread": ("LeastAllocated",)}
        if chosen not in wanted[config.policy]:
            raise ValueError(f"policy {config.policy} is {' or '.join(wanted[config.policy])} natively, not {chosen}")
        return cls(strategy=chosen, resources=integer_weights(config.weights),
                   shape=PACK_SHAPE if chosen == "RequestedToCapacityRatio" else ())

    def fit_args(self) -> dict:
        """NodeResourcesFitArgs with this scoring strategy."""
        strategy: dict = {"type": self.strategy,
                          "resources": [{"name": name, "weight": w} for name, w in self.resources]}
        if self.shape:
            strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in self.shape]}
        return {"scoringStrategy": strategy}


def native_config(config: PackingConfig, strategy: str | None = None) -> PackingConfig:
    """`config` scoring as the native profile made from it does: what `evaluate` then models."""
    return replace(config, native=NativeScoring.from_config(config, strategy))


def integer_weights(weights: Mapping[str, float]) -> tuple[tuple[str, int], ...]:
    """The policy's weights as kube-scheduler's integers 1..100 (largest 100, the rest in proportion,
    none below 1; weight 0 left out), cpu and memory at 1 where the policy leaves them out; heaviest
    first, then by name."""
    items = [(name, float(w)) for name, w in sorted(weights.items()) if w > 0]
    top = max(w for _, w in items)
    out = [(name, max(1, round(MAX_RESOURCE_WEIGHT * w / top))) for name, w in items]
    out += [(name, 1) for name in FALLBACK_RESOURCES if name not in dict(out)]
    return tuple(sorted(out, key=lambda item: (-item[1], item[0])))  # one order: reading back writes the same


def profile(scoring: NativeScoring, scheduler_name: str = SCHEDULER_NAME) -> dict:
    """One KubeSchedulerConfiguration profile that packs with kube-scheduler's own plugins."""
    return {
        "schedulerName": scheduler_name,
        "percentageOfNodesToScore": 100,
        "plugins": {"score": {"disabled": [{"name": name} for name in DISABLED_SCORES]}},
        "pluginConfig": [{"name": "NodeResourcesFit", "args": scoring.fit_args()}],
    }


def scheduler_configuration(scoring: NativeScoring, scheduler_name: str = SCHEDULER_NAME,
                            lease_namespace: str = "kubeview-system") -> dict:
    """The whole KubeSchedulerConfiguration the second scheduler's ConfigMap holds."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": True, "resourceNamespace": lease_namespace,
                           "resourceName": scheduler_name},
        "profiles": [profile(scoring, scheduler_name)],
    }


def config_from_configuration(doc: object, scheduler_name: str = SCHEDULER_NAME) -> PackingConfig:
    """The policy a KubeSchedulerConfiguration's profile `scheduler_name` packs with, native set: what
    `profile` wrote, read back (the weights as the integers they became). ValueError in one sentence
    when the profile is missing or packs some other way."""
    profiles = doc.get("profiles") if isinstance(doc, dict) else None
    prof = next((p for p in profiles or [] if isinstance(p, dict) and p.get("schedulerName") == scheduler_name), None)
    if prof is None:
        raise ValueError(f"the configuration has no profile {scheduler_name}")
    args = next((c.get("args") for c in prof.get("pluginConfig") or []
                 if isinstance(c, dict) and c.get("name") == "NodeResourcesFit"), None)
    strategy = args.get("scoringStrategy") if isinstance(args, dict) else None
    if not isinstance(strategy, dict):
        raise ValueError(f"profile {scheduler_name} sets no NodeResourcesFit scoringStrategy (kube-scheduler's "
                         "default, LeastAllocated on cpu and memory, is not kubeview's)")
    kind = strategy.get("type")
    policy = {"MostAllocated": "pack", "RequestedToCapacityRatio": "pack", "LeastAllocated": "spread"}.get(str(kind))
    if policy is None:
        raise ValueError(f"profile {scheduler_name} scores with {kind!r}, not one of {', '.join(STRATEGIES)}")
    resources = strategy.get("resources") or []
    weights = {r.get("name"): r.get("weight") for r in resources if isinstance(r, dict)}
    config = PackingConfig.from_dict({"policy": policy, "weights": weights})
    scoring = NativeScoring.from_config(config, str(kind))
    shape = ((strategy.get("requestedToCapacityRatio") or {}).get("shape")) or []
    if kind == "RequestedToCapacityRatio" and [(p.get("utilization"), p.get("score")) for p in shape] != list(PACK_SHAPE):
        raise ValueError(f"profile {scheduler_name}'s RequestedToCapacityRatio shape is not kubeview's "
                         f"{[{'utilization': u, 'score': s} for u, s in PACK_SHAPE]}")
    return replace(config, native=scoring)
