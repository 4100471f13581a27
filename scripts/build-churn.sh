#!/usr/bin/env bash
# Builds tools/churn (the Go churn `kubeview bench cluster` runs: pod label patches at a target rate,
# k8s.io/client-go through the Go module proxy) into ~/.cache/kubeview/churn/<key>/churn, where <key>
# is a hash of the tool's source files (go.mod, go.sum, *.go), and reuses it when it is there. The
# bench and tests/realk8s/test_churn_real.py look for it there; .ci/run calls this.
#
#   scripts/build-churn.sh               # build when missing
#   scripts/build-churn.sh --print-dir   # where the binary is (or would be)
#
# Nothing is downloaded but Go modules; the binary is never committed. Measured on the 2-core VM
# (shared): see docs/architecture.md "Reading a real API server at scale (#28)".
set -Eeuo pipefail
. "$(dirname "$0")/go-module-build.sh"
repo="$(cd "$(dirname "$0")/.." && pwd)"
src="$repo/tools/churn"
cache="${KUBEVIEW_CHURN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/churn}"
key="$(cd "$src" && cat go.mod go.sum $(ls *.go | LC_ALL=C sort) | sha256sum | cut -c1-16)"
out="$cache/$key"
case "${1:-}" in
    "") ;;
    --print-dir) echo "$out"; exit 0 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-churn: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
if [ -x "$out/churn" ]; then echo "build-churn: cached in $out"; exit 0; fi
command -v go >/dev/null 2>&1 || { echo "build-churn: needs Go (go1.26 or newer on PATH)" >&2; exit 1; }
mkdir -p "$out"
build_lock build-churn "$cache"
if [ -x "$out/churn" ]; then echo "build-churn: cached in $out"; exit 0; fi
start=$(date +%s)
if ! (cd "$src" && GOFLAGS="-buildvcs=false -mod=readonly" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
        -o "$out/churn.tmp" .); then
    echo "build-churn: go build of tools/churn failed (above; GOPROXY=$(go env GOPROXY))" >&2
    exit 1
fi
mv "$out/churn.tmp" "$out/churn"
echo "build-churn: built tools/churn in $(( $(date +%s) - start )) s into $out"
