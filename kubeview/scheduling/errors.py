"""The one error a request body can earn: what kube-scheduler sent cannot be served (HTTP 400)."""


class ProtocolError(ValueError):
    """A request kube-scheduler would never send; the message is the reason (HTTP 400)."""
