"""The one error a request body can earn (HTTP 400), and the signal that a call must wait to be answered."""


class ProtocolError(ValueError):
    """A request kube-scheduler would never send; the message is the reason (HTTP 400)."""


class MustWait(Exception):
    """A verb called with `may_wait=False` needs to wait (for the watch to reach the request's pod):
    the server then runs it again in a worker thread, where waiting blocks no other connection."""
