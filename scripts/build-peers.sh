#!/usr/bin/env bash
# Builds the tools `kubeview bench cluster` runs beside kubeview, from their published source only
# (Go modules through the Go module proxy, the crate through crates.io; never a prebuilt binary),
# into ~/.cache/kubeview/peers/<name>-<version>/bin, where the bench looks for them.
#
#   scripts/build-peers.sh              # build what is missing (k9s, kube-capacity, kubectl-view-allocations)
#   scripts/build-peers.sh k9s          # one of them
#   scripts/build-peers.sh --print-dir  # the peers cache
#
#   KUBE_CAPACITY_REPO=/work/.mirror/robscott+kube-capacity/repo scripts/build-peers.sh kube-capacity
#
# Versions are pinned here. kube-capacity (github.com/robscott/kube-capacity) is not served by the
# Go module proxy this machine reaches (403 "not available" for every version): without
# KUBE_CAPACITY_REPO (a git directory of its repository, holding the pinned tag) its build fails
# with one line and the others still build. Measured on the 2-core VM (shared): see
# docs/architecture.md "bench cluster".
set -Euo pipefail
. "$(dirname "$0")/go-module-build.sh"
PEERS="${KUBEVIEW_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/peers}"
K9S=v0.50.16
KUBE_CAPACITY=v0.8.0
VIEW_ALLOCATIONS=3.1.0

build_k9s() {
    go_module_build k9s github.com/derailed/k9s "$K9S" "$PEERS/k9s-$K9S/bin" \
        "-s -w -X github.com/derailed/k9s/cmd.version=$K9S" k9s=.
}
build_kube_capacity() {
    # Its repository at the pinned tag when KUBE_CAPACITY_REPO names one (go-module-build.sh GO_MODULE_REPO)
    GO_MODULE_REPO="${KUBE_CAPACITY_REPO:-}" go_module_build kube-capacity github.com/robscott/kube-capacity \
        "$KUBE_CAPACITY" "$PEERS/kube-capacity-$KUBE_CAPACITY/bin" \
        "-s -w -X github.com/robscott/kube-capacity/pkg/cmd.version=$KUBE_CAPACITY" kube-capacity=. && return 0
    [ -n "${KUBE_CAPACITY_REPO:-}" ] || echo "kube-capacity: the module proxy refuses it; bring its repository" \
        "and name its git directory in KUBE_CAPACITY_REPO (its dependencies still come from the proxy)" >&2
    return 1
}
build_view_allocations() {
    local root="$PEERS/kubectl-view-allocations-$VIEW_ALLOCATIONS"
    if [ -x "$root/bin/kubectl-view-allocations" ]; then echo "kubectl-view-allocations: cached in $root/bin"; return 0; fi
    command -v cargo >/dev/null 2>&1 || { echo "kubectl-view-allocations: needs cargo on PATH" >&2; return 1; }
    local start; start=$(date +%s)
    cargo install --locked --quiet kubectl-view-allocations --version "$VIEW_ALLOCATIONS" --root "$root" \
        || { echo "kubectl-view-allocations: cargo install failed (above)" >&2; return 1; }
    echo "kubectl-view-allocations: built $VIEW_ALLOCATIONS in $(( $(date +%s) - start )) s into $root/bin"
}

case "${1:-}" in
    --print-dir) echo "$PEERS"; exit 0 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
mkdir -p "$PEERS"
status=0
for name in "${@:-k9s kube-capacity kubectl-view-allocations}"; do
    for one in $name; do
        case "$one" in
            k9s) build_k9s || status=1 ;;
            kube-capacity) build_kube_capacity || status=1 ;;
            kubectl-view-allocations) build_view_allocations || status=1 ;;
            *) echo "build-peers: unknown peer $one (k9s, kube-capacity, kubectl-view-allocations)" >&2; exit 2 ;;
        esac
    done
done
exit "$status"
