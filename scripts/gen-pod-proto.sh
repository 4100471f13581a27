#!/usr/bin/env bash
# Makes kubeview/cluster/kube/pods.desc: the protobuf descriptors kubeview reads pod list pages with
# (cluster/kube/pod_proto.py), from k8s.io/api's and k8s.io/apimachinery's generated.proto (Go
# modules through the module proxy) compiled by protoc from grpcio-tools (PyPI) in a throwaway venv.
# The file is committed; run this when the Kubernetes version below moves, then run the tests.
#
#   scripts/gen-pod-proto.sh            # write kubeview/cluster/kube/pods.desc
#
# The API of 1.37 (the newest GA; 1.38 adds no field kubeview reads) plus 1.35's PodSpec.workloadRef (field 42, removed in 1.36), so that a 1.35
# server's gang pods read as they do from its JSON.
set -Eeuo pipefail
API=v0.37.2
OLD_API=v0.35.4
GRPCIO_TOOLS=1.85.1
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$repo/kubeview/cluster/kube/pods.desc"
case "${1:-}" in
    "") ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gen-pod-proto: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dir_of() {
    local dir
    dir="$(cd "$work" && go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
    [ -n "$dir" ] || { echo "gen-pod-proto: cannot download $1 (go mod download -json $1 says why)" >&2; exit 1; }
    echo "$dir"
}
api="$(dir_of "k8s.io/api@$API")"
old="$(dir_of "k8s.io/api@$OLD_API")"
machinery="$(dir_of "k8s.io/apimachinery@$API")"
src="$work/src"
mkdir -p "$src/k8s.io/api/core/v1"
for d in api/resource apis/meta/v1 runtime runtime/schema util/intstr; do
    mkdir -p "$src/k8s.io/apimachinery/pkg/$d"
    cp "$machinery/pkg/$d/generated.proto" "$src/k8s.io/apimachinery/pkg/$d/"
done
core="$src/k8s.io/api/core/v1/generated.proto"
sed 's|^\(  optional PodSchedulingGroup schedulingGroup = 43;\)$|\1\n\n  optional WorkloadReference workloadRef = 42;|' \
    "$api/core/v1/generated.proto" > "$core"
grep -q "workloadRef = 42" "$core" || { echo "gen-pod-proto: PodSpec.schedulingGroup not found in $API" >&2; exit 1; }
sed -n '/^message WorkloadReference {/,/^}/p' "$old/core/v1/generated.proto" >> "$core"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "grpcio-tools==$GRPCIO_TOOLS"
(cd "$src" && "$work/venv/bin/python" -m grpc_tools.protoc -I. --include_imports --descriptor_set_out="$out" \
    k8s.io/api/core/v1/generated.proto 2>&1 | grep -v "is unused" || true)
[ -s "$out" ] || { echo "gen-pod-proto: protoc wrote nothing" >&2; exit 1; }
echo "gen-pod-proto: wrote $out ($(wc -c < "$out") bytes) from k8s.io/api@$API"
