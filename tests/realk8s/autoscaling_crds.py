"""Karpenter's NodePool and NodeClaim CRDs, as sigs.k8s.io/karpenter v1.15.0 ships them
(pkg/apis/crds), read from the Go module the proxy serves: `go mod download` into the test cache
(KUBEVIEW_TEST_CACHE/gomod: once per machine), then the files out of the module's zip (the module asks
for a newer Go than a local toolchain may be, which stops `go mod download` from unpacking it, not
from fetching it). None when Go or the proxy is not there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import yaml
from hermetic import cache

MODULE = "sigs.k8s.io/karpenter@v1.15.0"
CRDS = ("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")


def karpenter_crds() -> list[dict] | str:
    """The two CRDs, or why they cannot be had (one line)."""
    go = shutil.which("go")
    if go is None:
        return "no go on PATH to fetch sigs.k8s.io/karpenter's CRDs"
    modcache = cache("KUBEVIEW_TEST_CACHE") / "gomod"
    env = {**os.environ, "GOMODCACHE": str(modcache), "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    out = subprocess.run([go, "mod", "download", "-json", MODULE], capture_output=True, text=True, env=env,
                         cwd=modcache.parent if modcache.parent.is_dir() else None, timeout=600)
    try:
        info = json.loads(out.stdout)
    except ValueError:
        return f"go mod download {MODULE} failed: {(out.stderr or out.stdout).strip()[:200]}"
    prefix = f"{MODULE}/pkg/apis/crds/"
    if info.get("Dir") and Path(info["Dir"], "pkg/apis/crds", CRDS[0]).is_file():
        return [yaml.safe_load(Path(info["Dir"], "pkg/apis/crds", name).read_text()) for name in CRDS]
    if not info.get("Zip") or not Path(info["Zip"]).is_file():
        return f"go mod download {MODULE}: {info.get('Error') or 'no zip'}"
    with zipfile.ZipFile(info["Zip"]) as z:
        return [yaml.safe_load(z.read(prefix + name)) for name in CRDS]
