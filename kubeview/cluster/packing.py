"""The packing policy a headless answer ("would this gang fit now, and where") assumes.

The embedded cluster's scheduler says what it runs (`LocalSource.packing`). For a real cluster kubeview
cannot read kube-scheduler's profile, so it assumes kube-scheduler's default scoring, least allocated
first, which `spread` approximates (it weighs GPUs where kube-scheduler's default weighs cpu and
memory only), unless the caller names a policy (`kubeview fit --policy`) — and says which it used.
"""

from __future__ import annotations

from kubeview.cluster.source import ClusterSource, KnowsPacking
from kubeview.scheduling.config import PackingConfig

KUBE_DEFAULT = "kube-scheduler's default scoring (least allocated), approximated as spread"


def current_packing(source: ClusterSource, policy: str | None = None) -> tuple[PackingConfig, str]:
    """(the config, where it comes from) for `source`; `policy` overrides the policy."""
    if isinstance(source, KnowsPacking):
        config, where = source.packing, "the embedded scheduler's"
    else:
        config, where = PackingConfig(policy="spread"), KUBE_DEFAULT
    if policy is not None and policy != config.policy:
        config, where = config.merged({"policy": policy}), "--policy"
    return config, where
