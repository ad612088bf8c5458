# Sourced by hack/envtest-assets.sh and hack/k8s-binaries.sh: builds Kubernetes commands from source at a pinned
# version, the one way that works here (no prebuilt binaries are reachable).
#
# `go install k8s.io/kubernetes/cmd/...@v...` cannot work: k8s.io/kubernetes' go.mod replaces its staging modules
# with local directories. So a throw-away module outside the project requires k8s.io/kubernetes and etcd's server
# module, replaces every staging module with its published v0.<minor>.<patch> release, lists every command as a
# tool, and builds them. The module is kept per version (one `go mod tidy` serves every command).
#
#   k8s_build <k8s-version> <etcd-version> <out-dir> <command-package>...
#     e.g. k8s_build 1.37.1 3.7.0 ~/.cache/x k8s.io/kubernetes/cmd/kubelet go.etcd.io/etcd/server/v3
#   Each command lands in <out-dir>/<name> (etcd's server module as "etcd"); logs go to stderr.

k8s_log() { echo "k8s-build: $*" >&2; }
k8s_die() { k8s_log "ERROR: $*"; exit 1; }

# Every command either script may build: the module lists them all, so it resolves once per version.
k8s_all_tools=(k8s.io/kubernetes/cmd/kube-apiserver go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kubelet
  k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy
  k8s.io/kubernetes/cmd/kubectl)

k8s_build() {
  local k8s=${1#v} etcd=${2#v} out=$3
  shift 3
  [[ $k8s =~ ^1\.([0-9]+)\.([0-9]+)$ ]] || k8s_die "k8s version '$k8s' is not 1.<minor>.<patch>"
  local minor=${BASH_REMATCH[1]} staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
  [[ $etcd =~ ^3\.[0-9]+\.[0-9]+$ ]] || k8s_die "etcd version '$etcd' is not 3.<minor>.<patch>"
  command -v go >/dev/null || k8s_die "go not found in PATH"
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/network-operator
  local build=$cache/k8s-build/$k8s-$etcd
  mkdir -p "$build" "$out"
  (
    cd "$build"
    export GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=mod" GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
    if [[ ! -f .resolved ]]; then
      rm -f go.mod go.sum
      k8s_log "resolving k8s.io/kubernetes v$k8s"
      go mod init k8s-build >/dev/null 2>&1 || k8s_die "go mod init in $build"
      local kgomod
      kgomod=$(go mod download -json "k8s.io/kubernetes@v$k8s" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
      [[ -f $kgomod ]] || k8s_die "cannot download k8s.io/kubernetes@v$k8s through $(go env GOPROXY)"
      # Every `k8s.io/<name> => ./staging/src/k8s.io/<name>` line names a staging module published as v0.<minor>.<patch>.
      local modules
      mapfile -t modules < <(sed -n 's#^[[:space:]]*\(replace[[:space:]]\+\)\{0,1\}\(k8s\.io/[^[:space:]]*\)[[:space:]]\+=>[[:space:]]\+\./staging/.*#\2#p' "$kgomod" | sort -u)
      [[ ${#modules[@]} -gt 0 ]] || k8s_die "no staging replace directives found in $kgomod"
      k8s_log "${#modules[@]} staging modules -> $staging"
      local edits=(-require="k8s.io/kubernetes@v$k8s" -require="go.etcd.io/etcd/server/v3@v$etcd")
      local t m
      for t in "${k8s_all_tools[@]}"; do edits+=(-tool="$t"); done
      for m in "${modules[@]}"; do edits+=(-replace="$m=$m@$staging"); done
      go mod edit "${edits[@]}"
      k8s_log "go mod tidy (downloads)"
      go mod tidy >&2 || k8s_die "go mod tidy failed in $build"
      local got_etcd
      got_etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
      [[ $got_etcd == "v$etcd" ]] || k8s_die "etcd server resolved to $got_etcd, not v$etcd (k8s.io/kubernetes v$k8s needs a newer one); pick a checked pair"
      touch .resolved
    fi
    local vpkg=k8s.io/component-base/version
    local ldflags="-s -w -X $vpkg.gitVersion=v$k8s -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
    local tmp pkg name
    tmp=$(mktemp -d "$out/.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    for pkg in "$@"; do
      name=${pkg##*/}
      [[ $pkg == go.etcd.io/etcd/server/v3 ]] && name=etcd
      k8s_log "building $name ($pkg)"
      CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/$name" "$pkg" >&2 || k8s_die "building $pkg failed"
      if [[ $name == kubectl ]]; then "$tmp/$name" version --client >&2; else "$tmp/$name" --version >&2; fi ||
        k8s_die "built $name does not run"
    done
    chmod 0755 "$tmp"/*
    mv "$tmp"/* "$out"/
  )
}
