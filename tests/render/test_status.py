"""Parsing the producer's /status JSON and the headless progress line (pure)."""

from __future__ import annotations

import json

import pytest

from kubeview.render.status import StatusError, human_seconds, parse_status, progress_line

DOC = {
    "scene": "spheres", "width": 400, "height": 224, "spp": 100,
    "tasks": {"total": 112, "done": 47, "leased": 2, "queued": 63, "requeued": 1},
    "samples_done": 3763200, "samples_total": 8960000, "samples_per_second": 1234567.8, "eta_seconds": 4.2,
    "elapsed_seconds": 3.05, "finished": False, "output": None,
    "consumers": [{"id": "host-101", "address": "127.0.0.1:50312", "tasks_done": 24, "samples_per_second": 617000.0,
                   "state": "working", "last_seen_seconds": 0.01},
                  {"id": "host-102", "address": "127.0.0.1:50313", "tasks_done": 23, "samples_per_second": 0.0,
                   "state": "gone", "last_seen_seconds": 2.5}],
}


def test_parse_and_progress_line() -> None:
    status = parse_status(json.dumps(DOC).encode())
    assert status.tasks.requeued == 1 and status.connected == 1
    assert status.fraction == pytest.approx(0.42)
    assert progress_line(status, running=2, pending=1) == (
        "render spheres 400x224 spp 100:  42.0%  1.23M samples/s  ETA 4s  consumers 2 running, 1 pending")


def test_finished_and_unknown_eta() -> None:
    status = parse_status({**DOC, "eta_seconds": None, "finished": True, "output": "render.png"})
    assert status.finished and status.output == "render.png" and status.eta_seconds is None
    assert "ETA ?" in progress_line(status, 0, 0)


@pytest.mark.parametrize(("doc", "message"), [
    (b"<html>", "not JSON"),
    (b"[]", "not a JSON object"),
    ({k: v for k, v in DOC.items() if k != "tasks"}, "no field tasks"),
    ({**DOC, "tasks": {**DOC["tasks"], "done": "47"}}, "tasks.done has the wrong type"),
    ({**DOC, "finished": 1}, "finished has the wrong type"),
    ({**DOC, "consumers": [{"id": "x"}]}, "no field consumers[0].address"),
])
def test_bad_status_is_one_sentence(doc: object, message: str) -> None:
    with pytest.raises(StatusError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_status(doc)  # type: ignore[arg-type]


def test_human_seconds() -> None:
    assert [human_seconds(s) for s in (0.4, 59.6, 61, 3725)] == ["0s", "1m00s", "1m01s", "1h02m"]
