"""ResourceQuota as kubeview reads it (#40): whose share of the cluster a namespace has used, and which
workloads the API server's quota admission holds back.

Pure: `store.QuotaStore` (`model.quotas`, kind "ResourceQuota") keeps each quota's hard and used (the
quota controller's `status.used`), scopes and scope selector; `counting.count_usage` counts the same
keys from the model's pods (a view shows both where they differ); `held.py` reads "held by quota" for a
Job, ReplicaSet or StatefulSet from its controller's FailedCreate Events (the API server's words) and
its status (pods not created), with the one wording the views use.
"""
