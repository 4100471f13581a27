"""`kubeview tune` end to end on the embedded cluster: real producer and consumer processes, SQLite.

One short study (a small scene, fixed sampler seed) is interrupted with SIGINT mid-trial and resumed:
the trial count adds up, the interrupted trial is kept as failed with its reason, every complete
trial's image was checked identical to the reference, the cached reference is what `python -m
renderer render` makes, and the best trial's parameters, run again, land in its time class.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import optuna
import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
SCENE = ["three-spheres", "--width", "96", "--spp", "32"]
SPACE = ["--replicas", "1:2", "--cpu", "100m:1000m", "--samples-per-task", "8", "--tile", "8:48", "--seed", "7"]
NAME = "t"


def _env(state: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "XDG_STATE_HOME": str(state)}


def _tune(state: Path, db: str, *extra: str, name: str = NAME, space: list[str] = SPACE) -> list[str]:
    return [sys.executable, "-m", "kubeview", "tune", *SCENE, "--headless", "--storage", db,
            "--study-name", name, *space, *extra]


def _finished(db: str) -> list[optuna.trial.FrozenTrial]:
    study = optuna.load_study(study_name=NAME, storage=db)
    return [t for t in study.get_trials() if t.state.is_finished()]


def _wait_mid_trial(db: str, number: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until trial `number` is rendering (its consumers counted), so SIGINT lands inside it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            trials = optuna.load_study(study_name=NAME, storage=db).get_trials()
        except Exception:  # noqa: BLE001 - the study is not created yet
            trials = []
        if any(t.number == number and t.state == optuna.trial.TrialState.RUNNING
               and t.user_attrs.get("running", 0) >= 1 for t in trials):
            return
        time.sleep(0.05)
    raise AssertionError(f"trial {number} never ran")


def _sigint_default() -> None:
    """A suite started in the background (``pytest &``, some CI runners) runs with SIGINT ignored,
    which the tuner would inherit, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop_the_producer_of_trial(number: int, proc: subprocess.Popen, timeout: float = 120.0) -> psutil.Process:
    """SIGSTOP trial `number`'s producer as soon as it is started, before it can have finished (it
    writes trial-N.npy and only then says finished). Issue 23: a trial seen running had finished,
    0.3 s, before SIGINT arrived; a held producer keeps the trial running until we let it go."""
    deadline = time.monotonic() + timeout
    tuner = psutil.Process(proc.pid)
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for child in tuner.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                argv = child.cmdline()
                if "producer" in argv and any(a.endswith(f"trial-{number}.npy") for a in argv):
                    child.send_signal(signal.SIGSTOP)
                    raw = Path(argv[argv.index("--raw") + 1])
                    assert not raw.exists(), f"trial {number}'s producer had finished before it was stopped"
                    return child
        time.sleep(0.01)
    raise AssertionError(f"trial {number}'s producer never started")


def _wait_interrupted(db: str, number: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until the tuner has recorded trial `number` as interrupted (before it stops the job)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        trials = optuna.load_study(study_name=NAME, storage=db).get_trials()
        if any(t.number == number and t.user_attrs.get("reason", "").startswith("interrupted") for t in trials):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"trial {number} was never recorded as interrupted: {proc.communicate()}")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_interrupted_study_resumes_and_adds_up(tmp_path: Path) -> None:
    state = tmp_path / "state"
    db = f"sqlite:///{tmp_path / 'tune.db'}"
    proc = subprocess.Popen(_tune(state, db, "--trials", "4"), env=_env(state), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    held = None
    try:
        held = _stop_the_producer_of_trial(2, proc)  # trial 2 cannot finish before SIGINT: by construction
        _wait_mid_trial(db, 2, proc)
        proc.send_signal(signal.SIGINT)
        _wait_interrupted(db, 2, proc)
        held.send_signal(signal.SIGCONT)  # to be stopped by the tuner's cleanup as usual
        out, err = proc.communicate(timeout=60)
    finally:
        if held is not None:
            with contextlib.suppress(psutil.Error):
                held.send_signal(signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "kubeview: interrupted" in err and "Traceback" not in err
    first = [line for line in out.splitlines() if line.startswith("trial ")]
    assert [line.split(":")[0] for line in first] == ["trial 0", "trial 1", "trial 2"]
    assert first[2].endswith("-> failed: interrupted (KeyboardInterrupt)")
    done = _finished(db)
    assert len(done) == 3  # two finished, the interrupted one kept
    interrupted = done[2]
    assert interrupted.state == optuna.trial.TrialState.FAIL
    assert interrupted.user_attrs["reason"] == "interrupted (KeyboardInterrupt)"

    resumed = subprocess.run(_tune(state, db, "--trials", "4"), env=_env(state), cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 trials to run (3 there already)" in resumed.stdout
    lines = [line for line in resumed.stdout.splitlines() if line.startswith("trial ")]
    assert [line.split(":")[0] for line in lines] == ["trial 3"]
    assert resumed.stdout.splitlines()[-1].startswith("best: trial ")
    done = _finished(db)
    assert [t.number for t in done] == [0, 1, 2, 3]  # 3 from the first run + 1 resumed = --trials
    assert done[0].params == {"replicas": 2, "cpu_millis": 1000, "samples_per_task": 8, "tile": 16}  # the default
    complete = [t for t in done if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(complete) >= 2
    for t in complete:  # each compared bit for bit with the reference before its time counted
        assert t.user_attrs["image"] == "identical"
        assert t.value == pytest.approx(t.user_attrs["wall_seconds"], abs=1e-3)
        assert t.user_attrs["running"] >= 1

    # the cached reference is the one-process render's bits
    refs = list((state / "kubeview" / "references").glob("*/reference.npy"))
    assert len(refs) == 1
    mine = tmp_path / "mine.npy"
    subprocess.run([sys.executable, "-m", "renderer", "render", "three-spheres", "--width", "96", "--height", "64",
                    "--spp", "32", "--chunk", "8", "--raw", str(mine),
                    "--no-progress"], env=_env(state), check=True, capture_output=True, timeout=120)
    assert np.load(mine).tobytes() == np.load(refs[0]).tobytes()

    # --json: the same study, nothing left to run
    doc = subprocess.run([*_tune(state, db, "--trials", "4"), "--json"], env=_env(state), cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    study = json.loads(doc.stdout)
    assert [t["state"] for t in study["trials"]] == [t.state.name for t in done]
    assert study["trials"][2]["reason"] == "interrupted (KeyboardInterrupt)"
    best = min(complete, key=lambda t: t.value)
    assert study["best"] == {"number": best.number, "value": best.value, "params": best.params}

    # the best parameters, run again, land in the best trial's time class (within 2x)
    p = best.params
    fixed = ["--replicas", str(p["replicas"]), "--cpu", f"{p['cpu_millis']}m",
             "--samples-per-task", str(p["samples_per_task"]), "--tile", str(p["tile"])]
    again = subprocess.run(_tune(state, db, "--trials", "1", name="again", space=fixed), env=_env(state),
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    value = optuna.load_study(study_name="again", storage=db).best_value
    assert 0.5 < value / best.value < 2.0, (value, best.value)
