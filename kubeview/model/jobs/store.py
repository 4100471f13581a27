"""The Jobs the model holds, with each Job's pods (pure; `ClusterModel` feeds it Job and Pod events).

Pods are kept here only when they belong to a Job (`JobPodView.from_api` is None otherwise), so the
cost for other pods is one label lookup. A disrupted pod is remembered after its object is deleted
(a preempted pod goes away once the Job controller drops its finalizer), so the Workloads screen can
still say which index was disrupted and what became of it; the memory goes with the Job.
"""

from __future__ import annotations

from kubeview.model.jobs.views import JobPodView, JobView
from kubeview.model.staged import NOT_BUILT, Staged

Key = tuple[str, str]


class JobStore:
    def __init__(self) -> None:
        self.jobs: dict[Key, JobView] = {}
        self._pods: dict[Key, dict[Key, JobPodView]] = {}  # (namespace, job) -> pod key -> view
        self._gone: dict[Key, dict[Key, JobPodView]] = {}  # disrupted pods deleted since: last view
        self._staged = Staged(JobPodView.from_api)  # a pod list in progress, its Job pods built per page
        self.prepare_pods = self._staged.add  # `Calls.prepare`

    # -- Jobs ----------------------------------------------------------------------------------
    def put_job(self, obj: dict) -> bool:
        view = JobView.from_api(obj)
        old = self.jobs.get(view.key)
        if old is not None and old.resource_version and old.resource_version == view.resource_version:
            return False
        if old is not None and old.uid != view.uid:  # re-created under the same name: a new history
            self._gone.pop(view.key, None)
        self.jobs[view.key] = view
        return True

    def delete_job(self, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        self._gone.pop(key, None)
        return self.jobs.pop(key, None) is not None

    def relist_jobs(self, objects: list[dict]) -> None:
        """Replace every Job; the history of a Job that went goes with it (pods watched before their
        Job is listed, as the kinds' informers race, keep theirs)."""
        old, self.jobs = self.jobs, {}
        for obj in objects:
            view = JobView.from_api(obj)
            self.jobs[view.key] = view
        self._gone = {k: v for k, v in self._gone.items() if k in self.jobs or k not in old}

    # -- pods ----------------------------------------------------------------------------------
    def put_pod(self, obj: dict) -> bool:
        view = JobPodView.from_api(obj)
        if view is None:
            return False
        pods = self._pods.setdefault((view.namespace, view.job), {})
        old = pods.get(view.key)
        if old is not None and old.resource_version and old.resource_version == view.resource_version:
            return False
        pods[view.key] = view
        gone = self._gone.get((view.namespace, view.job))
        if gone is not None:
            gone.pop(view.key, None)
        return True

    def delete_pod(self, obj: dict) -> bool:
        view = JobPodView.from_api(obj)
        if view is None:
            return False
        job = (view.namespace, view.job)
        last = (self._pods.get(job) or {}).pop(view.key, None) or view
        if last.disruption is not None or view.disruption is not None:
            self._gone.setdefault(job, {})[view.key] = view if view.disruption is not None else last
        return True

    def relist_pods(self, objects: list[dict]) -> None:
        """Replace every Job pod; disrupted ones missing from the list are remembered as deleted."""
        old = self._pods
        self._pods = {}
        for obj, pre in zip(objects, self._staged.take(objects), strict=True):
            view = JobPodView.from_api(obj) if pre is NOT_BUILT else pre  # staged: built of this obj
            if view is not None:
                self._pods.setdefault((view.namespace, view.job), {})[view.key] = view
        for job, pods in old.items():
            kept = self._pods.get(job) or {}
            for key, view in pods.items():
                if key not in kept and view.disruption is not None:
                    self._gone.setdefault(job, {})[key] = view

    # -- reads ---------------------------------------------------------------------------------
    def pods_of(self, namespace: str, job: str) -> list[JobPodView]:
        """The Job's pods that exist now, by name."""
        return sorted((self._pods.get((namespace, job)) or {}).values(), key=lambda p: p.name)

    def history_of(self, namespace: str, job: str) -> list[JobPodView]:
        """The Job's pods now and its disrupted pods already deleted, by name."""
        now = self._pods.get((namespace, job)) or {}
        gone = self._gone.get((namespace, job)) or {}
        return sorted([*now.values(), *(v for k, v in gone.items() if k not in now)], key=lambda p: p.name)
