"""An explicit `$KUBECONFIG` that names nothing usable, and a kubeconfig that is not UTF-8, are one
line (#24 items 1 and 2): exit 1 when the environment named it, 2 when the command line did
(`--kubeconfig`, `--context`: issue 42 item 9), each naming what to fix. Before: the missing or empty file gave the embedded cluster's
made-up 5-node document and exit 0; the non-UTF-8 one a UnicodeDecodeError traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kubeapi import KubeAPI


def kubeview(tmp_path: Path, *args: str, kubeconfig: str | None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config
    if kubeconfig is not None:
        env["KUBECONFIG"] = kubeconfig
    out = subprocess.run([sys.executable, "-m", "kubeview", *args], capture_output=True, text=True, timeout=120,
                         env=env, cwd=tmp_path)
    return out.returncode, out.stdout, out.stderr


@pytest.mark.parametrize("args", [("snapshot", "--json"), ("snapshot",), ("snapshot", "--context", "nope")])
def test_kubeconfig_naming_a_missing_file_is_an_error(tmp_path: Path, args: tuple[str, ...]) -> None:
    missing = str(tmp_path / "nonexistent" / "kc")
    assert kubeview(tmp_path, *args, kubeconfig=missing) == (
        1, "", f"kubeview: $KUBECONFIG names {missing}, and no such file exists; fix or unset KUBECONFIG, "
               "or pass --kubeconfig FILE.\n")


@pytest.mark.parametrize("empty", ["/dev/null", "empty-file"])
def test_kubeconfig_naming_an_empty_file_is_an_error(tmp_path: Path, empty: str) -> None:
    if empty == "empty-file":
        (tmp_path / empty).write_text("")
        empty = str(tmp_path / empty)
    assert kubeview(tmp_path, "snapshot", kubeconfig=empty) == (
        1, "", f"kubeview: The kubeconfig {empty} is empty; point KUBECONFIG at a real one.\n")


def test_context_nope_with_kubeconfig_set_names_the_context_not_an_unset_kubeconfig(
        tmp_path: Path, kube_api: KubeAPI) -> None:
    kc = str(kube_api.kubeconfig)
    code, out, err = kubeview(tmp_path, "snapshot", "--context", "nope", kubeconfig=kc)
    assert (code, out, err) == (2, "", f'kubeview: Context "nope" is not in the kubeconfig {kc}; '
                                       "use one of: kubeview-test, kubeview-test-default.\n")


@pytest.mark.parametrize("how", ["KUBECONFIG", "--kubeconfig", "--context", "--render"])
def test_a_kubeconfig_that_is_not_utf8_is_one_line(tmp_path: Path, how: str) -> None:
    bad = tmp_path / "kc"
    bad.write_bytes(b"apiVersion: v1\nkind: Config\ncurrent-context: \xff\xfe\n")
    args = {"KUBECONFIG": ("snapshot",), "--kubeconfig": ("snapshot", "--kubeconfig", str(bad)),
            "--context": ("snapshot", "--context", "lab"),
            "--render": ("--render", "three-spheres", "--headless")}[how]
    # the file came from $KUBECONFIG but for --kubeconfig: it is what the message tells to fix
    fix = "point --kubeconfig at a real one" if how == "--kubeconfig" else "fix it, or point $KUBECONFIG at a real one"
    assert kubeview(tmp_path, *args, kubeconfig=None if how == "--kubeconfig" else str(bad)) == (
        2 if how == "--kubeconfig" else 1, "", f"kubeview: The kubeconfig {bad} is not UTF-8 text (byte 45); {fix}.\n")
    assert not list(tmp_path.glob("*.png"))
