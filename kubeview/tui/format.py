"""How amounts look on screen: cpu cores, binary bytes, percentages, two-tone bars, taints, wrapped text.

Pure functions returning `str` or `rich.text.Text`, shared by every table and the header, so a
figure reads the same everywhere (and the snapshot tests pin it down).
"""

from __future__ import annotations

import re
import textwrap
import time

from rich.markup import escape
from rich.text import Text

GPU = "nvidia.com/gpu"
_NODES_AVAILABLE = re.compile(r"^\s*\d+/\d+ nodes are available:\s*")
_BIN = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
EIGHTHS = " ▏▎▍▌▋▊▉"


def cpu(millicores: float | None) -> str:
    """`250m`, `1.5`, `96` (cores); `-` for None."""
    if millicores is None:
        return "-"
    if millicores == 0:
        return "0"
    if abs(millicores) < 1000:
        return f"{millicores:.0f}m"
    cores = millicores / 1000
    return f"{cores:.0f}" if cores >= 100 or cores == int(cores) else f"{cores:.1f}"


def mem(n: float | None) -> str:
    """`512Mi`, `1.5Gi`, `3.2Ti`; `-` for None."""
    if n is None:
        return "-"
    for suffix, size in _BIN:
        if abs(n) >= size:
            v = n / size
            return f"{v:.0f}{suffix}" if v >= 100 or v == int(v) else f"{v:.1f}{suffix}"
    return f"{n:.0f}"


def amount(resource: str, value: float | None) -> str:
    """A value of any resource in its natural unit."""
    if resource == "cpu":
        return cpu(value)
    if resource in ("memory", "ephemeral-storage"):
        return mem(value)
    return "-" if value is None else f"{value:.0f}"


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


def level_style(frac: float) -> str:
    """Colour of a bar by how full it is (red at 90%+, yellow at 70%+)."""
    if frac >= 0.9:
        return "bold red"
    if frac >= 0.7:
        return "yellow"
    return "green"


def readiness_style(frac: float) -> str:
    """Colour of a ready/desired bar: full is good here."""
    if frac >= 1:
        return "green"
    return "yellow" if frac > 0 else "bold red"


def bar(requested: float, allocatable: float, width: int, used: float | None = None,
        style: str | None = None) -> Text:
    """A bar of `width` cells: requested/allocatable filled, the used share (when known) brighter.

    Eighth blocks give 8 steps per cell; an overcommitted node's bar is full and red.
    """
    out = Text()
    if allocatable <= 0:
        return out.append("·" * width, style="dim")
    frac = max(0.0, requested / allocatable)
    steps = min(width * 8, round(frac * width * 8))
    if frac > 0 and steps == 0:
        steps = 1
    used_steps = None if used is None else min(steps, round(max(0.0, used / allocatable) * width * 8))
    style = style or level_style(frac)
    full, part = divmod(steps, 8)
    if used_steps is not None:
        ufull = used_steps // 8
        out.append("█" * ufull, style=style)
        out.append("█" * (full - ufull), style=f"{style} dim")
    else:
        out.append("█" * full, style=style)
    if part:
        out.append(EIGHTHS[part], style=style)
    rest = width - full - (1 if part else 0)
    out.append("·" * rest, style="bright_black")
    return out


def bar_cell(requested: float, allocatable: float, width: int, used: float | None = None,
             label: str | None = None, style: str | None = None) -> Text:
    """Bar plus a short figure: `██▌····· 31%` (with `u12%` when utilization is known)."""
    out = bar(requested, allocatable, width, used, style)
    out.append(" ")
    out.append(label if label is not None else pct(requested, allocatable).rjust(4))
    if used is not None and allocatable > 0:
        out.append(f" u{100 * used / allocatable:.0f}%".ljust(5), style="cyan")
    return out


def dimmed(cells: list[Text | str], columns: range) -> list[Text | str]:
    """A row whose figures in `columns` are not current (stale: model/freshness.py), those cells dimmed."""
    out = list(cells)
    for i in columns:
        if i < len(out):
            cell = out[i]
            text = Text(cell) if isinstance(cell, str) else cell.copy()
            text.stylize("dim")
            out[i] = text
    return out


def conditions(view_conditions: dict[str, str], unschedulable: bool) -> Text:
    """`Ready`, `NotReady`, `Ready,Cordoned`, `Ready,MemoryPressure`, with colour."""
    ready = view_conditions.get("Ready") == "True"
    out = Text("Ready" if ready else "NotReady", style="green" if ready else "bold red")
    if unschedulable:
        out.append(",Cordoned", style="yellow")
    for kind, status in view_conditions.items():
        if kind != "Ready" and status == "True":
            out.append(f",{kind}", style="red")
    return out


