"""YAML loading with a bound on nesting depth, checked before anything recurses.

libyaml's composer (``CSafeLoader``) recurses in C once per nesting level, so a 50 KB file of
25,000 nested ``[`` overflows the C stack and kills the process (SIGSEGV); the pure-Python
loader ends in a RecursionError instead.  The *event* parser of both is an explicit state
machine that does not recurse, so one pass over the events counts the depth and stops at the
first level past the bound.  That pass costs ~40% of a load (10 ms on ``spheres.yaml``).
JSON is YAML here, so a kubeconfig in JSON is covered too.  kubeview uses this module for its
own YAML inputs (``--cluster`` files, kubeconfigs): one implementation, no kubeview import.

PyYAML 6.0.4's bundled libyaml has a nesting limit of its own (1,000 levels) in the *scanner*,
which in flow context reads ahead past every ``[`` before the parser emits the first event, so
its "exceeded maximum nesting depth" can come before this module sees level 65.  That error is
mapped to the same :class:`TooDeep`, with the line found by the pure-Python parser (which has
no limit in any version), so the message does not depend on which PyYAML is installed.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_NESTING = 64
"""Deepest nesting of mappings/sequences accepted; real scenes use 5, kubeconfigs 6."""

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~4x faster

_OPEN = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


class TooDeep(ValueError):
    """The document nests deeper than allowed; ``line`` is 1-based, where the bound was passed."""

    def __init__(self, limit: int, line: int) -> None:
        super().__init__(f"nested more than {limit} levels deep (line {line})")
        self.limit, self.line = limit, line


def check_depth(text: str, limit: int = MAX_NESTING, loader: type = LOADER) -> None:
    """Raise TooDeep if ``text`` nests more than ``limit`` levels (yaml.YAMLError if malformed)."""
    try:
        _count_depth(text, limit, loader)
    except yaml.YAMLError as exc:
        if loader is yaml.SafeLoader or not _is_libyaml_nesting_limit(exc):
            raise
        # Deeper than libyaml's own limit, so deeper than ours: find our line with the
        # pure-Python parser, which raises TooDeep at the same event the C one would have.
        _find_our_line(text, limit, exc)
        raise


def _find_our_line(text: str, limit: int, exc: yaml.YAMLError) -> None:
    """Raise TooDeep where the pure-Python parser passes ``limit`` in the text libyaml read before it
    stopped. Only that head can hold our line, and the pure parser costs depth² (40 s over 25,000
    levels, 0.5 s over libyaml's 1,000); past the cut it ends early, and libyaml's error stands."""
    mark = getattr(exc, "problem_mark", None)
    head = text if mark is None else text[: mark.index + 1]
    try:
        _count_depth(head, limit, yaml.SafeLoader)
    except yaml.YAMLError:
        return


def _is_libyaml_nesting_limit(exc: yaml.YAMLError) -> bool:
    return "maximum nesting depth" in str(getattr(exc, "problem", "") or "")


def _count_depth(text: str, limit: int, loader: type) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > limit:
                mark = event.start_mark
                raise TooDeep(limit, (mark.line + 1) if mark is not None else 0)
        elif isinstance(event, _CLOSE):
            depth -= 1


def safe_load(text: str, limit: int = MAX_NESTING, loader: type = LOADER) -> Any:
    """``yaml.safe_load`` after :func:`check_depth`; ``loader`` is a safe loader (libyaml's by
    default; ``yaml.SafeLoader`` where its error positions are part of a message)."""
    check_depth(text, limit, loader)
    return yaml.load(text, Loader=loader)  # noqa: S506 -- a safe loader

