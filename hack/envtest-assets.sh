#!/usr/bin/env bash
# Builds kube-apiserver and etcd from source (no prebuilt binaries are reachable here) for envtest, caches them,
# and prints the assets directory (for KUBEBUILDER_ASSETS) on stdout. Logs go to stderr.
#
#   hack/envtest-assets.sh <k8s-version> <etcd-version>     e.g. 1.37.1 3.7.0
#
# The recipe (a throw-away module per version) is hack/lib/k8s-build.sh; the node binaries are hack/k8s-binaries.sh.
set -euo pipefail
source "$(dirname "$0")/lib/k8s-build.sh"

[[ $# -eq 2 ]] || k8s_die "usage: $0 <k8s-version> <etcd-version> (e.g. 1.37.1 3.7.0)"
k8s=${1#v} etcd=${2#v}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/network-operator
out=$cache/envtest/$k8s-$etcd

have_assets() { [[ -x $out/kube-apiserver && -x $out/etcd ]]; }
if have_assets; then
  k8s_log "using cached $out"
  echo "$out"
  exit 0
fi
mkdir -p "$cache"
# Two concurrent callers (make test + an editor) must not build into the same directory.
exec 9>"$cache/.k8s-build.lock"
flock 9
if ! have_assets; then
  start=$SECONDS
  k8s_log "building kube-apiserver v$k8s and etcd v$etcd (the slow part: ~4-5 min cold on 2 cores)"
  k8s_build "$k8s" "$etcd" "$out" k8s.io/kubernetes/cmd/kube-apiserver go.etcd.io/etcd/server/v3
  k8s_log "built in $((SECONDS - start)) s: $out"
fi
echo "$out"
