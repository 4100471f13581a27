#!/usr/bin/env bash
# Regenerates requirements/*.lock: the exact versions (with hashes) that the suite is run and passes
# with, for the README's Quickstart lines and CI. Run after changing dependencies in pyproject.toml,
# then run the suite in a fresh environment (bash .ci/run) before committing the new lock.
#
#   scripts/lock.sh            # newest versions pyproject allows, for CPython 3.11 on x86_64 Linux
#   scripts/lock.sh --upgrade-package PKG   # passed through to `uv pip compile`
set -euo pipefail
cd "$(dirname "$0")/.."
uv="$(command -v uv || true)"
if [ -z "$uv" ]; then
    tools="${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/uv-venv"
    [ -x "$tools/bin/uv" ] || { python3 -m venv "$tools" && "$tools/bin/pip" install -q uv; }
    uv="$tools/bin/uv"
fi
common=(--python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes --no-header -q)
"$uv" pip compile pyproject.toml "${common[@]}" "$@" -o requirements/run.lock
"$uv" pip compile pyproject.toml --extra test "${common[@]}" "$@" -o requirements/test.lock
echo "lock: requirements/run.lock ($(grep -c '^[a-z]' requirements/run.lock) packages), requirements/test.lock ($(grep -c '^[a-z]' requirements/test.lock))"
