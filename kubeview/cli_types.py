"""argparse `type=` functions: every option is checked while parsing, before anything starts.

A bad value is one line and exit 2 from argparse (`kubeview: error: argument --window: ...`), so a
typo never reaches a render, a watch or a Prometheus query. Pure: no I/O (paths are checked by
`kubeview.render.outputs` once parsing is done).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from urllib.parse import urlsplit

from kubeview.cluster.prometheus.queries import DURATION


def duration(text: str) -> str:
    """A Prometheus range such as 30s, 5m, 1h30m (not zero)."""
    if not DURATION.match(text) or not any(c in "123456789" for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Prometheus duration such as 30s, 5m or 1h")
    return text


def http_url(text: str) -> str:
    """An http:// or https:// URL with a host (and a valid port, if one is given)."""
    parts = urlsplit(text)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise argparse.ArgumentTypeError(f"{text!r} is not an http:// or https:// URL such as http://prometheus:9090")
    return text


def int_range(low: int, high: int) -> Callable[[str], int]:
    """Whole numbers from `low` to `high`."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high:,}, got {text!r}")
        return value

    return parse


def _number(text: str, ok: Callable[[float], bool], expected: str) -> float:
    """`text` as a float for which `ok` holds (NaN fails every bound), else one line saying what was
    expected."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not ok(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def seconds(text: str) -> float:
    """A positive number of seconds."""
    return _number(text, lambda v: 0 < v < float("inf"), "a positive number of seconds")


def positive(text: str) -> float:
    """A positive finite number (a rate per second, a burst)."""
    return _number(text, lambda v: 0 < v < float("inf"), "a positive number")


def ratio_at_least_one(text: str) -> float:
    """A finite number >= 1 (a "times slower" margin)."""
    return _number(text, lambda v: 1.0 <= v < float("inf"), "a number of at least 1")


def fraction(text: str) -> float:
    """A share from 0 to 1 ("0.25")."""
    return _number(text, lambda v: 0 <= v <= 1, "a fraction from 0 to 1")


def cpu_amount(text: str) -> str:
    """A positive cpu quantity (1000m, 0.5, 2), checked with the model's own parser."""
    from kubeview.model.quantity import QuantityError, to_units

    try:
        units = to_units("cpu", text)
    except QuantityError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a cpu amount (examples: 1000m, 0.5, 2)") from None
    if units <= 0:  # a cpu amount, but no consumer can run on none
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 (examples: 1000m, 0.5, 2)")
    return text


def distinct_names(text: str) -> list[str]:
    """Names separated by commas, none empty, none twice (`--schedulers a,b`)."""
    names = [n.strip() for n in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"expected distinct names separated by commas, not {text!r}")
    return names
