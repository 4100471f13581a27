"""Command line: ``python -m renderer render|producer|consumer|bench``.

Argument parsing and dispatch only.  Bad input (a bad scene, address, token file or
checkpoint) prints one line to stderr and exits 2, without a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

from renderer.scene import Scene, SceneError

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input: printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) -> (host, port)."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _overrides(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("job settings (override the scene file; producer and render must agree)")
    g.add_argument("--width", type=positive, help="image width in pixels")
    g.add_argument("--height", type=positive, help="image height in pixels")
    g.add_argument("--spp", type=positive, help="samples per pixel")
    g.add_argument("--chunk", type=positive, help="samples per pixel per task")
    g.add_argument("--tile", type=positive, help="task tile size in pixels")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m renderer", description="Deterministic distributed numba path tracer.")
    ap.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("render", help="render a scene in this process on all cores",
                       description="Reference render in one process (prange over all cores).")
    r.add_argument("scene", help="scene YAML file, or a bundled scene name (spheres, three-spheres)")
    r.add_argument("-o", "--output", type=Path, help="PNG to write (8-bit, gamma 2)")
    r.add_argument("--raw", type=Path, help="also write the linear float64 image (H, W, 3) as .npy")
    r.add_argument("--threads", type=positive, help="threads (default: all cores)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    _overrides(r)

    p = sub.add_parser("producer", help="serve a render job to consumers over TCP",
                       description="Hand out tasks to consumers, accumulate and write the image.")
    p.add_argument("scene", help="scene YAML file, or a bundled scene name")
    p.add_argument("--listen", type=address, default=("127.0.0.1", 7000), metavar="HOST:PORT",
                   help="task protocol address (default 127.0.0.1:7000)")
    p.add_argument("--status", type=address, metavar="HOST:PORT",
                   help="serve GET /status, /image.png, /metrics here")
    p.add_argument("-o", "--output", type=Path, help="PNG to write when done")
    p.add_argument("--raw", type=Path, help="also write the linear float64 image as .npy")
    p.add_argument("--checkpoint", type=Path, help="persist finished chunks here; resume from it")
    p.add_argument("--token-file", type=Path, help="file holding the shared token consumers must present")
    p.add_argument("--lease-seconds", type=float, default=300.0, help="lease length (default 300)")
    p.add_argument("--verify", type=float, default=0.0, metavar="FRACTION",
                   help="trace this share of tasks (0..1) on two different consumers and refuse a consumer "
                        "whose results differ (needs 2+ consumers; 3 to settle a dispute)")
    p.add_argument("--serve-after-done", action="store_true",
                   help="keep serving status and DONE after the image is written (for Deployments)")
    _overrides(p)

    c = sub.add_parser("consumer", help="trace tasks for a producer",
                       description="Connect to a producer and trace its tasks until the job is done.")
    c.add_argument("--connect", type=address, required=True, metavar="HOST:PORT", help="producer address")
    c.add_argument("--token-file", type=Path, help="file holding the shared token")
    c.add_argument("--threads", type=positive, default=1, help="threads per task (default 1)")
    c.add_argument("--name", help="name shown in the producer's status (default host-pid)")
    c.add_argument("--kernel", default=os.environ.get("RENDERER_KERNEL") or "auto", metavar="auto|cpu|cuda",
                   help="tile kernel: cuda needs numba's CUDA target; auto uses it when available, "
                        "else cpu (default: $RENDERER_KERNEL, else auto)")

    b = sub.add_parser("bench", help="kernel, distribution and producer benchmarks",
                       description="Measure samples/s per core, distribution efficiency, producer capacity.")
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
    b.add_argument("--quick", action="store_true", help="shorter runs (less precise)")
    return ap


def _read_token(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        token = path.read_bytes().strip()
    except OSError as e:
        raise UsageError(f"{path}: cannot read token file: {e.strerror}") from None
    if not token:
        raise UsageError(f"{path}: token file is empty")
    if len(token) > 256:
        raise UsageError(f"{path}: token longer than 256 bytes")
    return token


def _check_output(*paths: Path | None) -> None:
    for path in paths:
        if path is not None and not path.parent.is_dir():
            raise UsageError(f"{path}: directory {str(path.parent)!r} does not exist")


def _load_scene(args: argparse.Namespace) -> Scene:
    from renderer import scene

    return scene.load(scene.resolve(args.scene), width=args.width, height=args.height, spp=args.spp,
                      chunk=args.chunk, tile=args.tile)


def cmd_render(args: argparse.Namespace) -> int:
    from renderer.image import write_outputs
    from renderer.kernels import accumulate_image, render_chunk

    if args.output is None and args.raw is None:
        raise UsageError("nothing to write: give -o out.png and/or --raw out.npy")
    _check_output(args.output, args.raw)
    sc = _load_scene(args)
    if args.threads:
        import numba

        numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]  # numba sets its config names at import
    render_chunk(sc, 0, 0, 1, 1, 0, 1, parallel=True)  # compile or load the cache before timing
    t0 = time.perf_counter()
    if args.no_progress:
        image = accumulate_image(sc)
    else:
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        cols = (TextColumn(f"{sc.name} {sc.width}x{sc.height}"), BarColumn(),
                TextColumn("{task.completed}/{task.total} spp"), TimeRemainingColumn())
        with Progress(*cols, transient=True) as bar:
            job = bar.add_task("render", total=sc.spp)
            image = accumulate_image(sc, progress=lambda n: bar.advance(job, n))
    dt = time.perf_counter() - t0
    write_outputs(image, args.output, args.raw)
    samples = sc.width * sc.height * sc.spp
    print(f"wrote {', '.join(str(p) for p in (args.output, args.raw) if p)}: {sc.width}x{sc.height} "
          f"spp {sc.spp} in {dt:.2f}s ({samples / dt:,.0f} samples/s)", file=sys.stderr)
    return 0


def cmd_producer(args: argparse.Namespace) -> int:
    from renderer.checkpoint import CheckpointError
    from renderer.producer import Producer, ProducerSettings

    _check_output(args.output, args.raw, args.checkpoint)
    if args.output is None and args.raw is None:
        raise UsageError("nothing to write: give -o out.png and/or --raw out.npy")
    if not args.lease_seconds > 0:
        raise UsageError("--lease-seconds must be positive")
    if not 0.0 <= args.verify <= 1.0:
        raise UsageError("--verify must be a fraction between 0 and 1")
    token = _read_token(args.token_file)
    sc = _load_scene(args)

    async def main() -> int:
        prod = Producer(sc, output=args.output, raw=args.raw, checkpoint=args.checkpoint, token=token,
                        serve_after_done=args.serve_after_done, verify=args.verify,
                        settings=ProducerSettings(lease_seconds=args.lease_seconds))
        code = await prod.run(args.listen, args.status)
        if prod.failure:
            print(f"renderer: {prod.failure}", file=sys.stderr)
        return code

    try:
        return asyncio.run(main())
    except CheckpointError as e:
        raise UsageError(str(e)) from None


def cmd_consumer(args: argparse.Namespace) -> int:
    from renderer.consumer import Consumer
    from renderer.kernels_cuda import KernelUnavailable, choose_kernel

    token = _read_token(args.token_file) or b""
    try:
        kernel, why = choose_kernel(args.kernel.strip().lower())
    except (ValueError, KernelUnavailable) as e:
        raise UsageError(str(e)) from None
    logging.getLogger("renderer.consumer").info("kernel: %s (%s)", kernel, why)
    host, port = args.connect
    return Consumer(host, port, token=token, name=args.name, threads=args.threads, kernel=kernel).run()


def cmd_bench(args: argparse.Namespace) -> int:
    from renderer.bench import main as bench_main

    return bench_main(as_json=args.json, quick=args.quick)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    commands = {"render": cmd_render, "producer": cmd_producer, "consumer": cmd_consumer, "bench": cmd_bench}
    try:
        return commands[args.command](args)
    except (SceneError, UsageError) as e:
        print(f"renderer: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"renderer: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
