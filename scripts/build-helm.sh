#!/usr/bin/env bash
# Builds the `helm` binary from its Go module (helm.sh/helm/v4, through the Go module proxy) into
# ~/.cache/kubeview/helm/<version>/bin, and reuses it when it is there. The chart tests
# (tests/test_helm_chart.py, tests/realk8s/test_helm_chart.py) run this binary; .ci/run calls this.
#
#   scripts/build-helm.sh               # build when missing
#   scripts/build-helm.sh --print-dir   # where the binary is (or would be)
#
# Nothing is downloaded but Go modules; the binary is never committed. Measured on the 2-core VM
# (shared with other builds): cold 1 min 57 s, warm 0.01 s.
set -Eeuo pipefail
version="v4.3.1"
module="helm.sh/helm/v4"
out="${KUBEVIEW_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/helm}/$version/bin"
case "${1:-}" in
    "") ;;
    --print-dir) echo "$out"; exit 0 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-helm: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
. "$(dirname "$0")/go-module-build.sh"
go_module_build build-helm "$module" "$version" "$out" "-s -w -X $module/internal/version.version=$version" \
    helm=./cmd/helm
