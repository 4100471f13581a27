#!/usr/bin/env bash
# Builds the real Kubernetes control plane and its test companions from the Go module proxy into a
# cache outside the repository, keyed by version, and reuses what is already there.
#
#   scripts/build-kubernetes.sh                 # the default plane (.ci/kubernetes-versions)
#   scripts/build-kubernetes.sh --version v1.36.3
#   scripts/build-kubernetes.sh --print-dir     # where the binaries are (or would be)
#   scripts/build-kubernetes.sh --skew --version v1.35.4   # a version-skew plane: kube-apiserver
#                                               # and kube-controller-manager only (etcd: the default's)
#
# Builds: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (from k8s.io/kubernetes),
# etcd (go.etcd.io/etcd/server/v3's etcdmain, the version k8s.io/kubernetes pins), kwok
# (sigs.k8s.io/kwok) and kube-state-metrics (k8s.io/kube-state-metrics/v2).
#
# Why a scratch module: k8s.io/kubernetes' go.mod replaces its ~30 staging modules (k8s.io/api,
# k8s.io/client-go, ...) with ./staging paths that exist only inside its own repository. A module that
# requires k8s.io/kubernetes vX.Y.Z and replaces each k8s.io/<staging> with v0.Y.Z of the published
# module builds the same commands. The binaries are never committed.
#
# kube-state-metrics is an oracle for one group of tests only: if the module proxy does not serve it,
# the script says so in one line and still exits 0 with the plane built (those tests skip). Any other
# failure names the step and exits non-zero; a module the proxy refuses (a pre-release's new staging
# module) exits 3 with one line, also kept in <dir>/refused.txt for the tests to say. Two runs at
# once (CI and a developer) take turns on a lock in the cache instead of writing the same files. Measured on the 2-core VM: cold 9 min 5 s, warm 0.3 s.
set -Eeuo pipefail
trap 'echo "build-kubernetes: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

# the default version: .ci/kubernetes-versions, the one place versions are pinned
version=$(awk '$1=="default"{print $2}' "$(dirname "$0")/../.ci/kubernetes-versions")
kwok_version="v0.8.0"
ksm_version="v2.18.0"  # v2.16.0, v2.17.x: not served by the module proxy
print_dir=0
skew=0
while [ $# -gt 0 ]; do
    case "$1" in
        --version) version="${2:?--version needs a value such as v1.37.2}"; shift 2 ;;
        --version=*) version="${1#--version=}"; shift ;;
        --print-dir) print_dir=1; shift ;;
        --skew) skew=1; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-kubernetes: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$version" in
    v1.[0-9]*.[0-9]*|v1.[0-9]*.[0-9]*-[a-z]*.[0-9]*) ;;
    *) echo "build-kubernetes: --version must look like v1.37.2, not $version" >&2; exit 2 ;;
esac

cache="${KUBEVIEW_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeview/kubernetes}"
out="$cache/$version-kwok$kwok_version-ksm$ksm_version"
want=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok kube-state-metrics)
k8s_commands=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
k8s_outputs=("${k8s_commands[@]}" etcd)  # what the scratch module below builds
if [ "$skew" = 1 ]; then  # kubeview's start on an older (or newer) API server: no scheduler, kwok or KSM;
    # etcd is the default build's (the v3 API every version speaks): two binaries, ~4 min of a cold build each
    out="$cache/$version-skew"
    want=(kube-apiserver kube-controller-manager)
    k8s_commands=("${want[@]}")
    k8s_outputs=("${want[@]}")
fi
if [ "$print_dir" = 1 ]; then echo "$out/bin"; exit 0; fi
all_cached() {
    local b
    for b in "${want[@]}"; do [ -x "$out/bin/$b" ] || return 1; done
}
if all_cached; then
    echo "build-kubernetes: cached in $out/bin (${want[*]})"
    exit 0
