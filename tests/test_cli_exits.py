"""Exit codes and one-line messages of #24 item 14 and of issue 42 item 9 (one rule, every command): a closed pipe under `snapshot`, SIGTERM, `--cpu 0`,
`--prometheus-queries` without `--prometheus` or unreadable, `-o x.jpg`, and the "too many tasks"
advice of `kubeview --render` (it named the renderer's knobs, which `--render` does not have)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_cli_options import RENDER, _env, _usage, kubeview


@pytest.mark.parametrize("output", [(), ("--json",)])
def test_snapshot_into_a_closed_pipe_exits_0_silently(tmp_path: Path, output: tuple[str, ...]) -> None:
    """The reader is gone before kubeview writes a byte (its end closed first): the broken pipe is
    certain, not a race with `head`. Tables exited 1 (rich's own handler), --json 0 or 141."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", *output], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=_env(tmp_path), cwd=tmp_path)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_sigterm_says_terminated_and_exits_143_as_ctrl_c_says_interrupted(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "kubeview", *RENDER, "--spp", "500000", "-o", "x.png"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path),
                            cwd=tmp_path)
    try:
        for line in proc.stdout:  # the render is running: its first progress line is out
            if "samples/s" in line:
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, err) == (143, "kubeview: terminated\n")
    assert not (tmp_path / "x.png").exists()


def test_bad_values_of_item_14_are_one_line(tmp_path: Path) -> None:
    cases: dict[tuple[str, ...], tuple[int, str]] = {
        (*RENDER, "--cpu", "0"): (2, _usage("--cpu", "'0' must be more than 0 (examples: 1000m, 0.5, 2)")),
        (*RENDER, "--cpu=-1"): (2, _usage("--cpu", "'-1' must be more than 0 (examples: 1000m, 0.5, 2)")),
        ("snapshot", "--prometheus-queries", "q.yaml"):
            (2, "kubeview: --prometheus-queries q.yaml needs --prometheus URL (the queries are sent there).\n"),
        ("snapshot", "--prometheus", "http://127.0.0.1:9", "--prometheus-queries", "nosuch.yaml"):
            (2, "kubeview: cannot read --prometheus-queries nosuch.yaml: No such file or directory.\n"),
        (*RENDER, "-o", "x.jpg"): (2, "kubeview: -o x.jpg: the render writes PNG; name a .png file\n"),
        (*RENDER, "--spp", "1000000"): (2, "kubeview: three-spheres.yaml: tasks: the job would have 1,500,000 tasks "
                                           "(tile 16, 4 samples per task), limit 1,000,000: lower --spp or --width, "
                                           "or raise tasks.tile or tasks.samples in a copy of the scene\n"),
    }
    (tmp_path / "q.yaml").write_text("queries: {}\n")
    for args, (code, message) in cases.items():
        out = kubeview(tmp_path, *args)
        assert (out.returncode, out.stdout, out.stderr) == (code, "", message), args
    assert not list(tmp_path.glob("*.jpg")) and not list(tmp_path.glob("*.png"))


# -- issue 42 item 9: one rule for every command (README "Exit codes") ------------------------------------
# 2: what was typed is wrong (an option, an argument, a name or a file given on the command line);
# 1: what was typed is fine and the run failed (the cluster, the environment: $KUBECONFIG, the answer).

