"""Edit a packing policy in place: the policy, per-resource weights; bias/avoid are shown here.

A view of its `live` and `edited` reactives; every edit posts `PolicyEditor.Edited` with the new
config (or the reason it is invalid), and the Packing screen recomputes its what-if table.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Label, RadioButton, RadioSet, Static

from kubeview.scheduling.config import POLICIES, PackingConfig
from kubeview.tui.widgets.text_field import TextField

WEIGHTED = ("nvidia.com/gpu", "cpu", "memory")
WEIGHT_CHARS = r"\d*\.?\d*"  # a weight is a plain decimal: no sign, no exponent (`82e` was let in)


def describe(config: PackingConfig | None) -> str:
    if config is None:
        return "unknown"
    weights = ", ".join(f"{r} {w:g}" for r, w in sorted(config.weights.items()) if w)
    extra = []
    if config.bias:
        extra.append("bias " + ", ".join(f"{n} {b:+g}" for n, b in sorted(config.bias.items())))
    if config.avoid:
        extra.append("avoid " + ", ".join(sorted(config.avoid)))
    return f"{config.policy} ({weights})" + (" · " + " · ".join(extra) if extra else "")


class PolicyEditor(Vertical):
    live: reactive[PackingConfig | None] = reactive(None)
    edited: reactive[PackingConfig] = reactive(PackingConfig, always_update=True)

    class Edited(Message):
        def __init__(self, config: PackingConfig | None, error: str | None) -> None:
            super().__init__()
            self.config, self.error = config, error

    def compose(self) -> ComposeResult:
        yield Static(id="policy-live")
        with RadioSet(id="policy"):
            for p in POLICIES:
                yield RadioButton(p, id=f"policy-{p}")
        with Horizontal(id="weights"):
            for r in WEIGHTED:
                yield Label(r.split("/")[-1], classes="weight-label")
                yield TextField(restrict=WEIGHT_CHARS, id=f"weight-{r.replace('/', '-').replace('.', '-')}",
                                classes="weight", compact=True)
        yield Static(id="policy-edited")

    def watch_live(self) -> None:
        self.query_one("#policy-live", Static).update(f"[b]live[/b]   {describe(self.live)}")

    def watch_edited(self, config: PackingConfig) -> None:
        changed = self.live is not None and config != self.live
        mark = "[b yellow]edited[/]" if changed else "[b]edited[/b]"
        self.query_one("#policy-edited", Static).update(f"{mark} {describe(config)}")
        with self.prevent(RadioSet.Changed):
            self.query_one(f"#policy-{config.policy}", RadioButton).value = True
        for r in WEIGHTED:
            field = self.query_one(f"#weight-{r.replace('/', '-').replace('.', '-')}", Input)
            text = f"{config.weights.get(r, 0.0):g}"
            if field.value != text and not field.has_focus:
                with self.prevent(Input.Changed):
                    field.value = text

    def _emit(self, **changes: object) -> None:
        try:
            config = PackingConfig.from_dict({**self.edited.to_dict(), **changes})
        except ValueError as exc:
            self.query_one("#policy-edited", Static).update(f"[b red]invalid[/] {exc}")
            self.post_message(self.Edited(None, str(exc)))
            return
        self.post_message(self.Edited(config, None))

    @on(RadioSet.Changed)
    def _policy(self, event: RadioSet.Changed) -> None:
        event.stop()
        self._emit(policy=str(event.pressed.label))

    @on(Input.Changed, ".weight")
    def _weight(self, event: Input.Changed) -> None:
        event.stop()
        weights = dict(self.edited.weights)
        for r in WEIGHTED:
            field = self.query_one(f"#weight-{r.replace('/', '-').replace('.', '-')}", Input)
            try:
                weights[r] = float(field.value) if field.value.strip() else 0.0
            except ValueError:
                self.query_one("#policy-edited", Static).update(f"[b red]invalid[/] weight of {r}: {field.value!r}")
                return
        self._emit(weights=weights)
