"""What an eviction refusal looks like, from the real Eviction API (cluster/kube/evict.py) and the
embedded one (cluster/local/eviction.py) alike: the HTTP code, the apiserver's message and its cause."""

from __future__ import annotations

from kubeview.cluster.source import ActionError


class EvictionRefused(ActionError):
    """The eviction was refused; `code` is the HTTP status (429 when a PodDisruptionBudget forbids it)."""

    def __init__(self, code: int, message: str, cause: str | None = None) -> None:
        super().__init__(f"{message} {cause}".strip() if cause else message)
        self.code, self.reason, self.cause = code, message, cause