UNREACHABLE = ("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
               "users: [{name: u, user: {token: x}}]\ncontexts: [{name: lab, context: {cluster: c, user: u}}]\n"
               "current-context: lab\n")
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n"
CONTEXT_LAB = "--context lab needs a kubeconfig, and there is none"
DEMO_LAB = "--context lab is for a real cluster, but --demo asks for the embedded one; drop one of them."
# (args, $KUBECONFIG or None, exit code, how stderr starts after "kubeview"): every command
EXITS: list[tuple[tuple[str, ...], str | None, int, str]] = [
    (("--demo", "--context", "lab"), None, 2, f": {DEMO_LAB}"),
    (("--local", "--cluster", "bad.yaml", "--headless"), None, 2, ": bad.yaml: top level: must be a mapping"),
    (("--render", "nosuch", "--headless", "--local"), None, 2, ": nosuch: no such scene file or bundled scene"),
    (("--headless",), "unreachable", 1, ": Cannot reach the API server at https://127.0.0.1:1"),
    (("snapshot", "--demo", "--context", "lab"), None, 2, f": {DEMO_LAB}"),
    (("snapshot", "--context", "lab"), None, 2, f": {CONTEXT_LAB}"),
    (("snapshot", "--local", "--cluster", "bad.yaml"), None, 2, ": bad.yaml: top level: must be a mapping"),
    (("snapshot", "--kubeconfig", "nosuch"), None, 2, ": No kubeconfig at nosuch: pass an existing file"),
    (("snapshot", "--kubeconfig", "unreachable", "--context", "nope"), None, 2,
     ': Context "nope" is not in the kubeconfig unreachable; use one of: lab.'),
    (("snapshot",), "binary", 1, ": The kubeconfig binary is not UTF-8 text (byte 0); "
                                 "fix it, or point $KUBECONFIG at a real one."),
    (("snapshot",), "unreachable", 1, ": Cannot reach the API server at https://127.0.0.1:1"),
    (("fit", "dir", "--local"), None, 2, ": fit: dir: is a directory; name a YAML or JSON file"),
    (("fit", "binary", "--local"), None, 2, ": fit: binary: not UTF-8 text (byte 0); a manifest is YAML or JSON"),
    (("fit", "pod.yaml", "--demo", "--context", "lab"), None, 2, f": {DEMO_LAB}"),
    (("fit", "pod.yaml"), "unreachable", 1, ": Cannot reach the API server at https://127.0.0.1:1"),
    (("extender", "--demo", "--context", "lab"), None, 2, f" extender: {DEMO_LAB}"),
    (("extender", "--policy", "nosuch"), None, 2, " extender: policy must be one of pack, spread, balanced"),
    (("bench", "nosuch"), None, 2, " bench: error: argument what: invalid choice: 'nosuch'"),
    (("bench", "cluster"), None, 2, " bench cluster: needs --kubeconfig FILE"),
    (("bench", "scheduler", "--context", "lab"), None, 2, " bench scheduler: --context needs --kubeconfig FILE"),
    (("bench", "scheduler", "nosuch.yaml"), None, 2, " bench scheduler: cannot read nosuch.yaml"),
    (("render-manifests", "nosuch"), None, 2, ": nosuch: no such scene file or bundled scene"),
    (("tune", "three-spheres", "--headless", "--cpu", "0m:100m"), None, 2,
     ": --cpu: '0m:100m' is outside 1m..64,000m"),
    (("tune", "three-spheres", "--headless", "--context", "lab"), None, 2, ": --context lab needs a kubeconfig"),
    (("preempt", "nosuchnode", "--items", "10"), None, 2, ": no node 'nosuchnode' in the demo cluster"),
    (("serve", "--", "--render", "nosuch"), None, 2, " serve: after --: nosuch: no such scene file"),
    (("serve", "--", "--context", "lab"), None, 2, f" serve: after --: {CONTEXT_LAB}"),
    (("plan", "--demo", "nosuch/pod"), None, 2, ": no pod 'nosuch/pod' in the cluster"),
    (("plan", "--demo", "--context", "lab", "x/y"), None, 2, f": {DEMO_LAB}"),
    # plan's one refinement of 1 (its --help): 3 = the cluster could not be read
    (("plan", "x/y"), "unreachable", 3, ": Cannot reach the API server at https://127.0.0.1:1"),
]


def test_every_command_follows_the_exit_code_rule(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("- not a mapping\n")
    (tmp_path / "binary").write_bytes(b"\xd0\xcf\x11\xe0\x00\x01")
    (tmp_path / "dir").mkdir()
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "unreachable").write_text(UNREACHABLE)

    def check(case: tuple) -> str | None:
        args, env_kubeconfig, code, says = case
        env = _env(tmp_path)
        if env_kubeconfig:
            env["KUBECONFIG"] = env_kubeconfig
        out = subprocess.run([sys.executable, "-m", "kubeview", *args], capture_output=True, text=True,
                             timeout=120, env=env, cwd=tmp_path)
        if (out.returncode, out.stderr.count("\n")) != (code, 1) or not out.stderr.startswith(f"kubeview{says}"):
            return f"{' '.join(args)}: exit {out.returncode}, {out.stderr!r}"
        return None

    # independent processes (most of each is interpreter start-up and waits on unreachable servers): 4 at once
    with ThreadPoolExecutor(max_workers=4) as pool:
        failures = [f for f in pool.map(check, EXITS) if f is not None]
    assert not failures, "\n".join(failures)
