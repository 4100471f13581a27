"""What the pod screen adds from the whole pod (read on demand from the API server, or the embedded
cluster's own copy): the parts `kubectl describe pod` shows that the model does not keep, since it
decodes only what the figures need (#41: a trimmed decode must cost the operator nothing). Pure:
markup lines from the pod's JSON.
"""

from __future__ import annotations

from rich.markup import escape

MAX_LABELS = 20  # a pod with hundreds of labels keeps the screen readable; the rest are counted


def whole_pod_lines(raw: dict) -> list[str]:
    meta, spec, status = raw.get("metadata") or {}, raw.get("spec") or {}, raw.get("status") or {}
    lines: list[str] = []
    facts = [("IP", status.get("podIP")), ("QoS Class", status.get("qosClass")),
             ("Start Time", status.get("startTime")), ("Priority", spec.get("priorityClassName")),
             ("Scheduler", spec.get("schedulerName"))]
    lines += [f"[b]{name}[/b]  {escape(str(value))}" for name, value in facts if value not in (None, "")]
    lines += _mapping("Labels", meta.get("labels") or {})
    lines += _mapping("Node-Selectors", spec.get("nodeSelector") or {})
    tolerations = spec.get("tolerations") or []
    if tolerations:
        lines += ["", "[b]Tolerations[/b]"] + [f"  {escape(_toleration(t))}" for t in tolerations]
    lines += _containers(spec, status)
    return lines


def _mapping(title: str, values: dict) -> list[str]:
    if not values:
        return []
    shown = sorted(values.items())[:MAX_LABELS]
    out = ["", f"[b]{title}[/b]"] + [f"  {escape(str(k))}={escape(str(v))}" for k, v in shown]
    if len(values) > len(shown):
        out.append(f"  [dim]… {len(values) - len(shown)} more[/dim]")
    return out


def _toleration(t: dict) -> str:
    key = t.get("key") or "<all keys>"
    op = t.get("operator") or "Equal"
    text = key if op == "Exists" else f"{key}={t.get('value', '')}"
    if t.get("effect"):
        text += f":{t['effect']}"
    if t.get("tolerationSeconds") is not None:
        text += f" for {t['tolerationSeconds']}s"
    return text


def _containers(spec: dict, status: dict) -> list[str]:
    states = {s.get("name"): s for s in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])}
    out: list[str] = []
    for title, containers in (("Init Containers", spec.get("initContainers") or []),
                              ("Containers", spec.get("containers") or [])):
        if not containers:
            continue
        out += ["", f"[b]{title}[/b]"]
        for c in containers:
            st = states.get(c.get("name")) or {}
            out.append(f"  [b]{escape(c.get('name', '?'))}[/b]  {escape(c.get('image', ''))}")
            state = _state(st.get("state") or {})
            if state:
                ready = "ready" if st.get("ready") else "not ready"
                out.append(f"    {escape(state)}, {ready}, restarts {st.get('restartCount', 0)}")
            ports = ", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in c.get("ports") or [])
            if ports:
                out.append(f"    ports {escape(ports)}")
    return out


def _state(state: dict) -> str:
    if "running" in state:
        return "Running" + (f" since {state['running']['startedAt']}" if (state["running"] or {}).get("startedAt") else "")
    if "waiting" in state:
        w = state["waiting"] or {}
        return "Waiting" + (f" ({w['reason']})" if w.get("reason") else "")
    if "terminated" in state:
        t = state["terminated"] or {}
        return "Terminated" + (f" ({t.get('reason', '')}, exit {t.get('exitCode')})")
    return ""
