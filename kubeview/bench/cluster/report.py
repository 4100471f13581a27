"""The figures of `bench cluster` beside each other: every peer's figure as a ratio to kubeview's,
judged against issue #28's targets where one applies. Pure: the result document in, lines out."""

from __future__ import annotations

GIB = 1024.0  # MiB


def _get(doc: dict, path: str) -> float | None:
    node: object = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node or node.get("rc"):  # a failed run has no figure
            return None
        node = node[part]
    return node if isinstance(node, (int, float)) and not isinstance(node, bool) else None


def targets(doc: dict) -> list[dict]:
    """[{what, kubeview, other, ratio, target, met}]: met is None when a side was not measured."""
    pods = int(doc.get("cluster", {}).get("pods", 0))
    rows = []

    def ratio(what: str, ours: str, theirs: str | None, limit: float | None, note: str = "") -> None:
        a = _get(doc, ours)
        b = _get(doc, theirs) if theirs else 1.0
        r = a / b if a is not None and b else None
        rows.append({"what": what, "kubeview": a, "other": _get(doc, theirs) if theirs else None,
                     "ratio": None if r is None else round(r, 3), "target": limit, "note": note,
                     "met": None if r is None or limit is None else r <= limit})

    ratio("snapshot --json wall / raw transfer of the pods (kubectl get --raw /api/v1/pods)",
          "kubeview.snapshot_json.wall_s", "floor.raw_pods.wall_s", 1.5, "#41 item 2")
    ratio("snapshot --json wall / raw transfer (kubectl get --raw nodes+pods)", "kubeview.snapshot_json.wall_s",
          "floor.raw.wall_s", 2.0, "#28")
    ratio("snapshot --json wall / kubectl-view-allocations -g node", "kubeview.snapshot_json.wall_s",
          "peers.kubectl-view-allocations.wall_s", 0.5)
    ratio("snapshot --json wall / kube-capacity", "kubeview.snapshot_json.wall_s", "peers.kube-capacity.wall_s", 0.5)
    ratio("snapshot --json wall / kubectl get pods -A -o json", "kubeview.snapshot_json.wall_s",
          "floor.kubectl_json.wall_s", None, "the floor of reading everything; no target")
    ratio("snapshot (tables) wall / snapshot --json wall", "kubeview.snapshot_tables.wall_s",
          "kubeview.snapshot_json.wall_s", 1.0)
    first_limit = 3.0 if pods <= 50_000 else 5.0 if pods <= 150_000 else None  # #28; #41 item 2 at 150,000
    ratio(f"TUI first complete Nodes screen, s (target <= {first_limit} s at {pods:,} pods)",
          "kubeview.tui.first_screen_s", None, first_limit)
    ratio("TUI first complete screen / k9s's Nodes view (no allocation)", "kubeview.tui.first_screen_s",
          "peers.k9s.first_screen_s", 1.0)
    ratio("TUI first complete screen / k9s's Pods view, all namespaces", "kubeview.tui.first_screen_s",
          "peers.k9s_pods.first_screen_s", 1.0, "the same work: every pod listed")
    ratio("TUI peak RSS, MiB (target <= 1 GiB at 150,000 pods: #41 item 3)", "kubeview.tui.peak_rss_mib", None,
          1.0 * GIB if pods <= 150_000 else None)
    ratio("TUI peak RSS / k9s's (Nodes view)", "kubeview.tui.peak_rss_mib", "peers.k9s.peak_rss_mib", 2.0)
    ratio("TUI peak RSS / k9s's Pods view's", "kubeview.tui.peak_rss_mib", "peers.k9s_pods.peak_rss_mib", 2.0)
    ratio("TUI key-to-screen p95 under churn, ms", "kubeview.tui.key_p95_ms", None, 100.0)
    ratio("TUI CPU share under churn / k9s's", "kubeview.tui.cpu_share", "peers.k9s.cpu_share", None)
    ratio("snapshot --json peak RSS / kubectl-view-allocations's", "kubeview.snapshot_json.peak_rss_mib",
          "peers.kubectl-view-allocations.peak_rss_mib", None)
    return rows


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:,.3f}" if v < 10 else f"{v:,.1f}"


def _errors(fig: dict) -> str:
    return f", {fig['churn_errors']:,} failed" if fig.get("churn_errors") else ""


def lines(doc: dict) -> list[str]:
    c, m = doc["cluster"], doc["machine"]
    out = [f"kubeview bench cluster on {c['title']}: {c['nodes']:,} nodes ({c['gpu_nodes']} GPU, {c['dra_nodes']} "
           f"of them DRA with ResourceSlices), {c['pods']:,} pods ({c['bound']:,} bound by nodeName), "
           + (f"created in {c['fill_s']:.0f} s" if c.get("fill_s") is not None else f"kept from run {c['run']}"),
           f"machine: {m['cores']} cores, load {m['load_start']} at start, {m['load_end']} at end; "
           f"churn {doc['churn']['target']:,.0f} label patches/s offered by the {doc['churn'].get('by', 'python')} churn"]
    out.append(f"  {'what':<44} {'wall s':>8} {'peak MiB':>9}  version")
    for section in ("floor", "kubeview", "peers"):
        for name, fig in doc.get(section, {}).items():
            if not isinstance(fig, dict):
                continue
            if "wall_s" in fig:
                tail = "" if not fig.get("rc") else f"  FAILED (exit {fig['rc']}: {fig.get('err', '')})"
                out.append(f"  {section + ' ' + name:<44} {_num(fig['wall_s']):>8} {_num(fig['peak_rss_mib']):>9}  "
                           f"{fig.get('version', '')}{tail}")
            elif "first_screen_s" in fig:
                key = f", key p95 {fig['key_p95_ms']} ms over {fig['keys']} keys" if "key_p95_ms" in fig else ""
                out.append(f"  {section + ' ' + name + ' (TUI)':<44} first complete screen {fig['first_screen_s']} s, "
                           f"peak {fig['peak_rss_mib']} MiB at {doc['duration_s']:.0f} s, CPU {fig['cpu_share']:.2f} "
                           f"core under churn ({fig.get('churn_rate', 0):,.0f}/s achieved of {doc['churn']['target']:,.0f}/s"
                           f"{_errors(fig)}){key}  {fig.get('version', '')}")
            elif "error" in fig:
                out.append(f"  {section + ' ' + name:<44} FAILED: {fig['error']}")
    for name, how in doc.get("missing", {}).items():
        out.append(f"  peer {name}: not installed; build it with {how}")
    for name in doc.get("skipped", ()):
        out.append(f"  peer {name}: skipped (--skip)")
    out.append("  targets (ratio = kubeview / other; one run):")
    for t in doc["targets"]:
        verdict = {True: "met", False: "MISSED", None: "not measured" if t["target"] is not None else ""}[t["met"]]
        limit = f"<= {t['target']:g}" if t["target"] is not None else ""
        out.append(f"    {t['what']:<72} {_num(t['ratio']):>9} {limit:>9}  {verdict or t['note']}")
    return out
