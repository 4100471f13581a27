"""How many connections the producer may hold, from its file-descriptor limit.

A fixed cap of 4,096 was above common ``nofile`` limits: at 128, pre-HELLO connections took every
fd, ``accept`` failed with EMFILE 178,729 times (a traceback each, 97 MB of log) and the finished
image could not be written.  The cap is now what the limit leaves after the fds already open and
a reserve for writing the outputs (image, raw, checkpoint and their temporary files, a directory
fsync, the thread pool); status requests get their own small share.  EMFILE is still possible
(another thread, a library): :class:`AcceptErrors` turns asyncio's traceback per failed accept
into one line per interval (asyncio itself waits a second before accepting again).

The reserve is not a hard one: asyncio's accept loop takes connections until ``accept`` fails, and
those over the cap are refused and closed on the loop's next turn, so a burst of connections holds
every fd for a moment.  Writing the result therefore retries while fds are short
(:data:`SHORT_OF_FDS`, see ``ResultFiles.write``) instead of losing the image (issue 23).
"""

from __future__ import annotations

import errno
import logging
import os
import resource
from dataclasses import dataclass

RESERVE = 24
"""fds kept free for output files and other work besides connections."""
SHORT_OF_FDS = frozenset({errno.EMFILE, errno.ENFILE})
"""errnos that say the process (or the system) is out of fds for now, not that a path is wrong."""
MAX_TASK_CONNECTIONS = 4096
MAX_STATUS_CONNECTIONS = 32

log = logging.getLogger("renderer.producer")


@dataclass(frozen=True)
class FdBudget:
    limit: int  # RLIMIT_NOFILE soft limit
    open_now: int
    tasks: int  # connections for consumers (the task port)
    status: int  # concurrent status requests


def budget(limit: int, open_now: int, reserve: int = RESERVE) -> FdBudget:
    """Split what ``limit`` leaves after ``open_now`` and ``reserve`` (pure)."""
    spare = max(2, limit - open_now - reserve)
    status = max(1, min(MAX_STATUS_CONNECTIONS, spare // 8))
    return FdBudget(limit, open_now, max(1, min(MAX_TASK_CONNECTIONS, spare - status)), status)


def current_budget() -> FdBudget:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    try:
        open_now = len(os.listdir("/proc/self/fd")) - 1  # less the listing's own fd
    except OSError:
        open_now = 16
    return budget(int(soft), open_now)


class AcceptErrors:
    """A loop exception handler: EMFILE/ENFILE/ENOBUFS/ENOMEM from ``accept`` become one warning
    per ``interval`` seconds with a count; everything else goes to the default handler."""

    RESOURCE = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})

    def __init__(self, clock: object, interval: float = 10.0) -> None:
        self.clock, self.interval = clock, interval
        self.count = 0
        self._said_at: float | None = None

    def __call__(self, loop: object, context: dict) -> None:
        exc = context.get("exception")
        if stale_accept_retry(context):
            log.debug("a retry of accept() after the server closed: ignored")
            return
        if not (isinstance(exc, OSError) and exc.errno in self.RESOURCE):
            loop.default_exception_handler(context)  # type: ignore[attr-defined]
            return
        self.count += 1
        now = self.clock()  # type: ignore[operator]
        if self._said_at is None or now - self._said_at >= self.interval:
            self._said_at = now
            log.warning("cannot accept connections: %s (%d times so far); retrying in 1 s",
                        os.strerror(exc.errno), self.count)


ACCEPT_RETRY_DELAY = 1.0
"""asyncio's wait before accepting again after EMFILE (``asyncio.constants.ACCEPT_RETRY_DELAY``)."""


def stale_accept_retry(context: dict) -> bool:
    """asyncio (3.11) retries ``accept`` a second after EMFILE with a timer that closing the server
    does not cancel; on the closed socket it raises ValueError (fd -1): a traceback per retry, 1,812
    log lines after a finished render at ``nofile`` 64 under a connection flood (issue 23)."""
    callback = getattr(context.get("handle"), "_callback", None)
    return isinstance(context.get("exception"), ValueError) and getattr(callback, "__name__", "") == "_start_serving"
