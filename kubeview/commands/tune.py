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
import signal
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from kubeview.cluster.source import ClusterSource, SourceError
from kubeview.commands.main import _err, _terminate, usable_cores

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


def run(args: argparse.Namespace) -> int:
    from kubeview.render.local import RenderError
    from kubeview.tune.space import RangeError

    kube = bool(getattr(args, "kubeconfig", None) or getattr(args, "context", None))
    if not kube:
        args.local = True
    try:
        scene, space, (first, job) = _inputs(args, kube)
    except (RenderError, RangeError) as exc:
        _err(str(exc))
        return 2
    if kube and getattr(args, "cluster", None):
        _err(f"--cluster {args.cluster} is the embedded cluster's; drop it or --kubeconfig/--context")
        return 2
    previous = signal.signal(signal.SIGTERM, _terminate)
    source: ClusterSource | None = None
    try:
        from kubeview.cluster.select import open_source, wants_kube

        try:
            if kube != wants_kube(args):
                raise SourceError("no kubeconfig to use")
            source = open_source(args)
        except SourceError as exc:
            _err(str(exc))
            return 1
        return _tune(args, source, scene, space, first, job)
    finally:
        if source is not None:
            source.close()
        signal.signal(signal.SIGTERM, previous)


def _tune(args: argparse.Namespace, source: ClusterSource, scene: Any, space: Any, first: Any, job: Any) -> int:
    from kubeview.tune import records as rec
    from kubeview.tune.reference import reference, state_dir
    from kubeview.tune.study import StudyError, StudySettings, Tuner, finished, open_study
    from kubeview.tune.trial import TrialRunner

    target = "local" if source.is_local else getattr(source, "title", "") or "kube"
    size = f"{job.width}x{job.height}"
    name = args.study_name or f"{job.name}-{size}-spp{job.spp}-{'local' if source.is_local else 'kube'}"
    storage = args.storage or default_storage()
    if args.storage is None:
        state_dir().mkdir(parents=True, exist_ok=True)
    settings = StudySettings(storage=storage, name=name, trials=args.trials, timeout=args.timeout, seed=args.seed,
                             margin=args.prune_margin, space=space, baseline=first,
                             attrs={"scene": job.name, "scene_sha256": _digest(scene.path), "size": size, "spp": job.spp,
                                    "cluster": target})
    try:
        study = open_study(settings)
    except StudyError as exc:
        _err(str(exc))
        return 1
    quiet = args.json  # stdout carries the document only; progress goes to stderr
    workdir = Path(tempfile.mkdtemp(prefix="kubeview-tune-"))
    cache = state_dir() / "references"
    runner = TrialRunner(make_job=_job_factory(args, source, scene),
                         reference=lambda params: reference(scene, params.samples_per_task, cache), workdir=workdir,
                         margin=args.prune_margin, trial_timeout=args.trial_timeout,
                         start_timeout=args.start_timeout, raw=source.is_local)
    tuner = Tuner(study, settings, runner)
    headless = args.headless or args.json or not sys.stdout.isatty()
    try:
        if not headless:
            from kubeview.tui.app import run_tui

            return run_tui(source, args, tuner=tuner)
        there = len(finished(study))
        _out(f"tune: study {name} in {rec.redact(storage)}: {tuner.remaining()} trials to run"
             f"{f' ({there} there already)' if there else ''}; {space.describe()}", quiet)
        tuner.on_trial = lambda t: _out(rec.trial_line(rec.TrialRecord.of(t)), quiet)
        try:
            tuner.run()
        finally:
            records = tuner.records()
            _out(rec.best_line(records), quiet)
        if args.json:
            from optuna.trial import TrialState

            trials = [t for t in study.get_trials(deepcopy=False) if t.state != TrialState.WAITING]
            _out(json.dumps(rec.study_document(name, storage, study.user_attrs, trials), indent=2))
        return 0 if rec.best_of(records) is not None else 1
    finally:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)


def _digest(path: Path) -> str:
    """The scene file's content (not its path): machines sharing a study may keep it elsewhere."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _job_factory(args: argparse.Namespace, source: ClusterSource, scene: Any):  # noqa: ANN202
    from kubeview.render.local import LocalRenderJob, RenderSettings

    def make(params: Any, output: Path, raw: Path | None) -> Any:
        settings = RenderSettings(scene=scene.path, output=output, raw=raw, replicas=params.replicas, cpu=params.cpu,
                                  job_args=(*scene.producer_args(), *params.job_args()))
        if source.is_local:
            return LocalRenderJob(source, settings)  # type: ignore[arg-type]
        from kubeview.render.kube import KubeRenderJob

        settings = replace(settings, namespace=getattr(args, "namespace", None) or "kubeview-render")
        return KubeRenderJob(source.api_client, settings, gpu=args.gpu or 0,  # type: ignore[attr-defined]
                             image=args.image or "kubeview:latest")

    return make
