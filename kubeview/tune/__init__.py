"""`kubeview tune`: an Optuna study over the render job's replicas, cpu request and task size."""
