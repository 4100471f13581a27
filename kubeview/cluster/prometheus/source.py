"""Utilization from Prometheus (`--prometheus URL`): what is used, next to what the model says is reserved.

Reads node-exporter, cAdvisor and DCGM-exporter series through prometheus-api-client with the
PromQL of `prometheus/queries.yaml` and turns them into `UsageUpdate`s (see `prometheus.results`).
Failure is data, not a crash: an unreachable server, a refused token or a bad query becomes one
sentence in `UsageUpdate.error` and in `status`, and the rest of kubeview keeps working.

Use: `usage = PrometheusUsage.from_args(args)` (None without `--prometheus`), then either call
`usage.poll()` from a worker every few seconds, or run `usage.run(emit, stop)` in a thread.
"""

from __future__ import annotations

import ast
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.util.retry import Retry

from kubeview.cluster.prometheus.queries import (
    QUERY_NAMES,
    QueryConfigError,
    QuerySet,
    check_window,
    load_queries,
)
from kubeview.cluster.prometheus.results import Reading, reading_from_results
from kubeview.model.usage import UsageUpdate

DEFAULT_INTERVAL = 15.0  # seconds between polls: Prometheus's usual scrape interval
_STATUS = re.compile(r"HTTP Status Code (\d+) \((.*)\)$", re.S)


class PrometheusError(Exception):
    """Prometheus cannot be used right now; the message is one sentence a user can act on."""


@dataclass(frozen=True, slots=True)
class PrometheusStatus:
    """The link to Prometheus, for the header (like `ConnectionState` is for the cluster)."""

    state: Literal["connecting", "live", "failed"]
    since: float
    detail: str = ""  # the error sentence when failed; the URL otherwise


class PrometheusUsage:
    """One Prometheus server, queried for a window; thread-safe to `poll()` from one worker."""

    def __init__(self, url: str, *, token: str | None = None, insecure: bool = False, window: str = "5m",
                 queries: QuerySet | None = None, timeout: float = 5.0) -> None:
        if not re.match(r"^https?://[^/\s]+", url or ""):
            raise PrometheusError(f"--prometheus {url!r} must be an http:// or https:// URL.")
        try:
            self.window = check_window(window)
            self.queries = queries or load_queries()
        except QueryConfigError as e:
            raise PrometheusError(str(e)) from None
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else None
        # One quick retry on overload; the library's default (3 with backoff) stalls a dead server 7 s.
        retry = Retry(total=1, backoff_factor=0.2, status_forcelist=(429, 502, 503, 504), raise_on_status=False)
        self._client = PrometheusConnect(url=self.url, headers=headers, disable_ssl=insecure, retry=retry,
                                         timeout=timeout)
        self.timeout = timeout
        self.status = PrometheusStatus("connecting", time.time(), self.url)
        self.last: Reading | None = None

    @classmethod
    def from_args(cls, args: object) -> PrometheusUsage | None:
        """From the CLI's flags; None when `--prometheus` is not given. Raises PrometheusError."""
        url = getattr(args, "prometheus", None)
        if not url:
            return None
        token = None
        token_file = getattr(args, "prometheus_token_file", None)
        if token_file:
            try:
                token = Path(token_file).read_text().strip()
            except OSError as e:
                raise PrometheusError(f"cannot read --prometheus-token-file {token_file}: "
                                      f"{e.strerror or e}.") from None
            if not token:
                raise PrometheusError(f"--prometheus-token-file {token_file} is empty.")
        try:
            queries = load_queries(getattr(args, "prometheus_queries", None))
        except QueryConfigError as e:
            raise PrometheusError(str(e)) from None
        return cls(url, token=token, insecure=bool(getattr(args, "prometheus_insecure", False)),
                   window=getattr(args, "window", None) or "5m", queries=queries)

    # -- one reading ---------------------------------------------------------------------------

    def query(self, name: str) -> list[dict]:
        """Run the named query; raises PrometheusError with one sentence."""
        promql = self.queries.render(name, self.window)
        try:
            return self._client.custom_query(promql)
        except (requests.exceptions.JSONDecodeError, KeyError, TypeError):
            raise PrometheusError(f"{self.url} did not answer like a Prometheus server "
                                  "(no JSON data on /api/v1/query).") from None
        except requests.exceptions.SSLError:
            raise PrometheusError(f"Prometheus at {self.url} failed TLS verification "
                                  "(--prometheus-insecure skips it).") from None
        except requests.exceptions.Timeout:
            raise PrometheusError(f"Prometheus at {self.url} did not answer within {self.timeout:g} s.") from None
        except requests.exceptions.ConnectionError as e:
            why = "connection refused" if "refused" in str(e).lower() else "cannot connect"
            raise PrometheusError(f"Prometheus at {self.url} is unreachable ({why}).") from None
        except requests.exceptions.RequestException as e:
            raise PrometheusError(f"the request to Prometheus at {self.url} failed ({type(e).__name__}).") from None
        except PrometheusApiClientException as e:
            raise PrometheusError(self._http_error(name, str(e))) from None

    def _http_error(self, name: str, text: str) -> str:
        m = _STATUS.match(text)
        code = int(m.group(1)) if m else 0
        detail = ""
        if m:
            body = m.group(2)
            try:
                raw = ast.literal_eval(body)  # the library puts repr(response.content) there
                detail = str(json.loads(raw).get("error", "")).strip()
            except (ValueError, SyntaxError, TypeError, AttributeError):
                detail = ""
        detail = " ".join(detail.split())
        if code in (400, 422):
            return f"Prometheus rejected the {name} query ({detail or f'HTTP {code}'})."
        if code in (401, 403):
            return f"Prometheus at {self.url} refused the credentials (HTTP {code}); check --prometheus-token-file."
        if code == 404:
            return f"{self.url} is not a Prometheus server (HTTP 404 on /api/v1/query)."
        return f"Prometheus at {self.url} answered HTTP {code or '?'} to the {name} query."

    def read(self) -> Reading:
        """Every query once, folded into one full-replace reading. Raises PrometheusError."""
        results = {name: self.query(name) for name in QUERY_NAMES}
        return reading_from_results(results, self.queries, at=time.time(), window=self.window)

    def poll(self) -> UsageUpdate:
        """One reading as a `UsageUpdate`; never raises: a failure is `update.error` (and `status`)."""
        now = time.time()
        try:
            reading = self.read()
        except PrometheusError as e:
            if self.status.state != "failed" or self.status.detail != str(e):
                self.status = PrometheusStatus("failed", now, str(e))
            return UsageUpdate(source="prometheus", at=now, window=self.window, error=str(e))
        if self.status.state != "live":
            self.status = PrometheusStatus("live", now, self.url)
        self.last = reading
        return reading.update

    def run(self, emit: Callable[[UsageUpdate], None], stop: threading.Event,
            interval: float = DEFAULT_INTERVAL, _iterations: int | None = None) -> None:
        """Poll every `interval` seconds until `stop` is set, emitting each update. Blocks."""
        n = 0
        while not stop.is_set():
            emit(self.poll())
            n += 1
            if _iterations is not None and n >= _iterations:
                return
            stop.wait(interval)

    def close(self) -> None:
        self._client.close()


def start_poller(usage: PrometheusUsage, emit: Callable[[UsageUpdate], None],
                 interval: float = DEFAULT_INTERVAL) -> tuple[threading.Thread, threading.Event]:
    """`usage.run` in a daemon thread; set the returned event to stop it."""
    stop = threading.Event()
    thread = threading.Thread(target=usage.run, args=(emit, stop, interval), name="prometheus-poller",
                              daemon=True)
    thread.start()
    return thread, stop
