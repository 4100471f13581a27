"""Write screenshots/*.svg from real runs of two kubeview commands on the embedded local cluster.

    python scripts/screenshots.py [--out screenshots] [--sizes 160x48,80x24] [--only demo,render,tune]

At 160x48 into `--out`, and at 80x24 (the smallest supported terminal) into `--out`/80x24.

The README's screenshots are exactly what these show (sources and jobs built from the commands' own
arguments, `kubeview.cli` then `select.open_source`, as `kubeview` builds them):

    kubeview --demo
        nodes, node-detail, pods, workloads, packing: the demo's GPU pods under `spread` on
        device-plugin and DRA GPU nodes (train-c asks for 2 GPUs and stays Pending although 4 are
        free, one per GPU node), 24 consumers at 1000m of which 3 are Pending for cpu, the DRA node
        dra-node-1 with its devices and claims, and the packing what-if for train-c under `pack`.
        node-detail-shared, node-detail-mig (#35): gpu-ts-1 (2 L4s time-sliced 4 ways, all 8 replicas
        held, notebooks/ddp-pair's 2 maybe one GPU) and gpu-mig-1 (an A100 as seven 1g.10gb slices).
        workloads-gangs, gang-detail, packing-gang: the demo's two gangs (#27) in the Workloads
        screen's gangs table (Tab), vision/allreduce-workers' panel (2 × 2 GPUs, blocked by
        fragmentation: its members' own words and the fit), and Packing's what-if of vision/etl-stages,
        which does not fit under the live `spread` and fits whole under the edited `pack`.
        quota, quota-namespace: the training team at its GPU quota (#40): gpus 4/4 while 4 GPUs are free,
        its Indexed Job finetune held (the API server refused both pods), and the namespace opened.
        capacity, node-group: the autoscaling story (#39): farm/frames resumed (`z`), 266 frames wait, the
        embedded autoscaler grows batch-pool to its max 6 and 224 frames wait for good (they needed 38
        nodes); Capacity once the first frames finished (the rough time is then a measured one) and
        the group opened (its nodes, the frames waiting on it).
    kubeview --demo --render screenshots/three-spheres.yaml --replicas 4 --cpu 400m -o screenshots/three-spheres.png
        render, render-finished: the same cluster, whose little cpu left takes 3 of the 4 consumers
        (the fourth Pending, "Insufficient cpu"). The scene is the bundled three-spheres, larger and
        with more samples (written beside the SVGs) so the render is caught half done.

    kubeview tune three-spheres --trials 6 --replicas 1:4 --storage sqlite:///.screenshots-tune.db
        tune: a short study on the local cluster, finished: its trials, the best, the plots (the
        database is removed afterwards, so every run starts a fresh study).
    kubeview serve -- --demo
        browser.png: the Nodes screen in Debian's headless Chromium (1280x420), driven by Playwright
        as tests/web/test_serve_browser.py drives it (needs /usr/bin/chromium).
    kubeview --kubeconfig <the realk8s plane's admin>   (`--only kueue`; not in the default list)
        queues, queue-detail (#40): the real Kueue v0.17.0 on the real v1.37.2 plane (tests/realk8s/plane.py,
        kueue.py; needs the cached builds of scripts/build-kubernetes.sh and scripts/build-kueue.sh):
        tests/realk8s/kueue_story.py's cohort of two ClusterQueues, vision borrowing 2 GPUs of language's
        unused quota, a Job of each held with Kueue's own words and its position (Kueue's visibility API,
        served as tests/realk8s/kueue_visibility.py does); the Quota screen's queue table, then the
        ClusterQueue vision opened (Enter). About a minute and a half (the plane and Kueue start).
listing.svg, listing-packing.svg, relisting.svg (#41: no figure from a partial list) are not made here: they
come from the real API server, `KUBEVIEW_SHOTS=screenshots pytest tests/realk8s/test_pending_figures.py`.
Paths on screen are relative to the repository, where the script runs. Takes about two minutes (the
first frames take 20 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubeview.cli import build_parser  # noqa: E402
from kubeview.cluster.local.demo import BATCH_JOB, BATCH_POOL, DEMO_PENDING  # noqa: E402
from kubeview.cluster.local.source import LocalSource  # noqa: E402
from kubeview.cluster.select import open_source  # noqa: E402
from kubeview.model.autoscaling.groups import EMBEDDED  # noqa: E402
from kubeview.render.local import LocalRenderJob, RenderSettings, resolve_scene  # noqa: E402
from kubeview.tui.app import KubeviewApp, make_app  # noqa: E402
from tests.web.serving import CHROMIUM, readable_terminal, serve, wait_text  # noqa: E402

SIZES = ((160, 48), (80, 24))  # the README's set, and the smallest terminal kubeview supports
DEMO = ["--demo"]
RENDER = ["--demo", "--render", "{out}/three-spheres.yaml", "--replicas", "4", "--cpu", "400m",
          "-o", "{out}/three-spheres.png"]


TUNE = ["tune", "three-spheres", "--trials", "6", "--replicas", "1:4", "--storage", "sqlite:///.screenshots-tune.db"]


def write_scene(out: Path) -> None:
    """three-spheres, larger and with more samples: long enough to catch it half done."""
    doc = yaml.safe_load((REPO / "renderer" / "scenes" / "three-spheres.yaml").read_text())
    doc["image"].update(width=192, height=112, samples_per_pixel=2048)
    (out / "three-spheres.yaml").write_text(
        "# scripts/screenshots.py: the bundled three-spheres, larger, for the README's render screenshots\n"
        + yaml.safe_dump(doc, sort_keys=False))


def command(template: list[str], out: str) -> argparse.Namespace:
    """The command's arguments as `kubeview` parses them."""
    return build_parser().parse_args([a.format(out=out) for a in template])


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"screenshots: timed out waiting for {what}")
        await pilot.pause(0.1)


