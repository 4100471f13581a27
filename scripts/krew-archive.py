"""Writes the krew plugin archive (the launcher plugins/kubectl-kubeview and LICENSE) and prints its
sha256, the value plugins/kubeview.yaml must carry. The archive is byte-for-byte reproducible (fixed
order, times, owners, modes; gzip without a name or time), so the manifest's sha256 can be checked
against the tree (tests/plugins/test_krew_manifest.py).

    python scripts/krew-archive.py [OUT]     # default: dist/kubectl-kubeview.tar.gz
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMBERS = (("kubectl-kubeview", ROOT / "plugins" / "kubectl-kubeview", 0o755), ("LICENSE", ROOT / "LICENSE", 0o644))


def archive_bytes() -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, path, mode in MEMBERS:
            data = path.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "dist" / "kubectl-kubeview.tar.gz"
    data = archive_bytes()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    print(f"{hashlib.sha256(data).hexdigest()}  {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
