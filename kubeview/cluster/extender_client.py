"""Read and change the packing config of a running kubeview extender (`GET`/`PUT /config`).

On a real cluster the scheduler extender decides packing, so the TUI's Packing screen applies a
policy by sending it there (`--extender URL`, `--extender-token-file FILE`). Blocking HTTP: callers
run it in a worker thread. Every failure is an `ActionError` with one sentence a user can act on.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from kubeview.cluster.source import ActionError
from kubeview.scheduling.config import PackingConfig

TIMEOUT = 5.0


class ExtenderClient:
    """The `/config` endpoint of one extender."""

    def __init__(self, url: str, token: str | None = None, timeout: float = TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    @classmethod
    def from_options(cls, url: str, token_file: str | None = None) -> ExtenderClient:
        """Build from the CLI options; an unreadable token file is an ActionError."""
        token = None
        if token_file:
            try:
                token = Path(token_file).read_text().strip() or None
            except OSError as exc:
                raise ActionError(f"cannot read the extender token file {token_file}: {exc.strerror}.") from exc
        return cls(url, token)

    def get_config(self) -> PackingConfig:
        """The extender's live config."""
        return self._config(self._request("GET", None))

    def put_config(self, config: PackingConfig) -> PackingConfig:
        """Replace the live config; returns what the extender now runs."""
        return self._config(self._request("PUT", json.dumps(config.to_dict()).encode()))

    def _config(self, doc: object) -> PackingConfig:
        try:
            return PackingConfig.from_dict(doc)
        except ValueError as exc:
            raise ActionError(f"the extender at {self.url} sent a config kubeview cannot read: {exc}.") from exc

    def _request(self, method: str, body: bytes | None) -> object:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(f"{self.url}/config", data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            reason = _error_text(exc.read()) or exc.reason
            if exc.code == 401:
                raise ActionError(f"the extender refused the change (401): {reason}; "
                                  "pass --extender-token-file.") from exc
            raise ActionError(f"the extender refused the change ({exc.code}): {reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            raise ActionError(f"cannot reach the extender at {self.url}: {why}.") from exc
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ActionError(f"the extender at {self.url} did not answer JSON.") from exc


def _error_text(raw: bytes) -> str:
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return raw.decode("utf-8", "replace").strip()[:200]
    return str(doc.get("Error") or "") if isinstance(doc, dict) else ""