def taints(view_taints: list[dict]) -> str:
    """`nvidia.com/gpu=present:NoSchedule, ...`, as `kubectl describe` prints them."""
    parts = []
    for t in view_taints:
        key = t.get("key", "")
        value = t.get("value")
        parts.append(f"{key}={value}:{t.get('effect', '')}" if value else f"{key}:{t.get('effect', '')}")
    return ", ".join(parts) if parts else "<none>"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """"1 consumer", "3 consumers" ("1 GPU", "2 GPUs"): the noun agrees with the count."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def clock(t: float) -> str:
    """Local wall-clock time of an epoch timestamp, `13:05:12`."""
    return time.strftime("%H:%M:%S", time.localtime(t))


def duration(seconds: float | None) -> str:
    """`42s`, `3m05s`, `1h02m`; `-` for None."""
    if seconds is None:
        return "-"
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def rate(per_second: float) -> str:
    """`812/s`, `12.3k/s`, `1.2M/s`."""
    for suffix, size in (("M", 1e6), ("k", 1e3)):
        if per_second >= size:
            return f"{per_second / size:.1f}{suffix}/s"
    return f"{per_second:.0f}/s"


def requests_summary(requests: dict[str, int]) -> str:
    """A pod's requests, each with its name and unit: `cpu 500m, mem 1Gi, 2 GPU`."""
    parts = [f"cpu {cpu(requests['cpu'])}" if "cpu" in requests else "no cpu request",
             f"mem {mem(requests['memory'])}" if "memory" in requests else "no memory request"]
    g = requests.get(GPU)
    if g:
        parts.append(f"{g} GPU")
    return ", ".join(parts)


def reason_key(reason: str, gpu_first: bool = False) -> str:
    """What a scheduler message says about the nodes, without `0/5 nodes are available:` before it or
    the preemption sentence after it: `2 Insufficient nvidia.com/gpu, 3 Insufficient cpu`."""
    return ", ".join(reason_parts(reason, gpu_first))


def gpu_part(part: str) -> bool:
    """A part of a scheduler message about GPUs: a device-plugin GPU or a DRA claim (`cannot allocate
    all claims`); only a pod that asks for GPUs gets one."""
    return GPU in part or "gpu" in part.lower() or "claims" in part


def reason_parts(reason: str, gpu_first: bool = False) -> list[str]:
    """The parts of `reason_key`, the one to read first leading; with `gpu_first` (a pod that asks for
    GPUs) the parts about GPUs lead: `3 Insufficient cpu` is not what keeps a training pod waiting."""
    key = _NODES_AVAILABLE.sub("", reason, count=1)
    key = key.split(" preemption:", 1)[0].strip()
    # the nodes' reasons are the first sentence; kube-scheduler v1.36's DRA PostFilter put its own
    # before the preemption one ("... selector. still not schedulable, preemption: ..."), v1.37 not
    key = key.split(". ", 1)[0].removesuffix(".")
    if not key:
        return [reason]
    # the parts come sorted as strings (kube-scheduler's order); here what is short leads (capacity is
    # what an operator can act on), most nodes first, so a cut column still shows the point:
    # "5 Insufficient nvidia.com/gpu, 3 Insufficient cpu, 1 Insufficient memory, 9 node(s) didn't ..."
    ranked = []
    for i, part in enumerate(p.strip() for p in key.split(", ")):
        count, _, what = part.partition(" ")
        if not count.isdigit():  # not "N reason" parts: keep the scheduler's order, as one part
            return [key]
        ranked.append((gpu_first and not gpu_part(part), not what.startswith("Insufficient"), -int(count), i, part))
    return [r[-1] for r in sorted(ranked)]


_CUT = re.compile(r", (?:…|\+\d+ more)$")


def reason_point(reason: str) -> str:
    """The least of a reason a table shows whole: its leading part (a GPU part first: only a pod asking
    for GPUs has one) and, when more follow, room for the mark that says so (`, …`). Also of a reason
    already cut to its parts (`2 Insufficient nvidia.com/gpu, +2 more`), as a table cell shows it."""
    if _CUT.search(reason):
        return reason.split(", ", 1)[0][:POINT_MOST] + ", …"
    parts = reason_parts(reason, gpu_first=True)
    return parts[0][:POINT_MOST] + (", …" if len(parts) > 1 else "")


