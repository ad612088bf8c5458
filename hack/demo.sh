#!/usr/bin/env bash
# The network-operator demo: the whole system on this machine, as a new user first meets it.
#
#   hack/demo.sh        build, start everything, run the scenario; on a terminal wait for Enter (or Ctrl-C),
#                       then tear everything down
#   hack/demo.sh up     the same, but left running in the background (then: hack/demo.sh down)
#   hack/demo.sh down   stop what `up` left running and clean up (also after a crash)
#
# DEMO_INSTALL=helm (the default, `make demo`): what a user does - a real control plane and N real kubelet nodes
# (containerd, kube-proxy) in network namespaces, the images of `make images` imported into every node, and the
# chart installed with helm: the operator Deployment and the agent DaemonSet (agent + FRR containers).
# DEMO_INSTALL=processes (`make demo-processes`): the quick development loop - the operator and one agent and FRR
# per namespace node as processes next to kube-apiserver + etcd.
# Both add an EVPN/VXLAN fabric with a route reflector, tenant workloads and a Prometheus server; see
# demo/ (the netop-demo command) and test/harness/cluster (the same scenario runs as the end-to-end test in test/e2e). Extra flags go
# to the demo, e.g. `hack/demo.sh --nodes 4`. Binaries (Kubernetes, helm, FRR's root file system) are built once
# and cached under ~/.cache/network-operator.
# The data-plane-only first form of the demo is hack/demo-dataplane.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
case $mode in
run | up | down) [[ $# -gt 0 ]] && shift ;;
-*) mode=run ;;
*)
  echo "usage: $0 [run|up|down] [--nodes N] [--keep-on-failure] [--prometheus-addr ADDR]" >&2
  exit 2
  ;;
esac
if [[ $(id -u) -ne 0 ]]; then
  echo "demo: needs root (network namespaces, BPF, FRR)" >&2
  exit 1
fi
state_dir=${DEMO_STATE_DIR:-/run/network-operator-demo}
# The host as it was before the demo: after the teardown, anything of the demo still there is named and fails it.
host_before=${state_dir}.host-before.json
mkdir -p bin bin/tools
go build -o bin/tools/ ./hack/tools/leftovers

check_leftovers() {
  echo "== Is anything left on the host?"
  bin/tools/leftovers check "$host_before" && rm -f "$host_before"
}

if [[ $mode == down ]]; then
  [[ -x bin/netop-demo ]] || go build -o bin/netop-demo ./demo
  bin/netop-demo down --state-dir "$state_dir"
  [[ ! -f $host_before ]] || check_leftovers
  exit
fi

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
install=${DEMO_INSTALL:-helm}
echo "== Build (Kubernetes binaries, helm and FRR's root file system are built once and cached; the first time takes minutes)"
k8s=${ENVTEST_K8S_VERSION:-1.37.1} etcd=${ENVTEST_ETCD_VERSION:-3.7.0}
KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh "$k8s" "$etcd")
export KUBEBUILDER_ASSETS
for cmd in network-operator network-agent; do
  go build -o "bin/$cmd" "./cmd/$cmd"
done
go build -o bin/netop-demo ./demo
echo "  bin/network-operator bin/network-agent bin/netop-demo; kube-apiserver and etcd from $KUBEBUILDER_ASSETS"
NETOP_FRR_ROOT=$(hack/frr-root.sh)
export NETOP_FRR_ROOT
echo "  FRR (the FRR image's) from $NETOP_FRR_ROOT"
if [[ $install == helm ]]; then
  NETOP_K8S_BINARIES=$(hack/k8s-binaries.sh "$k8s" "$etcd")
  NETOP_CHART_TOOLS=$(hack/chart-tools.sh "${HELM_VERSION:-4.3.1}" "${KUSTOMIZE_VERSION:-5.8.2}")
  export NETOP_K8S_BINARIES NETOP_CHART_TOOLS
  echo "  kubelet, kube-controller-manager, kube-scheduler, kube-proxy from $NETOP_K8S_BINARIES; helm from $NETOP_CHART_TOOLS"
  go build -o bin/tools/ ./hack/tools/imagebuild
  bin/tools/imagebuild -out "${IMAGES_DIR:-_out/images}" -repo "${IMAGE_REPO:-localhost/network-operator}" | sed 's/^/  /'
fi
# A snapshot left by an `up` that was never taken down stays: it shows the host before that demo.
[[ -f $host_before ]] || bin/tools/leftovers snapshot "$host_before"
if [[ $mode == up ]]; then
  exec bin/netop-demo up --install "$install" --state-dir "$state_dir" --bin-dir bin --images-dir "${IMAGES_DIR:-_out/images}" "$@"
fi
status=0
trap ':' INT TERM # Ctrl-C reaches the demo, which tears down; this script then still checks the host
bin/netop-demo run --install "$install" --state-dir "$state_dir" --bin-dir bin --images-dir "${IMAGES_DIR:-_out/images}" "$@" || status=$?
check_leftovers || status=1
exit "$status"
