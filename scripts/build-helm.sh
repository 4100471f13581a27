#!/usr/bin/env bash
# Builds the `helm` binary from its Go module (helm.sh/helm/v4, through the Go module proxy) into
# ~/.cache/kubeview/helm/<version>/bin, and reuses it when it is there. The chart tests
# (tests/helm/test_chart.py, tests/realk8s/test_helm_chart.py) run this binary; .ci/run calls this.
#
#   scripts/build-helm.sh               # build when missing
#   scripts/build-helm.sh --print-dir   # where the binary is (or would be)
#
# Nothing is downloaded but Go modules; the binary is never committed. Measured on the 2-core VM
# (shared with other builds): cold 1 min 57 s, warm 0.01 s.
set -Eeuo pipefail
. "$(dirname "$0")/go-module-build.sh"
go_tool build-helm helm.sh/helm/v4 v4.3.1 "${KUBEVIEW_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/helm}/v4.3.1/bin" \
    "-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.1" helm=./cmd/helm -- "$@"
