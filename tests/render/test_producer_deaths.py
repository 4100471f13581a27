"""What kubeview says when the render's producer dies (issue 16 item 15), pure."""

from __future__ import annotations

from kubeview.render.producer_deaths import DeathWatch, describe_exit
from kubeview.render.status import parse_status
from tests.render.test_status import DOC

TOTAL = DOC["samples_total"]


def status(done: int) -> object:
    return parse_status({**DOC, "samples_done": done})


def test_describe_exit() -> None:
    assert describe_exit({"exitCode": 137, "reason": "Error"}) == "killed by SIGKILL, exit 137"
    assert describe_exit({"exitCode": 139}) == "killed by SIGSEGV, exit 139"
    assert describe_exit({"exitCode": 137, "reason": "OOMKilled"}) == "out of memory (OOMKilled), exit 137"
    assert describe_exit({"exitCode": 1, "reason": "Error"}) == "exit 1"
    assert describe_exit(None) == "no exit status recorded"


def test_one_death_says_what_happened_and_what_was_kept() -> None:
    w = DeathWatch(checkpoint="/w/checkpoint.npz")
    assert w.observe(0, None, status(TOTAL // 2)) == []
    assert w.observe(1, {"exitCode": 137}, None) == [
        "render: the producer died at 50.0% (killed by SIGKILL, exit 137); restarting it (death 1)"]
    assert w.observe(1, {"exitCode": 137}, None) == []  # said once
    assert w.observe(1, {"exitCode": 137}, status(TOTAL * 2 // 5)) == [
        "render: the producer is back from its checkpoint /w/checkpoint.npz at 40.0%; 10.0% of the work is done again"]
    assert w.give_up() is None


def test_deaths_with_progress_between_do_not_give_up() -> None:
    w = DeathWatch(checkpoint="c")
    done = 0
    for n in range(1, 8):
        done += TOTAL // 10
        w.observe(n - 1, None, status(done))
        w.observe(n, {"exitCode": 137}, None)
        assert w.give_up() is None, n


def test_repeated_deaths_without_progress_give_an_accurate_message() -> None:
    w = DeathWatch(checkpoint="c")
    w.observe(0, None, status(TOTAL // 4))
    w.observe(1, {"exitCode": 139}, None)
    assert w.give_up() is None
    w.observe(1, None, status(TOTAL // 4))  # came back at 25%, then died before any new result
    w.observe(2, {"exitCode": 139}, None)
    assert w.give_up() is None
    w.observe(3, {"exitCode": 139}, None)  # died again before it even answered
    assert w.give_up() == ("the producer died 3 times, the last 3 without the render getting further "
                           "(last: killed by SIGSEGV, exit 139); 25.0% of the image was done, kept in c")


def test_several_deaths_between_two_looks_are_counted() -> None:
    w = DeathWatch()
    assert w.observe(2, {"exitCode": 1}, None) == [
        "render: the producer died before it answered (exit 1, 2 deaths since the last look); restarting it (death 2)"]
    assert w.observe(2, None, status(0)) == [
        "render: the producer is back with no checkpoint at 0.0%; 0.0% of the work is done again"]
