#!/usr/bin/env bash
# Builds Kueue's manager (the `cmd/kueue` main package of the Go module sigs.k8s.io/kueue) into
# ~/.cache/kubeview/kueue/<version>/bin/kueue, and copies the CRDs it runs on beside it (<version>/crds:
# the module's config/components/crd/bases, as `make manifests` generates them). Reuses both when they
# are there. tests/realk8s/kueue.py runs the binary against the real plane
# (tests/realk8s/test_kueue_real.py); .ci/run calls this.
#
#   scripts/build-kueue.sh               # build when missing
#   scripts/build-kueue.sh --print-dir   # where the binary is (or would be); the CRDs are in ../crds
#
# v0.17.0's go.mod asks for go 1.25.0, older than the go1.26 the other builds need, so the local Go is
# used as it is. Nothing is downloaded but Go modules; the binary is never committed. The version is
# stamped as Kueue's Makefile does (pkg/version.GitVersion). Measured on the 2-core VM (load ~1, Go's
# module and build caches holding what the Kubernetes and Karpenter builds left): 4 min 55 s wall
# (4 min 44 s user + 1 min 5 s system CPU, 1.7 GB resident), warm 0.01 s.
set -Eeuo pipefail
. "$(dirname "$0")/go-module-build.sh"
version="v0.17.0"
cache="${KUBEVIEW_KUEUE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/kueue}/$version"
export GO_MODULE_FILES_DIR="$cache/crds"
crds=""
for kind in admissionchecks clusterqueues cohorts localqueues multikueueclusters multikueueconfigs \
        provisioningrequestconfigs resourceflavors topologies workloadpriorityclasses workloads; do
    crds="$crds config/components/crd/bases/kueue.x-k8s.io_$kind.yaml"
done
export GO_MODULE_FILES="$crds"
go_tool build-kueue sigs.k8s.io/kueue "$version" "$cache/bin" \
    "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$version" kueue=./cmd/kueue -- "$@"
