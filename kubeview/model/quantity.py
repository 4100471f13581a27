"""Kubernetes quantities as the scheduler counts them: cpu in millicores, everything else in units.

`kubernetes.utils.parse_quantity` is the reference (tests compare against it), but the model must not
import `kubernetes` and parses hundreds of thousands of strings on a 150k-pod cluster, so this is a
cached Decimal parser with the same grammar. Values round up, as `Quantity.MilliValue()`/`Value()` do.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}

CPU = "cpu"
# What kube-scheduler can count: Quantity.MilliValue()/Value() are int64. Anything larger is refused
# here, before `int()` would build a number of a million digits (a request of "1e999990" held the
# GIL for 38 s that way) or numpy would overflow.
MAX_UNITS = 2**63 - 1
_MAX_TEXT = 64  # resource.Quantity's longest sensible spelling is far shorter


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@lru_cache(maxsize=65536)
def parse(text: str | int | float) -> Decimal:
    """The exact value of a quantity string ("100m", "16Gi", "1e3", 2)."""
    if isinstance(text, int | float):
        return Decimal(str(text))
    s = str(text).strip()
    if not s:
        raise QuantityError("empty quantity")
    if len(s) > _MAX_TEXT:
        raise QuantityError(f"quantity of {len(s)} characters; at most {_MAX_TEXT} are accepted")
    suffix = s[-2:] if s[-2:] in _BINARY else (s[-1] if s[-1] in _DECIMAL and not s[-1].isdigit() else "")
    number = s[: len(s) - len(suffix)] if suffix else s
    try:
        value = Decimal(number)
    except InvalidOperation as exc:
        raise QuantityError(f"not a quantity: {text!r}") from exc
    if not value.is_finite():
        raise QuantityError(f"not a quantity: {text!r}")
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    return value * _DECIMAL[suffix]


@lru_cache(maxsize=65536)
def to_units(resource: str, text: str | int | float) -> int:
    """Integer amount in model units: millicores for cpu, the plain value (rounded up) otherwise."""
    value = parse(text)
    if resource == CPU:
        value = value * 1000
    if value.copy_abs() > MAX_UNITS:  # compares exponents first: fast for 1e999990
        raise QuantityError(f"{resource} quantity {str(text)[:24]!r} is out of range (more than int64 "
                            "in the scheduler's units)")
    return int(value.to_integral_value(rounding="ROUND_CEILING"))


def resource_dict(raw: dict | None) -> dict[str, int]:
    """A ResourceList (`{"cpu": "100m", ...}`) in model units."""
    if not raw:
        return {}
    return {name: to_units(name, q) for name, q in raw.items()}


_SI_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_NANO = Decimal("1e-9")


def canonical(text: str | int | float) -> str:
    """The quantity as the API server writes it back (`Quantity.String()`): "0.5" is "500m", "1000"
    "1k", "2048Mi" "2Gi", "1.5Gi" "1536Mi"; precision below nano rounds up, as ParseQuantity does."""
    value = parse(text)
    if not value:
        return "0"
    if isinstance(exponent := value.as_tuple().exponent, int) and exponent < -9:  # finer than nano
        value = value.quantize(_NANO, rounding="ROUND_CEILING")
    s = str(text).strip()
    sign, magnitude = ("-" if value < 0 else ""), abs(value)
    if s[-2:] in _BINARY and magnitude >= 1024 and magnitude == magnitude.to_integral_value():
        number, power = int(magnitude), 0
        while power < 6 and number % 1024 == 0:
            number, power = number // 1024, power + 1
        return f"{sign}{number}{('', *_BINARY)[power]}"
    exponent_form = not (s[-2:] in _BINARY or (s[-1] in _DECIMAL and not s[-1].isdigit())) and "e" in s.lower()
    digits, exponent = int(magnitude.scaleb(9)), -9  # whole nanos after the rounding above
    while digits % 10 == 0:
        digits, exponent = digits // 10, exponent + 1
    extra = exponent % 3
    digits, exponent = digits * 10**extra, exponent - extra
    if exponent_form:
        return f"{sign}{digits}" + (f"e{exponent}" if exponent else "")
    if exponent not in _SI_SUFFIX:  # beyond E: Go writes the exponent
        return f"{sign}{digits}e{exponent}"
    return f"{sign}{digits}{_SI_SUFFIX[exponent]}"
