"""`kubeview plan`: the demo's fragmented train-c gets a one-move plan and it applies; bad input is one
line and exit 2; the audit log shows what was applied."""

from __future__ import annotations

import json

from kubeview.cli import main


def test_bad_input_is_one_line_and_exit_2(capsys):
    assert main(["plan"]) == 2
    assert capsys.readouterr().err == "kubeview: give a pending POD or --gpus N (one of them)\n"
    assert main(["plan", "--pods", "2", "x"]) == 2
    assert main(["plan", "--gpus", "2", "--apply"]) == 2
    assert "--yes" in capsys.readouterr().err


def test_demo_train_c_one_move_plan_applied_and_logged(capsys, tmp_path):
    log = str(tmp_path / "plans.sqlite")
    assert main(["--demo", "plan", "training/train-c", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # one move, a pod its ReplicaSet recreates; the bare pods (inference/embed, ...) are left alone
    assert doc["found"] and len(doc["moves"]) == 1 and any("bare pod" in n for n in doc["notes"])
    assert main(["--demo", "plan", "training/train-c", "--apply", "--yes", "--log-file", log,
                 "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    evictions = [line for line in out.splitlines() if line.strip().startswith("evict ")]
    assert len(evictions) == 1 and "ReplicaSet/train-workers" in evictions[0]
    assert "bound: training/train-c on " in out
    assert main(["plan", "--log", "--log-file", log, "--json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["outcome"] == "bound" and entry["target"] == "training/train-c (2 GPUs)"
    assert main(["--demo", "plan", "nope"]) == 2
    assert capsys.readouterr().err == "kubeview: no pod 'nope' in the cluster\n"


def test_bench_plan_quick(capsys):
    """`bench plan --quick`: every plan found on the full synthetic cluster, each inside its target."""
    assert main(["bench", "plan", "--quick", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in doc["figures"]][1:] == ["plan: 2 GPUs", "plan: 8 GPUs", "plan: gang 4 × 8 GPUs"]
    assert all(f["found"] and f["moves"] >= 1 and f["passed"] for f in doc["figures"])


def test_demo_answers_that_help(capsys):
    """Issue #42: `--gpus 8` where no node had 8 said "no running pod may be disrupted … over 0 candidate
    sets"; a pending consumer got a plan evicting its own ReplicaSet's pod, which then waited (exit 0)."""
    # 16: the demo's time-sliced gpu-ts-1 advertises 8 (#35), and the scheduler's figures are the plan's
    assert main(["--demo", "plan", "--gpus", "16"]) == 1
    assert capsys.readouterr().out == ("plan for 16 GPUs, policy spread (the embedded scheduler's)\n"
                                       "  no plan: no node has 16 GPUs allocatable: the largest has 8, so no "
                                       "disruption makes room\n")
    assert main(["--demo", "snapshot", "--json"]) == 0
    consumer = next(p for p in json.loads(capsys.readouterr().out)["pods"]
                    if p["name"].startswith("consumer-") and not p.get("node"))
    assert main(["--demo", "plan", f"batch/{consumer['name']}"]) == 1
    out = capsys.readouterr().out
    assert "  no plan: " in out and "  evict " not in out
    assert "of the target's own ReplicaSet/consumer left alone: evicted, one would only wait in the target's place" in out
