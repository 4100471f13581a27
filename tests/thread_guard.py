"""After the summary, no thread a test started may keep pytest from exiting.

A non-daemon thread that a test started and never stopped keeps the interpreter alive after the
last line: CI then hangs until it is stopped (stop 43: a failed test's KubeSource thread hung the
run for an hour). `exit_if_threads_are_left` gives such threads a grace period to end, then names
them and exits with the run's status (1 if it passed), so the failure is a line, not a hang.
"""

from __future__ import annotations

import os
import sys
import threading
import time

GRACE_S = float(os.environ.get("KUBEVIEW_TEST_THREAD_GRACE", "20"))


def exit_if_threads_are_left(status: int, grace: float = GRACE_S) -> None:
    left = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    deadline = time.monotonic() + grace
    for t in left:
        t.join(max(0.0, deadline - time.monotonic()))
    left = [t for t in left if t.is_alive()]
    if not left:
        return
    status = status or 1
    print(f"\npytest: {len(left)} thread(s) started by tests are still running and would keep this process "
          f"from exiting: {', '.join(sorted(t.name for t in left))}; exiting with {status}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
