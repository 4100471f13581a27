"""`kubeview tune SCENE`: search consumer replicas, cpu request and task size for the fastest render.

Every option is checked before anything starts. The embedded local cluster runs the trials unless
`--kubeconfig` (or `--context`) names a real cluster: a tuner applies and deletes heavy workloads,
so a real cluster is never chosen just because a kubeconfig happens to exist. Without `--headless`
(and on a terminal) the TUI opens on its Tune screen; `--headless` prints a line per trial and the
best at the end, `--json` the study as one document.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from kubeview import cli_types as t
from kubeview.cluster.source import ClusterSource, SourceError
from kubeview.commands.main import _err, render_job, usable_cores
from kubeview.commands.options import connection_options, scene_names, scene_overrides
from kubeview.terminate import raise_terminated

DEFAULT_TRIALS = 20


def _out(line: str, to_stderr: bool = False) -> None:
    stream = sys.stderr if to_stderr else sys.stdout
    stream.write(line + "\n")
    stream.flush()


def default_storage() -> str:
    from kubeview.tune.reference import state_dir

    return f"sqlite:///{state_dir() / 'tune.db'}"


def _inputs(args: argparse.Namespace, kube: bool) -> tuple[Any, Any, Any]:
    """(scene choice, search space, baseline params); raises RenderError or RangeError."""
    from kubeview.render.inputs import choose_scene
    from kubeview.tune.space import baseline, parse_space
    from renderer.scene import load

    scene = choose_scene(args.scene, spp=args.spp, width=args.width)
    job = load(scene.path, width=scene.width, height=scene.height, spp=scene.spp)
    cores = usable_cores()
    space = parse_space(args.replicas or ("1:64" if kube else f"1:{2 * cores}"), args.cpu or "100m:1000m",
                        args.samples_per_task or f"1:{job.spp}", args.tile or "8:64", spp=job.spp)
    first = baseline(space, replicas=4 if kube else cores, samples_per_task=job.chunk, tile=job.tile)
    return scene, space, (first, job)


NAME = "tune"  # `kubeview tune`


EPILOG = """\
Each trial applies the render job with its parameters (the producer and a ReplicaSet of consumers,
as `kubeview --render` does), takes the producer's own elapsed time as the objective, checks that
the image is bit-identical to a one-process reference render (made once per task size and cached
in the state directory), deletes the job and waits for its pods to go. A failed, timed-out or
interrupted trial is kept in the study as failed, with its reason. A range is MIN:MAX or one value.

examples:
  kubeview tune three-spheres --trials 12 --headless
  kubeview tune spheres --replicas 1:8 --cpu 250m:1000m --samples-per-task 4:100 --tile 16:64
  kubeview tune spheres --storage postgresql://tuner@db/kubeview --study-name lab --kubeconfig ~/.kube/lab
  kubeview tune spheres --json > study.json      # the study: trials, params, states, values, best
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    tune = sub.add_parser(
        NAME, parents=[connection_options(True, ("cluster",))],
        help="find the fastest replicas / cpu / task size for a render (Optuna)",
        description="Search consumer replicas, their cpu request, samples per task and tile size for the\n"
                    "fastest render of SCENE with an Optuna study, on the embedded local cluster (a real\n"
                    "cluster only with --kubeconfig or --context). The study is stored (SQLite by default)\n"
                    "and resumable: run the same command again to finish it. Without --headless the TUI\n"
                    "opens on its Tune screen: the trials, the best so far, wall time plotted live.",
        epilog=EPILOG)
    tune.add_argument("scene", help=f"scene YAML path or bundled name ({scene_names()})")
    s = tune.add_argument_group("study")
    s.add_argument("--trials", type=t.int_range(1, 100_000), default=20,
                   help="trials the study should have in all; a resumed study runs the missing ones (default: 20)")
    s.add_argument("--timeout", type=t.seconds, metavar="SECONDS",
                   help="start no new trial after this long (default: none)")
    s.add_argument("--trial-timeout", type=t.seconds, default=600.0, metavar="SECONDS",
                   help="a trial still running after this long fails as timed out (default: 600)")
    s.add_argument("--start-timeout", type=t.seconds, default=300.0, metavar="SECONDS",
                   help="a trial whose producer has not answered after this long fails (default: 300)")
    s.add_argument("--storage", metavar="URL",
                   help="any database URL Optuna takes, e.g. postgresql://u@host/db to share a study between "
                        "machines (default: sqlite:///$XDG_STATE_HOME/kubeview/tune.db)")
    s.add_argument("--study-name", metavar="NAME", help="default: SCENE-WxH-sppN-local|kube")
    s.add_argument("--seed", type=t.int_range(0, 2**31 - 1), default=0, help="sampler seed (default: 0)")
    s.add_argument("--prune-margin", type=t.ratio_at_least_one, default=1.5, metavar="X",
                   help="prune a trial X times slower than the best was at the same progress (default: 1.5)")
    p = tune.add_argument_group("search ranges (MIN:MAX, or one value to fix it)")
    p.add_argument("--replicas", metavar="RANGE", help="consumer replicas (default: 1:2x cores local, 1:64 real)")
    p.add_argument("--cpu", metavar="RANGE", help="cpu request per consumer (default: 100m:1000m)")
    p.add_argument("--samples-per-task", metavar="RANGE", help="samples per pixel per task (default: 1:SPP)")
    p.add_argument("--tile", metavar="RANGE", help="task tile size in pixels (default: 8:64)")
    j = tune.add_argument_group("the render job")
    scene_overrides(j)
    j.add_argument("--image", help="real cluster: the renderer image (default: kubeview:latest)")
    j.add_argument("--gpu", type=int, choices=[0, 1], help="real cluster: 1 = consumers request nvidia.com/gpu: 1")
    o = tune.add_argument_group("output")
    o.add_argument("--headless", action="store_true", help="a line per trial and the best at the end, no TUI")
    o.add_argument("--json", action="store_true", help="print the study as JSON at the end (progress to stderr)")
    return tune


