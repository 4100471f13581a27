"""Pure scoring and filtering (packing policies), and the kube-scheduler extender server around it.

`evaluate(allocation, pod, config)` is the one entry point the extender, the local cluster's
scheduler and the TUI's what-if preview share; the server lives in `kubeview.scheduling.server`.
"""

from kubeview.scheduling.config import POLICIES, PackingConfig
from kubeview.scheduling.evaluate import Placement, evaluate

__all__ = ["POLICIES", "PackingConfig", "Placement", "evaluate"]
