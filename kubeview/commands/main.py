"""`kubeview` with no command: pick the cluster, optionally start a render, then the TUI or progress lines.

`--render SCENE` runs on the cluster kubeview shows: the embedded local one, or with a kubeconfig the
real one (`kubeview.render.kube.KubeRenderJob`, see docs/render-on-kubernetes.md). With `--headless`,
or when stdout is not a terminal, progress lines replace the TUI and the exit code says whether the
image was written. Whatever happens (an error, Ctrl-C, SIGTERM), every process the local cluster
started is stopped before kubeview exits, and a real-cluster render's objects are deleted (unless --keep).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from kubeview import cli_types as t
from kubeview.cluster.source import ClusterSource, SourceError
from kubeview.commands.options import scene_names, scene_overrides
from kubeview.terminate import raise_terminated

if TYPE_CHECKING:
    from kubeview.render.inputs import SceneChoice
    from kubeview.render.kube import KubeRenderJob
    from kubeview.render.local import LocalRenderJob, RenderSettings

PROGRESS_INTERVAL = 1.0  # seconds between headless progress lines


def poll_interval(progress) -> float:  # noqa: ANN001
    """Seconds until the next look at the render: rarely mid-render, often near the end (the wall time
    of a headless render includes the time to notice it is done)."""
    status = progress.status
    if status is None:
        return 0.1
    if status.eta_seconds is None or status.eta_seconds < 1.0:
        return 0.05
    return 0.25


def _err(message: str) -> None:
    sys.stderr.write(f"kubeview: {message}\n")
    sys.stderr.flush()


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def served_to_a_browser() -> bool:
    """`kubeview serve` runs each session's kubeview with stdout a pipe to textual-serve, which names
    Textual's web driver in the environment: that pipe is a terminal in a browser, not a log."""
    return os.environ.get("TEXTUAL_DRIVER", "").endswith(":WebDriver")


