"""`kubeview extender` refuses a non-loopback `--listen` with no authentication (#24 item 3).

The process runs under a Python audit hook that reports every `socket.bind` on stderr, so "never
binds" is observed, not inferred; the allowed variants bind and answer a real HTTP request on the
address they print. `--policy foo` is bad input: exit 2 (#24 item 14).
"""

from __future__ import annotations

import http.client
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kubeview.scheduling.listen_guard import is_loopback, refusal

# python -c: the kubeview command with an audit hook that prints each bind (address) to stderr
AUDITED = ("import sys\n"
           "sys.addaudithook(lambda e, a: e == 'socket.bind' and print('BIND', a[1], file=sys.stderr, flush=True))\n"
           "from kubeview.cli import main\n"
           "raise SystemExit(main(sys.argv[1:]))\n")


def extender(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", AUDITED, "extender", "--local", *args], cwd=tmp_path,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_a_non_loopback_listen_without_authentication_is_refused_and_never_binds(tmp_path: Path) -> None:
    proc = extender(tmp_path, "--listen", "0.0.0.0:18898")
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (
        2, "", "kubeview extender: --listen 0.0.0.0:18898 is reachable from other hosts, and without "
               "authentication anyone there could change GPU placement through PUT /config; pass --token-file "
               "FILE or --client-ca FILE (or --insecure-allow-unauthenticated to accept that).\n")


@pytest.mark.parametrize("variant", ["loopback", "token", "insecure"])
def test_the_allowed_variants_bind_and_serve(tmp_path: Path, variant: str) -> None:
    (tmp_path / "token").write_text("tok\n")
    args = {"loopback": ["--listen", "127.0.0.1:0"],
            "token": ["--listen", "0.0.0.0:0", "--token-file", str(tmp_path / "token")],
            "insecure": ["--listen", "0.0.0.0:0", "--insecure-allow-unauthenticated"]}[variant]
    proc = extender(tmp_path, *args)
    try:
        binds, url = [], None
        for line in proc.stderr:
            binds += re.findall(r"^BIND (.*)$", line)
            if match := re.search(r"extender on (http://\S+)", line):
                url = match.group(1)
                break
        assert url is not None, "the extender did not start"
        assert binds and binds[0].startswith("('127.0.0.1'" if variant == "loopback" else "('0.0.0.0'")
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=10)
        conn.request("GET", "/config")
        resp = conn.getresponse()
        assert resp.status == 200 and b'"policy"' in resp.read()
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_policy_foo_is_bad_input_exit_2(tmp_path: Path) -> None:
    proc = extender(tmp_path, "--policy", "foo")
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (
        2, "", "kubeview extender: policy must be one of pack, spread, balanced, not 'foo'.\n")


def test_loopback_is_judged_as_written() -> None:
    assert [is_loopback(h) for h in ("127.0.0.1", "127.3.4.5", "::1", "localhost", "0.0.0.0", "::", "", "10.0.0.1",
                                     "example.com")] == [True, True, True, True, False, False, False, False, False]
    assert refusal("::", 80, token=False, client_ca=False, insecure=False).startswith("--listen [::]:80 is reachable")
    for allowed in ({"token": True}, {"client_ca": True}, {"insecure": True}):
        assert refusal("0.0.0.0", 1, **{"token": False, "client_ca": False, "insecure": False, **allowed}) is None