fi
command -v go >/dev/null 2>&1 || { echo "build-kubernetes: needs Go (go1.26 or newer on PATH)" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
    echo "build-kubernetes: another build holds $cache/.build.lock; waiting for it"
    flock 9
    if all_cached; then echo "build-kubernetes: the other build finished: $out/bin"; exit 0; fi
fi

# go mod download -json reports a failure inside its JSON on stdout: say it instead of exiting silently.
download() {  # module@version json-file
    if ! go mod download -json "$1" > "$2"; then
        local err; err="$(sed -n 's/.*"Error": "\(.*\)".*/\1/p' "$2" | head -1)"
        echo "build-kubernetes: cannot download $1 (GOPROXY=$(go env GOPROXY)): ${err:-see above}" >&2
        return 1
    fi
}

said() {  # a go command's log: one line where the module proxy refused a module, else the whole log
    local refused
    refused=$(grep -oE '[a-z0-9.-]+\.[a-z]+/[A-Za-z0-9._/-]+@[^:]+: reading [^ ]+: 40[34] [A-Za-z]+' "$1" | head -1)
    if [ -n "$refused" ]; then  # 1.38.0-beta.0: k8s.io/apiextensions-api, which the proxy does not serve
        echo "the module proxy does not serve a module $version needs: $refused" > "$out/refused.txt"
        echo "build-kubernetes: $(cat "$out/refused.txt")" >&2
        exit 3  # not a failure of this script or of the machine: .ci/run goes on without this version
    fi
    cat "$1" >&2
}

minor="${version#v1.}"; minor="${minor%%.*}"
staging_version="v0.$minor.${version#v1."$minor".}"  # v1.38.0-beta.0 -> v0.38.0-beta.0
mkdir -p "$out/bin" "$cache/src"
rm -f "$out/refused.txt"
work="$(mktemp -d "$cache/src/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
# A newer Kubernetes may need a newer Go than this machine's (1.38: go 1.27.0): `local+auto` fetches that
# toolchain from the module proxy (golang.org/toolchain) only when a go.mod asks for it; 1.37 builds as before.
export GOTOOLCHAIN=local+auto

# --- the control plane, kubectl and etcd: one scratch module --------------------------------
need_k8s=0
for b in "${k8s_outputs[@]}"; do
    [ -x "$out/bin/$b" ] || need_k8s=1
done
if [ "$need_k8s" = 1 ]; then
    mkdir -p "$work/k8s/cmd/etcd"
    cd "$work/k8s"
    download "k8s.io/kubernetes@$version" kube.json
    kmod="$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' kube.json)"
    staging=$(grep -E '^\s*k8s.io/[a-z0-9-]+ => \./staging' "$kmod" | awk '{print $1}')
    etcd_version=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' "$kmod")
    go_line=$(awk '$1=="go"{print $2; exit}' "$kmod")

    {
        echo "module kubeview.local/kubebuild"
        echo "go $go_line"
        echo "require k8s.io/kubernetes $version"
        echo "require go.etcd.io/etcd/server/v3 $etcd_version"
        for m in $staging; do echo "replace $m => $m $staging_version"; done
    } > go.mod
    cat > cmd/etcd/main.go <<'GO'
// etcd, built from the version k8s.io/kubernetes pins.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
    # The replace/require graph of k8s.io/kubernetes itself: copy its requirements so MVS picks what
    # upstream tested (go mod tidy would otherwise choose newer minor releases).
    awk '/^require \(/{f=1;next} f&&/^\)/{f=0} f&&$1!~/^k8s.io\// {print "require "$1" "$2}' "$kmod" >> go.mod
    go mod tidy >/dev/null 2>tidy.log || { said tidy.log; exit 1; }
    # tidy drops the requirement on k8s.io/kubernetes (no file here imports its commands): put it back, or
    # `go build k8s.io/kubernetes/cmd/...` resolves the proxy's latest release instead of $version
    go mod edit -require="k8s.io/kubernetes@$version"
    cv="k8s.io/component-base/version"
    ldflags="-s -w -X $cv.gitVersion=$version -X $cv.gitMajor=1 -X $cv.gitMinor=$minor \
        -X $cv.gitTreeState=clean -X $cv.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ) \
        -X k8s.io/client-go/pkg/version.gitVersion=$version"
    for b in "${k8s_commands[@]}"; do
        if [ ! -x "$out/bin/$b" ]; then
            echo "build-kubernetes: building $b $version ($(( $(date +%s) - start )) s so far)"
            go build -ldflags "$ldflags" -o "$out/bin/$b.tmp" "k8s.io/kubernetes/cmd/$b" 2>build.log || { said build.log; exit 1; }
            mv "$out/bin/$b.tmp" "$out/bin/$b"
        fi
    done
    if [ "$skew" = 0 ] && [ ! -x "$out/bin/etcd" ]; then
        echo "build-kubernetes: building etcd $etcd_version"
        go build -ldflags "-s -w" -o "$out/bin/etcd.tmp" ./cmd/etcd
        mv "$out/bin/etcd.tmp" "$out/bin/etcd"
    fi
fi

if [ "$skew" = 1 ]; then
    echo "build-kubernetes: built in $(( $(date +%s) - start )) s into $out/bin"
    "$out/bin/kube-apiserver" --version
    exit 0
fi

# --- kwok and kube-state-metrics: their own modules, as published --------------------------
build_module() {  # name module-path version package
    # Every step checks itself: errexit is off inside a function called from `||`.
    local name="$1" mod="$2" ver="$3" pkg="$4"
    [ -x "$out/bin/$name" ] && return 0
    echo "build-kubernetes: building $name $ver ($(( $(date +%s) - start )) s so far)"
    mkdir -p "$work/$name" && cd "$work/$name" || return 1
    download "$mod@$ver" mod.json || return 1
    local dir; dir="$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' mod.json)"
    [ -d "$dir" ] || { echo "build-kubernetes: $mod@$ver downloaded but has no Dir" >&2; return 1; }
    # Build inside a writable copy of the module so its own replace directives apply.
    cp -r "$dir" src && chmod -R u+w src && cd src || return 1
    go build -ldflags "-s -w" -o "$out/bin/$name.tmp" "$pkg" || return 1
    mv "$out/bin/$name.tmp" "$out/bin/$name"
}
build_module kwok sigs.k8s.io/kwok "$kwok_version" ./cmd/kwok || exit 1
if ! build_module kube-state-metrics k8s.io/kube-state-metrics/v2 "$ksm_version" .; then
    echo "build-kubernetes: kube-state-metrics $ksm_version not built (above); the plane is complete," \
         "only the tests that compare with kube-state-metrics skip"
fi

echo "build-kubernetes: built in $(( $(date +%s) - start )) s into $out/bin"
"$out/bin/kube-apiserver" --version
