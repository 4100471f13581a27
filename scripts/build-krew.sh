#!/usr/bin/env bash
# Builds krew (as kubectl-krew) and its manifest validator (validate-krew-manifest) from the Go module
# sigs.k8s.io/krew into ~/.cache/kubeview/krew/<version>/bin, and reuses them when they are there.
# tests/test_krew_manifest.py validates plugins/kubeview.yaml with them and installs the plugin with
# `kubectl krew install --manifest --archive`; .ci/run calls this.
#
#   scripts/build-krew.sh               # build when missing
#   scripts/build-krew.sh --print-dir   # where the binaries are (or would be)
set -Eeuo pipefail
version="v0.4.3"
module="sigs.k8s.io/krew"
out="${KUBEVIEW_KREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/krew}/$version/bin"
case "${1:-}" in
    "") ;;
    --print-dir) echo "$out"; exit 0 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-krew: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
. "$(dirname "$0")/go-module-build.sh"
go_module_build build-krew "$module" "$version" "$out" "-s -w -X $module/internal/version.gitTag=$version" \
    kubectl-krew=./cmd/krew validate-krew-manifest=./cmd/validate-krew-manifest