def check_inputs(args: argparse.Namespace, *, deep: bool = False) -> SceneChoice | None:
    """Everything `kubeview [--render SCENE]` checks before it starts anything: the scene and its
    overrides, `-o` and `--raw`, and the cluster options (conflicts, `--context` or `-n` with no
    kubeconfig). `deep` also loads the kubeconfig and finds its context (no request is sent) or
    loads `--cluster FILE`, which `run` leaves to the source it opens next; `kubeview serve` checks
    its sessions' options with it, once, at start. Raises RenderError or SourceError (`exit_code`)."""
    from kubeview.cluster.select import wants_kube
    from kubeview.render.inputs import check_output, choose_scene

    scene = None
    if args.render:
        scene = choose_scene(args.render, spp=args.spp, width=args.width)
        args.output = check_output(args.output)
        args.raw = check_output(args.raw, "--raw", suffix=None) if args.raw else None
    kube = wants_kube(args)
    if scene is not None and not kube:  # with a kubeconfig the render runs on that cluster (KubeRenderJob)
        args.local = True
    if deep and kube:
        from kubeview.cluster.kube.config import connect

        connect(getattr(args, "kubeconfig", None), getattr(args, "context", None)).api_client.close()
    elif deep and getattr(args, "cluster", None):
        from kubeview.cluster.local.config import load_cluster

        load_cluster(args.cluster)
    return scene


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`kubeview` with no command: its render options (the cluster options are the parser's own)."""
    r = parser.add_argument_group("render")
    r.add_argument("--render", metavar="SCENE",
                   help=f"run the bundled ray tracer on SCENE: a YAML path or a bundled name ({scene_names()})")
    r.add_argument("-o", "--output", default="render.png", help="where the rendered PNG goes (default: render.png)")
    r.add_argument("--raw", metavar="NPY", help="also write the linear float image (H, W, 3) as .npy")
    scene_overrides(r)
    r.add_argument("--replicas", type=t.int_range(1, 10_000), help="render consumers (default: usable cores)")
    r.add_argument("--cpu", default="1000m", type=t.cpu_amount, help="cpu request of each consumer (default: 1000m)")
    r.add_argument("--start-timeout", type=t.seconds, default=300.0, metavar="SECONDS",
                   help="real cluster: give up if the render's pods are not running after this long (default: 300)")
    r.add_argument("--headless", action="store_true", help="print progress lines instead of the TUI")
    r.add_argument("--keep", action="store_true", help="real cluster: keep the render's objects afterwards")
    r.add_argument("--image", help="real cluster: the renderer image (built from the Dockerfile; default: kubeview:latest)")
    r.add_argument("--gpu", type=int, choices=[0, 1], help="real cluster: 1 = consumers request nvidia.com/gpu: 1")


def run(args: argparse.Namespace) -> int:
    from kubeview.render.local import RenderError

    try:  # every input is checked before anything starts
        scene = check_inputs(args)
    except (RenderError, SourceError) as exc:
        _err(str(exc))
        return exc.exit_code
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    source: ClusterSource | None = None
    job: LocalRenderJob | KubeRenderJob | None = None
    try:
        from kubeview.cluster.select import open_source

        headless = args.headless or not (sys.stdout.isatty() or served_to_a_browser())
        try:
            # Events only feed the TUI's pod view; headless output never shows them
            source = open_source(args, events=not headless)
        except SourceError as exc:
            _err(str(exc))
            return exc.exit_code
        if scene is not None:
            started = _start_render(source, scene, args)
            if isinstance(started, int):
                return started
            job = started
        if not headless:
            try:
                from kubeview.tui.app import run_tui
            except ImportError:
                _err("the TUI is not available in this build; printing progress instead")
                headless = True
            else:
                return int(run_tui(source, args, render_job=job) or 0)
        if job is not None:
            return _follow_render(job, local=source.is_local, start_timeout=args.start_timeout)
        return _print_summary(source)
    finally:
        if job is not None:
            said = job.stop()
            if said:  # KubeRenderJob says what it deleted or kept
                _out(said)
        if source is not None:
            source.close()
        signal.signal(signal.SIGTERM, previous)


def render_job(source: ClusterSource, settings: RenderSettings, args: argparse.Namespace, *,
               keep: bool = False) -> LocalRenderJob | KubeRenderJob:
    """The render's job on the source `open_source` gave: processes of the embedded cluster, or a real
    cluster's objects (in `--namespace`, default kubeview-render; `--gpu`, `--image`)."""
    from kubeview.cluster.local.source import LocalSource
    from kubeview.cluster.source import TalksToKube
    from kubeview.render.local import LocalRenderJob

    if source.is_local:
        assert isinstance(source, LocalSource)  # open_source's local source is the embedded cluster
        return LocalRenderJob(source, settings)
    from kubeview.render.kube import KubeRenderJob

    assert isinstance(source, TalksToKube)  # open_source's other source is the kube one
    settings = replace(settings, namespace=getattr(args, "namespace", None) or "kubeview-render")
    return KubeRenderJob(source.api_client, settings, gpu=getattr(args, "gpu", 0) or 0,
                         image=getattr(args, "image", None) or "kubeview:latest", keep=keep)


def _start_render(source: ClusterSource, scene: SceneChoice,
                  args: argparse.Namespace) -> LocalRenderJob | KubeRenderJob | int:
    from kubeview.render.local import RenderError, RenderSettings

    replicas = args.replicas if args.replicas is not None else usable_cores()
    if not source.is_local:
        replicas = args.replicas if args.replicas is not None else 4
    settings = RenderSettings(scene=scene.path, output=args.output, raw=args.raw, replicas=replicas, cpu=args.cpu,
                              job_args=tuple(scene.producer_args()))
    job = render_job(source, settings, args, keep=args.keep)
    try:
        job.start()
    except RenderError as exc:
        _err(str(exc))
        said = job.stop()  # whatever start() created before it failed
        if said:
            _out(said)
        return exc.exit_code
    except BaseException:  # Ctrl-C or SIGTERM while applying: start() deleted what it had applied
        said = job.stop()
        if said:
            _out(said)
        raise
    return job


def _kernels_cold() -> bool:
    """The consumers (processes on this machine) will compile the tile kernel before any work."""
    from renderer.kernels import cache_is_cold

    return bool(cache_is_cold())


def _new_reasons(reasons: tuple[str, ...], said: dict[str, str]) -> list[str]:
    """The `pod: reason` lines not printed yet (a reason whose age alone changed is not new)."""
    from kubeview.render.pod_wait import same_reason

    fresh = []
    for line in reasons:
        pod = line.split(":", 1)[0]
        if pod not in said or not same_reason(said[pod], line):
            fresh.append(line)
            said[pod] = line
    return fresh


def _follow_render(job, local: bool = True, start_timeout: float = 300.0) -> int:  # noqa: ANN001
    """Print a progress line a second until the image is written; 0 on success, 1 on failure (also when
    nothing runs after `start_timeout` seconds: the caller's clean-up then deletes the render)."""
    from kubeview.render.local import RenderError
    from kubeview.render.status import progress_line

    last_line = 0.0
    waiting_said = False
    said: dict[str, str] = {}  # pod -> the reason last printed for it
    compiling: bool | None = None  # asked once, when the first progress line shows nothing done
    began = time.monotonic()
    started = False
    while True:
        try:
            progress = job.poll()
        except RenderError as exc:
            _err(str(exc))
            return exc.exit_code
        for note in progress.notices:  # the producer died / came back: said, never hidden
            _out(note)
        now = time.monotonic()
        started = started or (progress.status is not None and (progress.running > 0 or progress.status.samples_done > 0))
        if not started:
            if not waiting_said:
                _out(f"render: starting the producer and {job.settings.replicas} consumers")
                waiting_said = True
            reasons = progress.waiting or ((progress.pending_reason,) if progress.pending_reason else ())
            for line in _new_reasons(reasons, said):  # not waited on silently
                _out(f"render: waiting: {line}")
            if now - began > start_timeout:
                why = f": {reasons[0]}" if reasons else ""
                more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
                _err(f"the render did not start within {start_timeout:g} s{why}{more}")
                return 1
        elif progress.finished or now - last_line >= PROGRESS_INTERVAL:
            line = progress_line(progress.status, progress.running, progress.pending)
            if progress.restarts:
                line += f", {progress.restarts} restarts"
            if progress.pending and progress.pending_reason:
                line += f" ({progress.pending_reason})"
            if progress.status.samples_done == 0 and not progress.finished:
                if compiling is None:
                    compiling = local and _kernels_cold()
                if compiling:
                    line += "  (compiling kernels, first run only)"
            _out(line)
            last_line = now
        if progress.finished:
            s = job.settings
            written = ", ".join(str(p) for p in (s.output, s.raw) if p is not None)
            _out(f"render: wrote {written} in {progress.status.elapsed_seconds:.1f}s")
            return 0
        time.sleep(poll_interval(progress))


def _print_summary(source: ClusterSource) -> int:
    """Headless without --render: the tables `kubeview snapshot` prints (its --json has the document)."""
    from rich.console import Console

    from kubeview.commands.snapshot import print_tables, sync

    try:
        model = sync(source)
    except SourceError as exc:
        _err(str(exc))
        return exc.exit_code
    print_tables(model, Console())
    return 0