def run(args: argparse.Namespace) -> int:
    from kubeview.render.local import RenderError
    from kubeview.tune.space import RangeError
    from kubeview.tune.study import StudyError, open_study

    kube = bool(getattr(args, "kubeconfig", None) or getattr(args, "context", None))
    if not kube:
        args.local = True
    if kube and getattr(args, "cluster", None):
        _err(f"--cluster {args.cluster} is the embedded cluster's; drop it or --kubeconfig/--context")
        return 2
    try:
        scene, space, (first, job) = _inputs(args, kube)
    except (RenderError, RangeError) as exc:
        _err(str(exc))
        return 2
    settings = study_settings(args, scene, space, first, job, kube)
    try:  # before any cluster starts: a bad URL or another scene's study costs nothing
        study = open_study(settings)
    except StudyError as exc:
        _err(str(exc))
        return 1
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    source: ClusterSource | None = None
    workdir = Path(tempfile.mkdtemp(prefix="kubeview-tune-"))
    try:
        from kubeview.cluster.select import open_source, wants_kube

        try:
            if kube and not wants_kube(args):  # never the embedded cluster in place of the one asked for
                raise SourceError(f"--kubeconfig {args.kubeconfig}: no such kubeconfig" if args.kubeconfig
                                  else f"--context {args.context} needs a kubeconfig, and there is none", usage=True)
            source = open_source(args)
        except SourceError as exc:
            _err(str(exc))
            return exc.exit_code
        tuner = build_tuner(args, source, scene, study, settings, workdir)
        if not (args.headless or args.json or not sys.stdout.isatty()):
            from kubeview.tui.app import run_tui

            return run_tui(source, args, tuner=tuner)
        return _headless(tuner, args.json)
    finally:
        if source is not None:
            source.close()
        shutil.rmtree(workdir, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)


def study_settings(args: argparse.Namespace, scene: Any, space: Any, first: Any, job: Any, kube: bool) -> Any:
    from kubeview.tune.reference import state_dir
    from kubeview.tune.study import StudySettings

    size = f"{job.width}x{job.height}"
    target = f"kube:{args.context}" if kube and getattr(args, "context", None) else "kube" if kube else "local"
    storage = args.storage or default_storage()
    if args.storage is None:
        state_dir().mkdir(parents=True, exist_ok=True)
    return StudySettings(storage=storage, name=args.study_name or f"{job.name}-{size}-spp{job.spp}-{target}",
                         trials=args.trials, timeout=args.timeout, seed=args.seed, margin=args.prune_margin,
                         space=space, baseline=first,
                         attrs={"scene": job.name, "scene_sha256": _digest(scene.path), "size": size,
                                "spp": job.spp, "cluster": target})


def build_tuner(args: argparse.Namespace, source: ClusterSource, scene: Any, study: Any, settings: Any,
                workdir: Path) -> Any:
    """The Tuner running this study's trials on `source` (trial images go to `workdir`)."""
    from kubeview.tune.reference import reference, state_dir
    from kubeview.tune.study import Tuner
    from kubeview.tune.trial import TrialRunner

    cache = state_dir() / "references"
    runner = TrialRunner(make_job=_job_factory(args, source, scene),
                         reference=lambda: reference(scene, cache), workdir=workdir,
                         margin=args.prune_margin, trial_timeout=args.trial_timeout,
                         start_timeout=args.start_timeout, raw=source.is_local)
    return Tuner(study, settings, runner)


def _headless(tuner: Any, as_json: bool) -> int:
    """A line per trial and the best at the end (to stderr with --json, whose document is stdout)."""
    from optuna.trial import TrialState

    from kubeview.tune import records as rec
    from kubeview.tune.study import finished

    s, study = tuner.settings, tuner.study
    there = len(finished(study))
    _out(f"tune: study {s.name} in {rec.redact(s.storage)}: {tuner.remaining()} trials to run"
         f"{f' ({there} there already)' if there else ''}; {s.space.describe()}", as_json)
    said = {t.number for t in finished(study)}  # trials of earlier runs are not repeated

    def say(r: rec.TrialRecord) -> None:
        said.add(r.number)
        _out(rec.trial_line(r), as_json)

    tuner.on_trial = lambda t: say(rec.TrialRecord.of(t))
    try:
        tuner.run()
    finally:  # also on Ctrl-C / SIGTERM: the interrupted trial's line (it is in the study), then the best
        records = tuner.records()
        for r in records:
            if r.finished and r.number not in said:
                say(r)
        _out(rec.best_line(records), as_json)
    if as_json:
        trials = [t for t in study.get_trials(deepcopy=False) if t.state != TrialState.WAITING]
        _out(json.dumps(rec.study_document(s.name, s.storage, study.user_attrs, trials), indent=2))
    return 0 if rec.best_of(records) is not None else 1


def _digest(path: Path) -> str:
    """The scene file's content (not its path): machines sharing a study may keep it elsewhere."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _job_factory(args: argparse.Namespace, source: ClusterSource, scene: Any):  # noqa: ANN202
    from kubeview.render.local import RenderSettings

    def make(params: Any, output: Path, raw: Path | None) -> Any:
        settings = RenderSettings(scene=scene.path, output=output, raw=raw, replicas=params.replicas, cpu=params.cpu,
                                  job_args=(*scene.producer_args(), *params.job_args()))
        return render_job(source, settings, args)

    return make
