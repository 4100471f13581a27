"""The pure rules of `kubeview serve` (kubeview/web/gate.py)."""

from __future__ import annotations

from kubeview.web.gate import Sessions, host_allowed, same_origin, token_matches


def test_token_matches_only_the_exact_token() -> None:
    assert token_matches(None, None) and token_matches("anything", None)
    assert token_matches("abc", "abc")
    assert not token_matches(None, "abc")
    assert not token_matches("", "abc")
    assert not token_matches("abd", "abc")
    assert not token_matches("abc ", "abc")


def test_websockets_from_another_site_are_not_same_origin() -> None:
    assert same_origin(None, "127.0.0.1:8000")  # not a page: the token still applies
    assert same_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert same_origin("https://Lab.example:443", "lab.example:443")
    assert not same_origin("http://evil.example", "127.0.0.1:8000")
    assert not same_origin("http://127.0.0.1:9000", "127.0.0.1:8000")
    assert not same_origin("http://127.0.0.1:8000", None)


def test_without_a_token_only_loopback_names_are_answered() -> None:
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "127.0.0.1"):
        assert host_allowed(host, "127.0.0.1", token=False), host
    assert not host_allowed("evil.example:8000", "127.0.0.1", token=False)
    assert not host_allowed(None, "127.0.0.1", token=False)
    assert host_allowed("evil.example:8000", "0.0.0.0", token=True)


def test_sessions_are_capped_and_released() -> None:
    s = Sessions(2)
    assert s.admit("a") and s.admit("b")
    assert s.full and not s.admit("c")
    assert s.summary() == "2 of 2 open"
    s.release("a")
    assert not s.full and s.admit("c")
    s.release("zzz")  # unknown: nothing happens
    assert s.open == {"b", "c"}
