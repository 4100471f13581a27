# Sourced by build-helm.sh and build-krew.sh: build commands of one published Go module (through the
# Go module proxy) into a cache directory keyed by version, reusing what is there. Not run directly.
#
#   go_tool TOOL MODULE VERSION OUT_DIR LDFLAGS NAME=PACKAGE... -- "$@"   # the script's options:
#       (none): build what is missing; --print-dir: print OUT_DIR; -h/--help: the script's comment
#
# Builds inside a writable copy of the module so its own go.mod (and replace directives) apply; two
# runs at once take turns on a lock in the cache. Prints one line: cached, or built in N s.
# GO_MODULE_FILES (module-relative paths, space-separated) are copied from the module into
# GO_MODULE_FILES_DIR too (build-karpenter.sh: the CRDs), and count for "cached" like the binaries.
# build-churn.sh uses only build_lock (its source is in this repository, not a published module).
# GO_MODULE_REPO (a git directory of the module's repository): build VERSION, a tag there, instead of
# downloading the module (build-peers.sh: kube-capacity, which the module proxy refuses).

# Two builds into one cache take turns: the lock stays held on fd 9 until the calling shell exits.
build_lock() {
    local tool="$1" cache="$2"
    exec 9>"$cache/.build.lock"
    if ! flock -n 9; then
        echo "$tool: another build holds $cache/.build.lock; waiting for it"
        flock 9
    fi
}

go_module_build() {
    local tool="$1" module="$2" version="$3" out="$4" ldflags="$5"; shift 5
    local want=("$@") pair missing=0
    for pair in "${want[@]}"; do [ -x "$out/${pair%%=*}" ] || missing=1; done
    local file
    for file in ${GO_MODULE_FILES:-}; do [ -f "$GO_MODULE_FILES_DIR/${file##*/}" ] || missing=1; done
    if [ "$missing" = 0 ]; then echo "$tool: cached in $out"; return 0; fi
    command -v go >/dev/null 2>&1 || { echo "$tool: needs Go (go1.26 or newer on PATH)" >&2; return 1; }
    local cache; cache="$(dirname "$out")"
    mkdir -p "$out" "$cache/src"
    build_lock "$tool" "$cache"
    local start work dir
    start=$(date +%s)
    work="$(mktemp -d "$cache/src/build.XXXXXX")"
    (
        set -e
        export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
        cd "$work"
        if [ -n "${GO_MODULE_REPO:-}" ]; then  # the module's repository at the tag (its deps still from the proxy)
            mkdir src && git -C "$GO_MODULE_REPO" archive "$version" | tar -x -C src
        else
            if ! go mod download -json "$module@$version" > mod.json; then
                echo "$tool: cannot download $module@$version (GOPROXY=$(go env GOPROXY))" >&2
                exit 1
            fi
            dir="$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' mod.json)"
            cp -r "$dir" src && chmod -R u+w src
        fi
        cd src
        if [ -n "${GO_MODULE_FILES:-}" ]; then
            mkdir -p "$GO_MODULE_FILES_DIR"
            for file in $GO_MODULE_FILES; do cp "$file" "$GO_MODULE_FILES_DIR/${file##*/}"; done
        fi
        for pair in "${want[@]}"; do
            [ -x "$out/${pair%%=*}" ] && continue
            go build -ldflags "$ldflags" -o "$out/${pair%%=*}.tmp" "${pair#*=}"
            mv "$out/${pair%%=*}.tmp" "$out/${pair%%=*}"
        done
    )
    local status=$?
    rm -rf "$work"
    [ "$status" = 0 ] || { echo "$tool: building $module@$version failed (above)" >&2; return "$status"; }
    echo "$tool: built $module@$version in $(( $(date +%s) - start )) s into $out"
}

go_tool() {
    local tool="$1" module="$2" version="$3" out="$4" ldflags="$5"; shift 5
    local want=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do want+=("$1"); shift; done
    shift || true
    case "${1:-}" in
        "") go_module_build "$tool" "$module" "$version" "$out" "$ldflags" "${want[@]}" ;;
        --print-dir) echo "$out" ;;
        -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' ;;
        *) echo "$tool: unknown option $1 (see --help)" >&2; return 2 ;;
    esac
}
