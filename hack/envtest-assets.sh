#!/usr/bin/env bash
# Builds kube-apiserver and etcd from source (no prebuilt binaries are reachable here) for envtest, caches them,
# and prints the assets directory (for KUBEBUILDER_ASSETS) on stdout. Logs go to stderr.
#
#   hack/envtest-assets.sh <k8s-version> <etcd-version>     e.g. 1.37.1 3.7.0
#
# `go install k8s.io/kubernetes/cmd/kube-apiserver@...` cannot work: k8s.io/kubernetes' go.mod replaces its staging
# modules with local directories. So a throw-away module outside the project requires k8s.io/kubernetes and etcd's
# server module, replaces every staging module with its published v0.<minor>.<patch> release, and builds both.
set -euo pipefail

log() { echo "envtest-assets: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -eq 2 ]] || die "usage: $0 <k8s-version> <etcd-version> (e.g. 1.37.1 3.7.0)"
k8s=${1#v}
etcd=${2#v}
[[ $k8s =~ ^1\.([0-9]+)\.([0-9]+)$ ]] || die "k8s version '$k8s' is not 1.<minor>.<patch>"
minor=${BASH_REMATCH[1]}
staging="v0.${minor}.${BASH_REMATCH[2]}"
[[ $etcd =~ ^3\.[0-9]+\.[0-9]+$ ]] || die "etcd version '$etcd' is not 3.<minor>.<patch>"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/network-operator
out=$cache/envtest/$k8s-$etcd
build=$cache/envtest-build/$k8s-$etcd

have_assets() { [[ -x $out/kube-apiserver && -x $out/etcd ]]; }

if have_assets; then
  log "using cached $out"
  echo "$out"
  exit 0
fi

mkdir -p "$cache/envtest" "$cache/envtest-build"
# Two concurrent callers (make test + an editor) must not build into the same directory.
exec 9>"$cache/envtest-build/.lock"
if command -v flock >/dev/null; then
  flock 9
  if have_assets; then
    log "built meanwhile by another run: $out"
    echo "$out"
    exit 0
  fi
fi

command -v go >/dev/null || die "go not found in PATH"
start=$SECONDS
rm -rf "$build"
mkdir -p "$build"
cd "$build"
export GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=mod" GOTOOLCHAIN=${GOTOOLCHAIN:-auto}

log "resolving k8s.io/kubernetes v$k8s"
go mod init envtest-build >/dev/null 2>&1 || die "go mod init in $build"
kgomod=$(go mod download -json "k8s.io/kubernetes@v$k8s" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[[ -f $kgomod ]] || die "cannot download k8s.io/kubernetes@v$k8s through $(go env GOPROXY)"

# Every `k8s.io/<name> => ./staging/src/k8s.io/<name>` line names a staging module published as v0.<minor>.<patch>.
mapfile -t modules < <(sed -n 's#^[[:space:]]*\(replace[[:space:]]\+\)\{0,1\}\(k8s\.io/[^[:space:]]*\)[[:space:]]\+=>[[:space:]]\+\./staging/.*#\2#p' "$kgomod" | sort -u)
[[ ${#modules[@]} -gt 0 ]] || die "no staging replace directives found in $kgomod"
pinned_etcd=$(sed -n 's#^[[:space:]]*go\.etcd\.io/etcd/server/v3[[:space:]]\+v\([^[:space:]]*\).*#\1#p' "$kgomod" | head -n1)
log "${#modules[@]} staging modules -> $staging; k8s.io/kubernetes v$k8s pins etcd server ${pinned_etcd:-?}, building $etcd"

edits=(-require="k8s.io/kubernetes@v$k8s" -require="go.etcd.io/etcd/server/v3@v$etcd"
  -tool=k8s.io/kubernetes/cmd/kube-apiserver -tool=go.etcd.io/etcd/server/v3)
for m in "${modules[@]}"; do edits+=(-replace="$m=$m@$staging"); done
go mod edit "${edits[@]}"

log "go mod tidy (downloads)"
go mod tidy >&2 || die "go mod tidy failed in $build"
got_etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
[[ $got_etcd == "v$etcd" ]] || die "etcd server resolved to $got_etcd, not v$etcd (k8s.io/kubernetes v$k8s needs a newer one); pick a checked pair"

tmp=$(mktemp -d "$cache/envtest/.tmp-$k8s-$etcd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
vpkg=k8s.io/component-base/version
ldflags="-s -w -X $vpkg.gitVersion=v$k8s -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"

log "building kube-apiserver v$k8s (the slow part: ~4-5 min cold on 2 cores)"
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2 \
  || die "building kube-apiserver failed"
log "building etcd v$etcd"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3 >&2 || die "building etcd failed"

"$tmp/kube-apiserver" --version >&2 || die "built kube-apiserver does not run"
"$tmp/etcd" --version >&2 || die "built etcd does not run"

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
chmod 0755 "$out"
log "built in $((SECONDS - start)) s: $out"
echo "$out"
