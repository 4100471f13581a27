#!/usr/bin/env bash
# Builds Karpenter with its kwok cloud provider (the `kwok/` main package of the Go module
# sigs.k8s.io/karpenter) into ~/.cache/kubeview/karpenter/<version>/bin/karpenter-kwok, and copies the
# CRDs it runs on beside it (<version>/crds: NodePool and NodeClaim as the kwok chart ships them, the
# kwok provider's KWOKNodeClass). Reuses both when they are there. tests/realk8s/karpenter.py runs the
# binary against the real plane (tests/realk8s/test_karpenter_real.py); .ci/run calls this.
#
#   scripts/build-karpenter.sh               # build when missing
#   scripts/build-karpenter.sh --print-dir   # where the binary is (or would be); the CRDs are in ../crds
#
# v1.15.0's go.mod asks for go1.26.9: an older local Go fetches that toolchain, which the Go module
# proxy serves as the module golang.org/toolchain (GOTOOLCHAIN=go1.26.9+auto); a newer one is used
# as it is. Nothing is downloaded but Go modules; the binary is never committed. Measured on the 2-core
# VM with empty module, build and tool caches (the toolchain's download included): 9 min 17 s wall
# while other builds held the machine (load average ~10; 4 min 42 s of CPU), warm 0.01 s.
set -Eeuo pipefail
. "$(dirname "$0")/go-module-build.sh"
version="v1.15.0"
needs_go="1.26.9"
cache="${KUBEVIEW_KARPENTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/karpenter}/$version"
if command -v go >/dev/null 2>&1; then
    have_go="$(go env GOVERSION 2>/dev/null || true)"; have_go="${have_go#go}"
    if [ "$(printf '%s\n%s\n' "$needs_go" "${have_go:-0}" | sort -V | head -1)" != "$needs_go" ]; then
        export GOTOOLCHAIN="go$needs_go+auto"
    fi
fi
export GO_MODULE_FILES_DIR="$cache/crds"
export GO_MODULE_FILES="kwok/charts/crds/karpenter.sh_nodepools.yaml kwok/charts/crds/karpenter.sh_nodeclaims.yaml
    kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml"
go_tool build-karpenter sigs.k8s.io/karpenter "$version" "$cache/bin" \
    "-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$version" karpenter-kwok=./kwok -- "$@"