async def shoot_demo(app: KubeviewApp, out: Path, size: tuple[int, int]) -> None:
    """`kubeview --demo`: the cluster screens."""
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.state.model.pending_count() == DEMO_PENDING, 30, "the demo's pending pods")
        await pilot.pause(1.5)  # one usage sample of the sleepers
        # pods: to the end, where the training pods are (train-c Pending) beside the last consumers
        for keys, name in ((("2", "G"), "pods"), (("3",), "workloads"), (("1",), "nodes")):
            await pilot.press(*keys)
            await pilot.pause(0.8)
            app.save_screenshot(f"{name}.svg", str(out))
        await pilot.press("G", "up", "up", "up", "up", "enter")  # dra-node-1: its DRA devices, llm-0's claim on one
        await pilot.pause(0.8)
        app.save_screenshot("node-detail.svg", str(out))
        await pilot.press("escape", "G", "enter")  # gpu-ts-1: 2 L4s time-sliced 4 ways, ddp-pair's 2 replicas
        await pilot.pause(0.8)
        app.save_screenshot("node-detail-shared.svg", str(out))
        await pilot.press("escape", "up", "up", "up", "enter")  # gpu-mig-1: an A100 as 7 × 1g.10gb
        await pilot.pause(0.8)
        app.save_screenshot("node-detail-mig.svg", str(out))
        await pick_in_packing(app, pilot, "training/train-c")
        await pilot.press("p", "p")  # spread -> balanced -> pack, not applied
        await pilot.pause(0.8)
        app.save_screenshot("packing.svg", str(out))
        await shoot_gangs(app, pilot, out)
        await shoot_quota(app, pilot, out)
        await shoot_capacity(app, pilot, out)
        await pilot.press("q")


async def pick_in_packing(app: KubeviewApp, pilot, option: str) -> None:  # noqa: ANN001
    """Back out, open Packing, pick `option` (a pod or gang id) for the what-if and focus it."""
    await pilot.press("escape", "4")
    await pilot.pause(0.8)
    picker = app.screen.query_one("#pod-picker")
    picker.focus()
    picker.highlighted = picker.get_option_index(option)
    await pilot.press("enter")
    app.screen.query_one("#whatif").focus()


async def shoot_gangs(app: KubeviewApp, pilot, out: Path) -> None:  # noqa: ANN001
    """The demo's gangs: the Workloads screen's gangs table, allreduce's panel, etl's what-if under pack
    (the Packing screen's edited policy is pack already, from the shot before)."""
    await pilot.press("3", "tab")
    await pilot.pause(0.8)
    app.save_screenshot("workloads-gangs.svg", str(out))
    await pilot.press("enter")  # vision/allreduce-workers, the first gang
    await pilot.pause(0.8)
    app.save_screenshot("gang-detail.svg", str(out))
    await pick_in_packing(app, pilot, "gang|PodGroup|vision|etl-stages")
    await pilot.pause(0.8)
    app.save_screenshot("packing-gang.svg", str(out))


async def shoot_quota(app: KubeviewApp, pilot, out: Path) -> None:  # noqa: ANN001
    """The training team at its GPU quota (#40): the Quota screen with finetune held, then the namespace."""
    await pilot.press("escape", "8")
    await pilot.pause(0.8)
    app.save_screenshot("quota.svg", str(out))
    await pilot.press("enter")  # training: its quota key by key, finetune with the API server's words
    await pilot.pause(0.8)
    app.save_screenshot("quota-namespace.svg", str(out))
    await pilot.press("escape")


