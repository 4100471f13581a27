"""kubeview's PromQL and label names, loaded from `prometheus/queries.yaml` and `--prometheus-queries`.

Clusters relabel: dcgm-exporter's pod labels, node-exporter's node label and cAdvisor's filters all
differ between setups, so none of them is written in code. The bundled YAML holds the defaults; a
user's file overrides any subset of them. Every problem is one `QueryConfigError` sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

import yaml

DEFAULT_FILE = Path(__file__).with_name("queries.yaml")
QUERY_NAMES = ("node_cpu", "node_memory", "gpu_util", "gpu_memory_used", "gpu_memory_free",
               "pod_cpu", "pod_memory")
LABEL_NAMES = ("node", "gpu_node", "gpu_index", "gpu_uuid", "gpu_namespace", "gpu_pod", "gpu_container",
               "namespace", "pod", "container")
DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")  # Prometheus' duration grammar
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class QueryConfigError(Exception):
    """The queries file or the window is unusable; the message is one sentence naming what."""


@dataclass(frozen=True, slots=True)
class QuerySet:
    """PromQL templates by name and the label names results are read with."""

    queries: dict[str, str]
    labels: dict[str, str]  # every LABEL_NAMES key except "node"
    node_labels: tuple[str, ...]  # tried in order on node-exporter results

    def render(self, name: str, window: str) -> str:
        """The query `name` with `$window` and `$LABEL` filled in."""
        check_window(window)
        values = dict(self.labels, node=", ".join(self.node_labels), window=window)
        try:
            return Template(self.queries[name]).substitute(values)
        except (KeyError, ValueError) as e:
            raise QueryConfigError(f"query {name} has an unknown or malformed placeholder ({e}).") from None


def check_window(window: str) -> str:
    if not DURATION.match(window or ""):
        raise QueryConfigError(f"--window {window!r} is not a Prometheus duration such as 30s, 5m or 1h.")
    return window


def _merge(base: dict, override: object, where: str) -> QuerySet:
    if override is None:
        override = {}
    if not isinstance(override, dict):
        raise QueryConfigError(f"{where} must be a mapping with `queries:` and/or `labels:`.")
    unknown = set(override) - {"queries", "labels"}
    if unknown:
        raise QueryConfigError(f"{where} has unknown key {sorted(unknown)[0]!r} (expected queries, labels).")
    queries = dict(base.get("queries") or {})
    labels = dict(base.get("labels") or {})
    for section, known, target in (("queries", QUERY_NAMES, queries), ("labels", LABEL_NAMES, labels)):
        given = override.get(section) or {}
        if not isinstance(given, dict):
            raise QueryConfigError(f"{where}: `{section}` must be a mapping.")
        for key, value in given.items():
            if key not in known:
                what = "query" if section == "queries" else "label"
                raise QueryConfigError(f"{where}: unknown {what} {key!r} (known: {', '.join(known)}).")
            target[key] = value
    for name in QUERY_NAMES:
        if not isinstance(queries.get(name), str) or not queries[name].strip():
            raise QueryConfigError(f"{where}: query {name} must be a non-empty string.")
    node = labels.pop("node", None)
    node_labels = tuple(node) if isinstance(node, list) else (node,)
    for key, value in [*labels.items(), *(("node", n) for n in node_labels)]:
        if not isinstance(value, str) or not _LABEL.match(value):
            raise QueryConfigError(f"{where}: label {key} must be a Prometheus label name, not {value!r}.")
    missing = [k for k in LABEL_NAMES if k != "node" and k not in labels]
    if missing:
        raise QueryConfigError(f"{where}: label {missing[0]} is missing.")
    return QuerySet(queries={k: queries[k].strip() for k in QUERY_NAMES}, labels=labels, node_labels=node_labels)


def _read_yaml(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text())
    except OSError as e:
        raise QueryConfigError(f"cannot read --prometheus-queries {path}: {e.strerror or e}.") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise QueryConfigError(f"--prometheus-queries {path} is not valid YAML{at}.") from None


def load_queries(path: str | Path | None = None) -> QuerySet:
    """The bundled queries, overridden by the YAML at `path` when given."""
    base = yaml.safe_load(DEFAULT_FILE.read_text())
    if path is None:
        return _merge(base, {}, str(DEFAULT_FILE))
    return _merge(base, _read_yaml(Path(path)), f"--prometheus-queries {path}")


def merge_queries(override: dict) -> QuerySet:
    """The bundled queries with `override` (the YAML file's content, as a dict) applied."""
    return _merge(yaml.safe_load(DEFAULT_FILE.read_text()), override, "queries override")
