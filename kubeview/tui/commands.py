"""Command palette entries for every action: each binding of the app and of the current screen.

Built from the bindings themselves (description and tooltip), so a new key is in the palette the
moment it exists, and the palette can never offer an action the screen does not have (or refuses
now). Each command once: Textual's own "Quit" and "Keys" are left out (`KubeviewApp.get_system_commands`),
ours quit cleanly and show every key.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from textual.actions import parse as parse_action
from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.widget import Widget


class KubeviewCommands(Provider):
    """`Nodes: Sort cpu`, `Workloads: Scale +1`, `Go to pods`, ..."""

    def _entries(self) -> Iterator[tuple[str, str, Widget | App[Any], str]]:
        screen = self.screen
        seen: set[str] = set()
        # the screen the palette was opened from is just below it on the stack
        stack = self.app.screen_stack
        target = stack[-2] if len(stack) > 1 else screen
        title = getattr(target, "SCREEN_TITLE", "") or type(target).__name__
        nodes: tuple[tuple[Widget | App[Any], list[Binding]], ...] = (
            (target, _bindings(target)), (self.app, _bindings(self.app)))  # both can `run_action`
        for node, bindings in nodes:
            for b in bindings:
                if b.action in seen or b.system or not _enabled(node, b.action):
                    continue
                seen.add(b.action)
                name = (b.tooltip or b.description) if node is self.app else f"{title}: {b.description}"
                yield name, b.tooltip or b.description, node, b.action

    async def discover(self) -> Hits:
        for name, help_text, node, action in self._entries():
            yield DiscoveryHit(name, partial(node.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, node, action in self._entries():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(node.run_action, action), help=help_text)


def _enabled(node: DOMNode, action: str) -> bool:
    """What the footer would show: an action the node refuses now (Clear filter with no filter) is out."""
    _, name, params = parse_action(action)
    return node.check_action(name, params) is not False


def _bindings(node: DOMNode) -> list[Binding]:
    out = []
    for b in node._bindings.key_to_bindings.values():
        out.extend(b)
    return [b for b in out if b.description and b.id]  # ours all have ids; Textual's own are elsewhere
