"""`kubeview serve [options] -- [kubeview options]`: the TUI in web browsers, one kubeview per session.

Everything after `--` is given to each session's `kubeview` (`-- --demo`, `-- --context lab`) and is
checked here first, so a typo is one line now rather than a failed page later. Safe by default: it
listens on 127.0.0.1; any other address needs `--token-file` (the page asks for the token before a
process starts). Exit 2 for bad input, 1 for the environment (the token file, the port, a
$KUBECONFIG that cannot be read).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from contextlib import redirect_stderr
from io import StringIO

from kubeview import cli_types as t
from kubeview.scheduling.listen_guard import is_loopback


def _err(message: str) -> None:
    sys.stderr.write(f"kubeview serve: {message}\n")


class SessionOptionsError(ValueError):
    """The options after `--` cannot start a session; `exit_code` as the session's kubeview would exit."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def app_args(args: argparse.Namespace) -> list[str]:
    """The kubeview options after `--`, checked as `kubeview` itself checks them before it starts
    anything (cli's parser, given as `args.kubeview_parser`, and the query file, commands.main.check_inputs: the scene, -o, the cluster
    options, the kubeconfig and its context, --cluster FILE), so a session that could only fail is
    one line now (SessionOptionsError) rather than "Session ended" in every browser."""
    from kubeview.cluster.source import SourceError
    from kubeview.commands.main import check_inputs
    from kubeview.commands.query_check import check_queries
    from kubeview.render.local import RenderError

    given = list(args.app_args)
    if given[:1] == ["--"]:
        given = given[1:]
    captured = StringIO()
    try:
        with redirect_stderr(captured):
            parsed = args.kubeview_parser().parse_args(given)
    except SystemExit as exc:
        why = captured.getvalue().strip().splitlines()
        raise SessionOptionsError(f"the kubeview options after -- are not valid: {why[-1] if why else exc}") from None
    if parsed.command != "tui" or parsed.headless:
        raise SessionOptionsError("after -- come kubeview's TUI options (e.g. -- --demo, -- --context lab), "
                                  "not a command or --headless: a browser shows the TUI")
    bad = check_queries(parsed)
    if bad:
        raise SessionOptionsError(f"after --: {bad}")
    try:
        check_inputs(parsed, deep=True)
    except (RenderError, SourceError) as exc:
        raise SessionOptionsError(f"after --: {exc}", exc.exit_code) from None
    return given


def _read_token(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as exc:
        raise OSError(f"cannot read the token file {path}: {exc.strerror}") from None
    if not token:
        raise OSError(f"the token file {path} is empty")
    return token


NAME = "serve"  # `kubeview serve`


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    srv = sub.add_parser(
        NAME, help="serve the TUI to web browsers, one kubeview per session",
        description="Serve the TUI to web browsers (textual-serve): each browser session runs its own\n"
                    "kubeview with the options after --. Listens on 127.0.0.1 unless --host says otherwise;\n"
                    "any other address needs --token-file (browsers open /?token=TOKEN).",
        epilog="examples:\n  kubeview serve -- --demo\n  kubeview serve --port 8080 -- --context lab\n"
               "  kubeview serve --host 0.0.0.0 --token-file token.txt -- --context lab")
    srv.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    srv.add_argument("--port", type=t.int_range(1, 65535), default=8000, help="port (default: 8000)")
    srv.add_argument("--token-file", metavar="FILE",
                     help="browsers must present this file's token (needed off loopback)")
    srv.add_argument("--max-sessions", type=t.int_range(1, 1000), default=4, metavar="N",
                     help="browser sessions open at once, each a kubeview process (default: 4)")
    srv.add_argument("--idle-timeout", type=t.seconds, default=1800.0, metavar="SECONDS",
                     help="close a session with no input for this long (default: 1800)")
    srv.add_argument("app_args", nargs=argparse.REMAINDER, metavar="-- KUBEVIEW-OPTIONS",
                     help="options for each session's kubeview, e.g. -- --demo")
    return srv


def run(args: argparse.Namespace) -> int:
    import asyncio

    try:
        passed = app_args(args)
    except SessionOptionsError as exc:
        _err(str(exc))
        return exc.exit_code
    if not args.token_file and not is_loopback(args.host):
        _err(f"--host {args.host} is reachable from other hosts, and anyone there could drive the TUI "
             "(scale workloads, change GPU packing); pass --token-file FILE so browsers must present it")
        return 2
    try:
        token = _read_token(args.token_file) if args.token_file else None
    except OSError as exc:
        _err(str(exc))
        return 1
    from kubeview.web.server import KubeviewServer

    command = "exec " + shlex.join([sys.executable, "-m", "kubeview", *passed])
    server = KubeviewServer(command, host=args.host, port=args.port, title=shlex.join(["kubeview", *passed]),
                            token=token, max_sessions=args.max_sessions, idle_timeout=args.idle_timeout)
    server.initialize_logging()
    try:
        asyncio.run(server.run())
    except OSError as exc:
        _err(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return 1
    return 0
