"""Pure scoring and filtering (packing policies), and the kube-scheduler extender server around it."""
