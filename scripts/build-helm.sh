#!/usr/bin/env bash
# Builds the `helm` binary from its Go module (helm.sh/helm/v4, through the Go module proxy) into a
# cache outside the repository keyed by version, and reuses it when it is already there. The chart
# tests (tests/test_helm_chart.py, tests/realk8s/test_helm_chart.py) run this binary.
#
#   scripts/build-helm.sh               # build when missing, print where it is
#   scripts/build-helm.sh --print-dir   # where the binary is (or would be)
#
# Nothing is downloaded but Go modules; the binary is never committed. Measured on the 2-core VM:
# see the comment at the bottom (cold and warm).
set -Eeuo pipefail
trap 'echo "build-helm: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

version="v4.3.1"
module="helm.sh/helm/v4"
print_dir=0
while [ $# -gt 0 ]; do
    case "$1" in
        --print-dir) print_dir=1; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-helm: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

cache="${KUBEVIEW_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/helm}"
out="$cache/$version"
if [ "$print_dir" = 1 ]; then echo "$out/bin"; exit 0; fi
if [ -x "$out/bin/helm" ]; then echo "build-helm: cached in $out/bin"; exit 0; fi
command -v go >/dev/null 2>&1 || { echo "build-helm: needs Go (go1.26 or newer on PATH)" >&2; exit 1; }
mkdir -p "$out/bin" "$cache/src"
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
    echo "build-helm: another build holds $cache/.build.lock; waiting for it"
    flock 9
    if [ -x "$out/bin/helm" ]; then echo "build-helm: the other build finished: $out/bin"; exit 0; fi
fi
work="$(mktemp -d "$cache/src/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
cd "$work"
if ! go mod download -json "$module@$version" > mod.json; then
    echo "build-helm: cannot download $module@$version (GOPROXY=$(go env GOPROXY))" >&2
    exit 1
fi
dir="$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' mod.json)"
# Build inside a writable copy of the module so its own go.mod (and any replace directive) applies.
cp -r "$dir" src && chmod -R u+w src && cd src
go build -ldflags "-s -w -X $module/internal/version.version=$version" -o "$out/bin/helm.tmp" ./cmd/helm
mv "$out/bin/helm.tmp" "$out/bin/helm"
echo "build-helm: built in $(( $(date +%s) - start )) s into $out/bin"
"$out/bin/helm" version --short
