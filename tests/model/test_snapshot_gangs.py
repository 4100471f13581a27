"""`gangs` in the snapshot document: the recorded 1.37 gangs with their fit validate against the schema,
the fast JSON path gives the same document, and the fit says what the real kube-scheduler said."""

from __future__ import annotations

import json

from test_gangs_137 import model

from kubeview.scheduling.waiting_fits import waiting_fits
from kubeview.snapshot.document import SCHEMA_VERSION, SNAPSHOT_SCHEMA, build_snapshot, snapshot_json
from kubeview.snapshot.schema import validate


def test_gangs_with_their_fit_validate_and_say_why() -> None:
    m = model()
    doc = build_snapshot(m, now=0, gang_fits=waiting_fits(m))
    assert SCHEMA_VERSION == 4 and validate(doc, SNAPSHOT_SCHEMA) == []
    gangs = {g["name"]: g for g in doc["gangs"]}
    a, b, c = gangs["gang-a-workers"], gangs["gang-b-workers"], gangs["gang-c-workers"]
    assert (a["state"], a["counts"], a["condition"]["type"]) == (
        "waiting", {"placed": 0, "running": 0, "pending": 3, "finished": 0}, "PodGroupInitiallyScheduled")
    assert a["fit"]["fits"] is False and a["fit"]["room"] == 0 and a["fit"]["policy"] == "pack"
    assert a["fit"]["message"] == "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"
    assert a["fit"]["saturated"] == {} and a["fit"]["excluded"] == {"Insufficient nvidia.com/gpu": 2}
    assert b["fit"] is None and b["state"] == "running"  # nothing waits: no fit to compute
    assert c["state"] == "incomplete" and c["fit"]["summary"] == "2 × 1 GPU: 2 of minCount 3 members exist"
    assert doc["cluster"]["noGangs"] is None


def test_fast_json_carries_the_same_gangs() -> None:
    m = model()
    fits = waiting_fits(m)
    assert json.loads(snapshot_json(m, now=0, gang_fits=fits))["gangs"] == build_snapshot(m, now=0, gang_fits=fits)["gangs"]