async def shoot_capacity(app: KubeviewApp, pilot, out: Path) -> None:  # noqa: ANN001
    """The autoscaling story: farm/frames resumed (what `z` on it does), batch-pool grown to its max 6
    with 224 frames waiting, and the first frames finished (so the rough time is a measured one)."""
    source = app.source
    assert isinstance(source, LocalSource)
    source.suspend_job(*BATCH_JOB, False)
    model = app.state.model

    def told() -> bool:
        group = model.autoscaling.group((EMBEDDED, BATCH_POOL))
        job = model.jobs.jobs.get(BATCH_JOB)
        return (group is not None and group.size == 6 and job is not None and job.succeeded >= 7
                and sum(w.group == group.key for w in model.pod_waits().values()) >= 200)

    await wait_for(pilot, told, 180, "batch-pool at its max and the first frames done")
    await pilot.press("escape", "7")
    await pilot.pause(1.0)
    app.save_screenshot("capacity.svg", str(out))
    await pilot.press("enter")  # the group: its nodes and the frames waiting on it
    await pilot.pause(0.8)
    app.save_screenshot("node-group.svg", str(out))


async def shoot_render(app: KubeviewApp, out: Path, job: LocalRenderJob, size: tuple[int, int]) -> None:
    """`kubeview --demo --render ...`: the render screen half done and finished."""
    async with app.run_test(size=size) as pilot:
        render = app.screen

        def fraction() -> float:
            status = getattr(render.progress, "status", None)  # type: ignore[attr-defined]
            return status.fraction if status is not None else 0.0

        await wait_for(pilot, lambda: fraction() > 0.15, 180, "the render to get going")
        await pilot.pause(1.0)  # one more image fetch
        app.save_screenshot("render.svg", str(out))
        await wait_for(pilot, lambda: fraction() >= 1.0 and job.settings.output.exists(), 300, "the render to finish")
        await pilot.pause(1.5)
        app.save_screenshot("render-finished.svg", str(out))
        await pilot.press("q")


def run_demo(out: Path, size: tuple[int, int]) -> None:
    source = open_source(command(DEMO, str(out)))
    try:
        asyncio.run(shoot_demo(make_app(source), out, size))
    finally:
        source.close()


def run_render(out: Path, size: tuple[int, int], scene_dir: Path) -> None:
    args = command(RENDER, str(scene_dir))
    source = open_source(args)
    job = LocalRenderJob(source, RenderSettings(scene=resolve_scene(args.render), output=Path(args.output).resolve(),
                                                replicas=args.replicas, cpu=args.cpu))  # as commands/main.py
    try:
        job.start()
        asyncio.run(shoot_render(make_app(source, job), out, job, size))
    finally:
        job.stop()
        source.close()


async def shoot_tune(app: KubeviewApp, out: Path, size: tuple[int, int]) -> None:
    """`kubeview tune ...`: the Tune screen once the study is done."""
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "done", False), 300, "the study to finish")
        await pilot.pause(0.5)
        app.save_screenshot("tune.svg", str(out))
        await pilot.press("q")


def run_tune(out: Path, size: tuple[int, int]) -> None:
    from kubeview.commands.tune import _inputs, build_tuner, study_settings
    from kubeview.tune.study import open_study

    args = command(TUNE, str(out))
    args.local = True  # as commands/tune.py without --kubeconfig
    db = REPO / ".screenshots-tune.db"
    db.unlink(missing_ok=True)
    scene, space, (first, job) = _inputs(args, False)
    settings = study_settings(args, scene, space, first, job, False)
    source = open_source(args)
    work = Path(tempfile.mkdtemp(prefix="kubeview-screenshots-"))
    try:
        app = make_app(source, tuner=build_tuner(args, source, scene, open_study(settings), settings, work))
        asyncio.run(shoot_tune(app, out, size))
        app.finish_cleanup()
    finally:
        source.close()
        db.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def run_browser(out: Path) -> None:
    """`kubeview serve -- --demo` in headless Chromium: the demo settled (DEMO_PENDING pending), then the PNG."""
    from playwright.sync_api import sync_playwright

    from kubeview.cluster.local.demo import DEMO_PENDING

    with tempfile.TemporaryDirectory(prefix="kubeview-screenshots-") as tmp:
        served = serve(Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 420})
                readable_terminal(page)
                page.goto(served.url, wait_until="domcontentloaded")
                wait_text(page, f"{DEMO_PENDING} pending", timeout=60)
                page.wait_for_timeout(1500)  # one usage sample of the sleepers, as the SVGs wait
                page.screenshot(path=str(out / "browser.png"))
                browser.close()
        finally:
            served.stop()


