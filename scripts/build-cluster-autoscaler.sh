#!/usr/bin/env bash
# Builds Cluster Autoscaler 1.36.1 with only its kwok cloud provider (`-tags kwok`) into
# ~/.cache/kubeview/cluster-autoscaler/1.36.1/bin, and reuses it when it is there. The realk8s test
# tests/realk8s/test_cluster_autoscaler_real.py and scripts/record-cluster-autoscaler.py run it.
#
#   scripts/build-cluster-autoscaler.sh                  # build from the cached source when missing
#   scripts/build-cluster-autoscaler.sh --source DIR     # DIR: a kubernetes/autoscaler checkout at
#                                                        # tag cluster-autoscaler-1.36.1 (or its
#                                                        # cluster-autoscaler/ folder); copied into the cache
#   scripts/build-cluster-autoscaler.sh --print-dir      # where the binary is (or would be)
#
# Unlike helm or Kubernetes, CA's source is not served by the Go module proxy: every module path that
# could carry it (k8s.io/autoscaler/cluster-autoscaler, .../v2, github.com/kubernetes/autoscaler/...,
# sigs.k8s.io/cluster-autoscaler where the kwok provider moved after 1.36) answers 403 "not available".
# So the source comes from a checkout of the repository (tag cluster-autoscaler-1.36.1, commit
# 35e8a280425c76a4040f57ae0fa232a952c02024, the last release with cloudprovider/kwok in the tree);
# its Go dependencies come from the proxy. Without a source and without the binary this says so in
# one line and exits 3; the tests that need the binary then skip, and the recorded fixtures
# (tests/fixtures/autoscaling/ca-recorded/) stand for it. Measured on the 2-core VM: cold 8 min 26 s
# (module downloads included), warm 0.01 s.
set -Eeuo pipefail
version="1.36.1"
commit="35e8a280425c76a4040f57ae0fa232a952c02024"
cache="${KUBEVIEW_CA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/cluster-autoscaler}/$version"
out="$cache/bin"
source=""
while [ $# -gt 0 ]; do
    case "$1" in
        --print-dir) echo "$out"; exit 0 ;;
        --source) source="${2:?--source needs a directory}"; shift 2 ;;
        --source=*) source="${1#--source=}"; shift ;;
        -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-cluster-autoscaler: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -x "$out/cluster-autoscaler" ] && [ -z "$source" ]; then
    echo "build-cluster-autoscaler: cached in $out"; exit 0
fi
src="$cache/src/cluster-autoscaler"
if [ -n "$source" ]; then
    [ -d "$source/cluster-autoscaler" ] && source="$source/cluster-autoscaler"
    if ! grep -q "ClusterAutoscalerVersion = \"$version\"" "$source/version/version.go" 2>/dev/null \
        || [ ! -d "$source/cloudprovider/kwok" ]; then
        echo "build-cluster-autoscaler: $source is not cluster-autoscaler $version with cloudprovider/kwok (tag cluster-autoscaler-$version)" >&2
        exit 2
    fi
    rm -rf "$cache/src" && mkdir -p "$cache/src" && cp -r "$source" "$src"
fi
if [ ! -f "$src/go.mod" ]; then
    echo "build-cluster-autoscaler: no binary in $out and no source in $src (the Go module proxy does not serve CA; pass --source with a kubernetes/autoscaler checkout at cluster-autoscaler-$version, commit $commit)" >&2
    exit 3
fi
command -v go >/dev/null 2>&1 || { echo "build-cluster-autoscaler: needs Go (go1.26 or newer on PATH)" >&2; exit 1; }
mkdir -p "$out"
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
    echo "build-cluster-autoscaler: another build holds $cache/.build.lock; waiting for it"
    flock 9
fi
start=$(date +%s)
(
    cd "$src"
    export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
    go build -tags kwok -ldflags "-s -w" -o "$out/cluster-autoscaler.tmp" .
)
mv "$out/cluster-autoscaler.tmp" "$out/cluster-autoscaler"
echo "build-cluster-autoscaler: built $version (kwok provider) in $(( $(date +%s) - start )) s into $out"
