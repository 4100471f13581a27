"""Finding and loading a kubeconfig the way kubectl does, with one-sentence errors.

Order: `--kubeconfig FILE`, then `$KUBECONFIG` (paths joined with ':' are merged), then
~/.kube/config, then the in-cluster service account. `--context` picks a context (default: the
current one). Every failure becomes a `SourceError` naming the cause and what to do; the
`kubernetes` client's own exceptions never reach the user.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from kubeview.cluster.kube.discovery import (
    IN_CLUSTER_ENV,
    kubeconfig_available,
    kubeconfig_env,
    kubeconfig_paths,
)
from kubeview.cluster.source import SourceError
from renderer import bounded_yaml

__all__ = ["Connection", "connect", "kubeconfig_available", "kubeconfig_paths"]

POOL_SIZE = 16  # five watches, their relists, and actions, without waiting for a connection


@dataclass
class Connection:
    """A configured client and what to call it."""

    api_client: client.ApiClient
    server: str
    context: str  # "" in-cluster
    title: str  # "CONTEXT @ https://server"


def _fix(explicit: bool) -> str:
    """What to do about a bad kubeconfig, naming where it came from: `--kubeconfig`, `$KUBECONFIG`
    or ~/.kube/config."""
    if explicit:
        return "point --kubeconfig at a real one"
    if kubeconfig_env():
        return "fix it, or point $KUBECONFIG at a real one"
    return "fix it, or pass --kubeconfig FILE"


def _read(paths: list[Path], explicit: bool) -> tuple[list[Path], dict]:
    """Existing files and their merged contexts/current-context (first file wins, as kubectl).
    `$KUBECONFIG` naming no file, or only empty ones, is an error as `--kubeconfig` is; a bad
    `--kubeconfig` file is a usage error (exit 2), a bad one found in the environment is not."""
    existing = [p for p in paths if p.exists()]  # /dev/null too: it reads as empty
    if not existing:
        where = ", ".join(str(p) for p in paths)
        if explicit:
            raise SourceError(f"No kubeconfig at {where}: pass an existing file with --kubeconfig or set KUBECONFIG.",
                              usage=True)
        if kubeconfig_env():
            raise SourceError(f"$KUBECONFIG names {where}, and no such file exists; fix or unset KUBECONFIG, "
                              "or pass --kubeconfig FILE.")
        raise SourceError(f"No kubeconfig found ({where}): pass --kubeconfig FILE, set KUBECONFIG, "
                          "or run `kubeview --local`.")
    merged: dict = {"contexts": [], "current-context": None}
    empty = True
    for p in existing:
        data = _load(p, explicit)
        empty = empty and not data
        merged["contexts"].extend(data.get("contexts") or [])
        merged["current-context"] = merged["current-context"] or data.get("current-context")
    if empty:
        where = ", ".join(str(p) for p in existing)
        flag = "--kubeconfig" if explicit else "KUBECONFIG"
        raise SourceError(f"The kubeconfig {where} is empty; point {flag} at a real one.", usage=explicit)
    return existing, merged


def _load(p: Path, explicit: bool) -> dict:
    """One kubeconfig file as a mapping; every way it can be unreadable is one SourceError."""
    fix = _fix(explicit)
    try:
        data = bounded_yaml.safe_load(p.read_text(encoding="utf-8"), loader=yaml.SafeLoader) or {}
    except bounded_yaml.TooDeep as exc:
        raise SourceError(f"The kubeconfig {p} is {exc}; a kubeconfig is a few levels deep, {fix}.",
                          usage=explicit) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise SourceError(f"The kubeconfig {p} is not valid YAML{at}; {fix}.", usage=explicit) from None
    except UnicodeDecodeError as exc:
        raise SourceError(f"The kubeconfig {p} is not UTF-8 text (byte {exc.start}); {fix}.", usage=explicit) from None
    except OSError as exc:
        raise SourceError(f"Cannot read the kubeconfig {p} ({exc.strerror}); check its permissions.",
                          usage=explicit) from None
    if not isinstance(data, dict):
        raise SourceError(f"The kubeconfig {p} is not a kubeconfig (expected a mapping with clusters, "
                          f"users and contexts); {fix}.", usage=explicit)
    return data


def connect(kubeconfig: str | None = None, context: str | None = None) -> Connection:
    """A configured ApiClient for the kubeconfig/context, or in-cluster; raises SourceError."""
    paths = kubeconfig_paths(kubeconfig)
    # in a pod with no kubeconfig (or $KUBECONFIG naming none), the service account, as kubectl
    if not kubeconfig and not any(p.is_file() and p.stat().st_size for p in paths) and os.environ.get(IN_CLUSTER_ENV):
        return _in_cluster()
    existing, merged = _read(paths, explicit=bool(kubeconfig))
    names = [c.get("name") for c in merged["contexts"] if isinstance(c, dict) and c.get("name")]
    where = os.pathsep.join(str(p) for p in existing)
    chosen = context or merged["current-context"]
    if not chosen:
        raise SourceError(f"The kubeconfig {where} has no current context; pass --context NAME "
                          f"(contexts: {', '.join(map(str, names)) or 'none'}).")
    if chosen not in names:
        raise SourceError(f'Context "{chosen}" is not in the kubeconfig {where}; '
                          f"use one of: {', '.join(map(str, names)) or '(no contexts defined)'}.", usage=bool(context))
    cfg = client.Configuration()
    try:
        config.load_kube_config(config_file=where, context=chosen, client_configuration=cfg, persist_config=False)
    except ConfigException as exc:
        raise SourceError(f'Context "{chosen}" in {where} cannot be used ({_short(exc)}); '
                          "check its cluster and user entries.") from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise SourceError(f'Context "{chosen}" in {where} cannot be used ({_short(exc)}); '
                          "check its cluster, user and certificate entries.") from None
    return _finish(cfg, chosen)


def _in_cluster() -> Connection:
    cfg = client.Configuration()
    try:
        config.load_incluster_config(client_configuration=cfg)
    except ConfigException as exc:
        raise SourceError(f"The in-cluster service account cannot be used ({_short(exc)}); "
                          "mount a token or pass --kubeconfig.") from None
    return _finish(cfg, "")


def _finish(cfg: client.Configuration, context: str) -> Connection:
    cfg.connection_pool_maxsize = POOL_SIZE
    cfg.retries = 0  # kubeview backs off itself (kube_watch.WatchSettings)
    api = client.ApiClient(configuration=cfg)
    api.user_agent = "kubeview"
    server = cfg.host
    return Connection(api, server, context, f"{context or 'in-cluster'} @ {server}")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.rstrip(".")
