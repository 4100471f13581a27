"""The tuner's pure parts and its option checks: ranges, pruning, trial lines, the --json document,
the reference comparison (it must bite on one flipped bit), bad input as one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.distributions import IntDistribution
from optuna.trial import TrialState, create_trial

from kubeview.cli import main
from kubeview.tune import records as rec
from kubeview.tune.pruner import SlowerThanBestPruner, overdue
from kubeview.tune.reference import Reference
from kubeview.tune.space import IntRange, RangeError, baseline, parse_range, parse_space

DISTS = {"replicas": IntDistribution(1, 8), "cpu_millis": IntDistribution(100, 1000, log=True),
         "samples_per_task": IntDistribution(1, 16, log=True), "tile": IntDistribution(8, 64, log=True)}
PARAMS = {"replicas": 4, "cpu_millis": 500, "samples_per_task": 8, "tile": 32}


def test_ranges_parse_and_refuse_with_one_sentence() -> None:
    assert parse_range("2:8", "--replicas", low=1, high=100) == IntRange(2, 8)
    assert parse_range("5", "--tile", low=1, high=512) == IntRange(5, 5)
    space = parse_space("1:4", "250m:1", "2:16", "16", spp=16)
    assert (space.cpu_millis.low, space.cpu_millis.high, space.cpu_millis.log) == (250, 1000, True)
    assert space.describe() == "replicas 1:4, cpu 250m:1000m, samples/task 2:16, tile 16"
    for args, says in [(("9:2", "1m", "1", "1"), "--replicas: MIN is above MAX in '9:2'"),
                       (("1", "lots", "1", "1"), "--cpu: 'lots' is not a cpu amount"),
                       (("1", "1", "1:32", "1"), "--samples-per-task: '1:32' is outside 1..16"),
                       (("1", "1", "1", "1:2:3"), "--tile: expected MIN:MAX or one value"),
                       (("x", "1", "1", "1"), "--replicas: 'x' is not a whole number")]:
        with pytest.raises(RangeError) as info:
            parse_space(*args, spp=16)
        assert str(info.value).startswith(says)
    first = baseline(space, replicas=12, samples_per_task=1, tile=16)
    assert (first.replicas, first.cpu_millis, first.samples_per_task, first.tile) == (4, 1000, 2, 16)


@pytest.mark.parametrize("argv, says", [
    (["--tile", "0:3"], "kubeview: --tile: '0:3' is outside 1..512"),
    (["--prune-margin", "0.5"], "argument --prune-margin: expected a number of at least 1, got '0.5'"),
    (["--trials", "0"], "argument --trials: expected a whole number from 1"),
    (["--storage", "nope://x"], "kubeview: cannot open study"),
])
def test_bad_input_is_one_line(argv: list[str], says: str, capsys: pytest.CaptureFixture[str],
                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(["tune", "three-spheres", "--headless", *argv]))
    err = capsys.readouterr().err
    assert exit_info.value.code in (1, 2) and says in err and len(err.strip().splitlines()) == 1, err


def _study(tmp_path: Path) -> optuna.Study:
    return optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}", pruner=SlowerThanBestPruner(1.5, warmup=2))


def test_pruner_stops_only_what_is_clearly_slower_than_the_best(tmp_path: Path) -> None:
    study = _study(tmp_path)
    early = study.ask()
    early.report(1.0, 1)
    assert not early.should_prune()  # nothing complete yet: no bar
    study.tell(early, state=TrialState.FAIL)
    study.add_trial(create_trial(value=10.0, params=PARAMS, distributions=DISTS,
                                 intermediate_values={2: 1.0, 3: 2.0}))
    study.add_trial(create_trial(value=20.0, params=PARAMS, distributions=DISTS,
                                 intermediate_values={2: 0.5, 3: 4.0}))  # fast at first, slower overall
    close = study.ask()
    close.report(1.45, 2)
    assert not close.should_prune()  # 1.45x the best trial's 1.0 s (not the 0.5 s of a worse trial)
    for value, step, pruned in ((9.0, 1, False), (1.55, 2, True), (2.9, 3, False), (3.1, 3, True)):
        t = study.ask()
        t.report(value, step)
        assert t.should_prune() is pruned, (value, step)
    with pytest.raises(ValueError):
        SlowerThanBestPruner(0.9)
    assert overdue(study, 10, 15.1, 1.5) == 10.0  # past the best trial's whole time x 1.5
    assert overdue(study, 10, 14.9, 1.5) is None
    assert overdue(study, 2, 99.0, 1.5) is None  # before the default warm-up (30%): start-up noise


def test_lines_and_document(tmp_path: Path) -> None:
    ok = create_trial(value=2.5, params=PARAMS, distributions=DISTS,
                      user_attrs={"running": 4, "pending": 1, "image": "identical", "wall_seconds": 2.5})
    first = create_trial(value=5.0, params={**PARAMS, "replicas": 1}, distributions=DISTS,
                         user_attrs={"running": 1, "pending": 0, "image": "identical", "wall_seconds": 5.0})
    pruned = create_trial(state=TrialState.PRUNED, params=PARAMS, distributions=DISTS,
                          user_attrs={"reason": "slower", "wall_seconds": 3.0, "fraction": 0.4})
    failed = create_trial(state=TrialState.FAIL, params=PARAMS, distributions=DISTS,
                          user_attrs={"reason": "interrupted (KeyboardInterrupt)"})
    lost = create_trial(state=TrialState.FAIL, params=PARAMS, distributions=DISTS)
    for number, t in enumerate((first, ok, pruned, failed, lost)):
        t.number = number
    records = [rec.TrialRecord.of(t) for t in (first, ok, pruned, failed, lost)]
    assert rec.trial_line(records[1]) == ("trial 1: replicas 4, cpu 500m, samples/task 8, tile 32 -> 2.50 s "
                                          "(4 running, 1 pending), image identical")
    assert rec.trial_line(records[2]).endswith("-> pruned at 40% (3.0 s): slower")
    assert rec.trial_line(records[3]).endswith("-> failed: interrupted (KeyboardInterrupt)")
    assert "no heartbeat" in rec.trial_line(records[4])
    assert rec.best_line(records) == ("best: trial 1 2.50 s with replicas 4, cpu 500m, samples/task 8, tile 32; "
                                      "first trial 5.00 s, 2.00x faster (5 trials: 2 complete, 1 pruned, 2 failed)")
    doc = rec.study_document("s", "postgresql://me:secret@db:5432/k", {"scene": "x"},
                             [first, ok, pruned, failed, lost])
    assert doc["storage"] == "postgresql://me:***@db:5432/k"
    assert doc["best"] == {"number": 1, "value": 2.5, "params": PARAMS}
    assert [t["state"] for t in doc["trials"]] == ["COMPLETE", "COMPLETE", "PRUNED", "FAIL", "FAIL"]


def test_reference_check_bites_on_one_bit(tmp_path: Path) -> None:
    image = np.random.default_rng(1).random((4, 5, 3))
    ref = Reference(tmp_path / "ref.npy", tmp_path / "ref.png")
    np.save(ref.raw, image)
    ref.png.write_bytes(b"png")
    same, other = tmp_path / "same.npy", tmp_path / "other.npy"
    np.save(same, image.copy())
    flipped = image.copy()
    flipped.view(np.uint64)[2, 3, 1] ^= 1  # the last bit of one channel of one pixel
    np.save(other, flipped)
    assert ref.matches(same, None) is None
    assert ref.matches(other, None) == "its image differs from the reference render"
    png = tmp_path / "t.png"
    png.write_bytes(b"pnG")
    assert ref.matches(None, png) == "its PNG differs from the reference render"
    assert ref.matches(None, None) == "it wrote no image"