# At most this much of a reason's first part is its point: a message that is one long sentence (a gang's
# "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining") cut names to 13 cells at 160 columns
POINT_MOST = len("2 Insufficient nvidia.com/gpu")


def cut_middle(text: str, width: int) -> str:
    """`text` in `width` cells, its middle replaced by `…`: names differ at their ends
    (`kube-flannel-ds-6bmvt`, `GPU-22c29d76-…`), so both ends stay."""
    if len(text) <= width:  # names and UUIDs: one cell per character
        return text
    if width <= 1:
        return "…"[:width]
    tail = (width - 1) // 2
    head = width - 1 - tail
    return text[:head] + "…" + (text[-tail:] if tail else "")



# A node's reasons in few cells, each still naming its resource (`short of GPU`, not `Insufficient …`)
_SHORT_REASONS = {"node(s) were unschedulable": "cordoned", "node(s) had untolerated taint(s)": "untolerated taint",
                  "node(s) didn't match Pod's node affinity/selector": "affinity/selector",
                  "cannot allocate all claims": "claims don't fit"}
_SHORT_RESOURCES = {GPU: "GPU", "memory": "mem", "ephemeral-storage": "disk"}


def short_reason(reason: str) -> str:
    """One of a node's filter reasons in few cells: `Insufficient nvidia.com/gpu` -> `short of GPU`."""
    if reason.startswith("Insufficient "):
        resource = reason.removeprefix("Insufficient ")
        return "short of " + _SHORT_RESOURCES.get(resource, resource.rsplit("/", 1)[-1])
    return _SHORT_REASONS.get(reason, reason)


def reasons_in(reasons: list[str], width: int | None) -> str:
    """A node's reasons joined, in their short words where the whole ones do not fit in `width`."""
    whole = ", ".join(reasons)
    if width is None or len(whole) <= width:
        return whole
    short = [short_reason(r) for r in reasons]
    lacking = [r.removeprefix("short of ") for r in short if r.startswith("short of ")]
    rest = [r for r in short if not r.startswith("short of ")]
    return ", ".join((["short of " + ", ".join(lacking)] if lacking else []) + rest)  # `short of cpu, mem`


def hanging(lead: str, text: str, width: int | None) -> list[str]:
    """`lead` + `text` wrapped to `width` cells, the lines after the first indented by `len(lead)` (a
    wrapped message stays in its column, not back at column 0; under a small indent when the column
    is too narrow to read). One line without a width."""
    if width is None or len(lead) + len(text) <= width:
        return [lead + text]
    if width - len(lead) < 20:  # the column is too narrow: the message goes under it
        return [lead.rstrip(), *textwrap.wrap(text, max(width, 8), initial_indent="    ", subsequent_indent="    ",
                                              break_on_hyphens=False)]
    return textwrap.wrap(text, width, initial_indent=lead, subsequent_indent=" " * len(lead),
                         break_on_hyphens=False) or [lead]


def wrap_long_lines(markup: str, width: int) -> str:
    """Any other line longer than `width` (a DRA claim line) wrapped under its own indent + 2, as plain
    text: the Static would wrap it to column 0."""
    out = []
    for line in markup.split("\n"):
        plain = Text.from_markup(line).plain
        if len(plain) <= width:
            out.append(line)
            continue
        body = plain.lstrip()
        lead = plain[: len(plain) - len(body)]
        out += [escape(part) for part in textwrap.wrap(body, width, initial_indent=lead,
                                                       subsequent_indent=lead + "  ", break_on_hyphens=False)]
    return "\n".join(out)


def wrap_markup(markup: str, width: int) -> str:
    """`wrap_long_lines` that keeps the styles: a long line is cut between words (a word longer than a
    line is cut in it) and its other lines go under its indent + 2, each still in its own markup."""
    out = []
    for line in markup.split("\n"):
        text = Text.from_markup(line)
        plain = text.plain
        if len(plain) <= width:
            out.append(line)
            continue
        lead = len(plain) - len(plain.lstrip())
        room, start, starts = width, 0, []
        for word in re.finditer(r"\S+", plain):
            while word.end() - start > room:
                cut = word.start() if word.start() > start else start + room
                starts.append(cut)
                start, room = cut, max(1, width - lead - 2)
        for i, piece in enumerate(text.divide(starts)):
            piece.rstrip()
            out.append((" " * (lead + 2) if i else "") + piece.markup)
    return "\n".join(out)
