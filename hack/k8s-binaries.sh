#!/usr/bin/env bash
# Builds the Kubernetes node and control-plane binaries that the real-node cluster harness needs (kubelet,
# kube-controller-manager, kube-scheduler, kube-proxy, kubectl; kube-apiserver and etcd come from
# hack/envtest-assets.sh), caches them keyed by version, and prints the directory on stdout. Logs go to stderr.
#
#   hack/k8s-binaries.sh <k8s-version> <etcd-version>     e.g. 1.37.1 3.7.0
#
# Cold on 2 cores: ~10 min (kubelet ~6); cached: instant.
set -euo pipefail
source "$(dirname "$0")/lib/k8s-build.sh"

[[ $# -eq 2 ]] || k8s_die "usage: $0 <k8s-version> <etcd-version> (e.g. 1.37.1 3.7.0)"
k8s=${1#v} etcd=${2#v}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/network-operator
out=$cache/k8s/$k8s
commands=(kubelet kube-controller-manager kube-scheduler kube-proxy kubectl)

missing() {
  local c
  for c in "${commands[@]}"; do [[ -x $out/$c ]] || echo "k8s.io/kubernetes/cmd/$c"; done
}
if [[ -z $(missing) ]]; then
  k8s_log "using cached $out"
  echo "$out"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.k8s-build.lock"
flock 9
mapfile -t todo < <(missing)
if ((${#todo[@]})); then
  start=$SECONDS
  k8s_build "$k8s" "$etcd" "$out" "${todo[@]}"
  k8s_log "built ${#todo[@]} commands in $((SECONDS - start)) s: $out"
fi
echo "$out"
