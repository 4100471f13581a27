"""kubeview's packing policy as kube-scheduler's own scoring: a KubeSchedulerConfiguration profile.

Native mode packs GPUs without the extender: NodeResourcesFit scores with `MostAllocated` (or
`RequestedToCapacityRatio`, the same ramp as a shape) for `pack` and `LeastAllocated` for `spread`,
with the policy's weights as integer resource weights (kube-scheduler accepts 1..100: the largest
policy weight becomes 100, the others in proportion, never below 1). cpu and memory join at weight 1
when the policy leaves them out, so a pod requesting none of the policy's resources is still packed,
as the extender falls back to cpu and memory, and GPU ties go to the fuller node instead of a coin.

Two default score plugins are disabled, both for the same reason: a point of theirs can outvote a
point of packing, and the what-if (`scoring.native_scores`) would have to guess it.
NodeResourcesBalancedAllocation rewards even fractions of cpu and memory, which pulls against
packing, and at weight 1 one of its points can beat one of Fit's; ImageLocality prefers nodes
holding the image, from `node.status.images`, which kubeview does not model. The others stay at their
defaults: they are equal on every node for a plain GPU pod (no tolerations of PreferNoSchedule
taints, preferred affinity, spread constraints or owner) and express the user's own intent otherwise.
`percentageOfNodesToScore: 100` makes kube-scheduler score every feasible node, as the what-if does
(above 100 nodes it would otherwise score a sample). The strategy and its integer weights are
native_scoring.NativeScoring; `PackingConfig.native` holds one. Pure: a config in, dicts out.

`balanced` has no native form (BalancedAllocation would, but its std of fractions is not the
extender's): it is refused with the reason. Per-node bias and avoid, live weights and binding are
the extender's alone; see docs/scheduler.md, "Native packing".
"""

from __future__ import annotations

from dataclasses import replace

from kubeview.scheduling.config import FALLBACK_RESOURCES, PackingConfig
from kubeview.scheduling.native_scoring import PACK_SHAPE, STRATEGIES, NativeScoring

SCHEDULER_NAME = "kubeview-scheduler"  # the second scheduler of manifests/scheduler/second-scheduler
DISABLED_SCORES = ("NodeResourcesBalancedAllocation", "ImageLocality")


def scoring_of(config: PackingConfig, strategy: str | None = None) -> NativeScoring:
    """The policy's native form (native_scoring.NativeScoring.from_policy); ValueError where it has none."""
    return NativeScoring.from_policy(config.policy, config.weights, FALLBACK_RESOURCES, strategy)


def native_config(config: PackingConfig, strategy: str | None = None) -> PackingConfig:
    """`config` scoring as the native profile made from it does: what `evaluate` then models."""
    return replace(config, native=scoring_of(config, strategy))


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
    scoring = scoring_of(config, str(kind))
    shape = ((strategy.get("requestedToCapacityRatio") or {}).get("shape")) or []
    if kind == "RequestedToCapacityRatio" and [(p.get("utilization"), p.get("score")) for p in shape] != list(PACK_SHAPE):
        raise ValueError(f"profile {scheduler_name}'s RequestedToCapacityRatio shape is not kubeview's "
                         f"{[{'utilization': u, 'score': s} for u, s in PACK_SHAPE]}")
    return replace(config, native=scoring)