async def shoot_kueue(app: KubeviewApp, out: Path, size: tuple[int, int]) -> None:
    """The Quota screen's queue table once kubeview holds what Kueue wrote, then the first ClusterQueue."""
    from tests.realk8s.kueue_story import STEPS

    want = {cq: (sum(s.admitted for step in STEPS for s in step if s.cq == cq),
                 sum(not s.admitted for step in STEPS for s in step if s.cq == cq)) for cq in ("vision", "language")}

    def shown() -> bool:
        with app.state.lock:
            queues = app.state.model.queues
            seen = {n: (q.admitted, q.pending) for n in want if (q := queues.cluster_queue(n)) is not None}
            return seen == want and len(queues.workloads()) == sum(map(len, STEPS))

    def placed() -> bool:  # the Quota screen asks for Kueue's positions; one round answered for both queues
        with app.state.lock:
            return set(app.state.model.queues.positions.by_queue) == set(want)

    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, shown, 60, "kubeview to hold Kueue's queues as Kueue wrote them")
        await pilot.press("8")
        await wait_for(pilot, placed, 30, "Kueue's positions (its visibility API)")
        await pilot.pause(0.8)
        app.screen.query_one("#queue-table").focus()
        await pilot.pause(0.3)
        app.save_screenshot("queues.svg", str(out))
        await pilot.press("enter")  # the first ClusterQueue: vision, borrowing, vit-huge held
        await pilot.pause(0.8)
        app.save_screenshot("queue-detail.svg", str(out))
        await pilot.press("q")


def run_kueue(places: list[tuple[Path, tuple[int, int]]]) -> bool:
    """The real plane and the real Kueue with kueue_story's cohort, shot at every size; False (said in one
    line) where the builds are missing."""
    from kubeview.cluster.kube.source import KubeSource
    from tests.realk8s import kueue_story, kueue_visibility
    from tests.realk8s.kueue import Kueue
    from tests.realk8s.kueue import missing as kueue_missing
    from tests.realk8s.plane import bin_dir, missing_binaries, new_plane
    from tests.realk8s.procs import stop_all

    gone = [*missing_binaries(bin_dir()), *(g for g in (kueue_missing(), kueue_visibility.missing()) if g)]
    if gone:
        print(f"screenshots: kueue skipped, no {', '.join(gone)} (bash scripts/build-kubernetes.sh; "
              "bash scripts/build-kueue.sh)")
        return False
    plane = new_plane("kubeview-screenshots-kueue-")
    try:
        plane.start()
        kueue = Kueue(plane, tuple(kueue_story.TEAMS.values()), visibility=True)  # positions too
        kueue_story.setup(kueue)
        kueue.start()
        kueue_story.play(kueue)
        for where, size in places:
            source = KubeSource(kubeconfig=str(plane.kubeconfig))
            try:
                asyncio.run(shoot_kueue(make_app(source), where, size))
            finally:
                source.close()
    finally:
        stop_all()
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"),
                        help="directory for the SVGs, relative to the repository (default: screenshots)")
    parser.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES),
                        help="terminal sizes WxH, comma-separated (default: %(default)s); the first into --out, "
                             "the others into --out/WxH")
    parser.add_argument("--only", default="demo,render,tune,browser",
                        help="which runs (default: %(default)s); also kueue, which starts the real plane and "
                             "Kueue from the cached builds (scripts/build-kubernetes.sh, build-kueue.sh)")
    args = parser.parse_args()
    sizes = [tuple(int(n) for n in s.split("x")) for s in args.sizes.split(",")]
    only = set(args.only.split(","))
    out = args.out
    os.chdir(REPO)  # paths on screen are then relative to the repository
    out.mkdir(parents=True, exist_ok=True)
    write_scene(out)
    places = [(out if n == 0 else out / f"{w}x{h}", (w, h)) for n, (w, h) in enumerate(sizes)]
    for where, (width, height) in places:
        where.mkdir(parents=True, exist_ok=True)
        if "demo" in only:
            run_demo(where, (width, height))
        if "render" in only:
            run_render(where, (width, height), out)
        if "tune" in only:
            run_tune(where, (width, height))
        if only & {"demo", "render", "tune"}:
            for svg in sorted(where.glob("*.svg")):
                print(svg)
    if "kueue" in only and run_kueue(places):
        for where, _ in places:
            print(where / "queues.svg", where / "queue-detail.svg", sep="\n")
    if "browser" in only:
        run_browser(out)
        print(out / "browser.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
