#!/usr/bin/env bash
# make bench: builds the benchmark program (hack/tools/bench) and runs it as root. It prints one markdown table (BPF
# per-packet cost, iperf3 through direct veth / kernel forwarding / the eBPF router with and without a
# kube-proxy-sized ruleset, generation swap times, the FRR apply of a one-line change against real zebra + bgpd,
# the operator binary rolling changes out to 1000 simulated nodes against kube-apiserver + etcd from
# `make envtest`, pod Running -> interface up with the agent binary on a kubelet node from `make k8s-binaries`, one
# node at scale: the agent binary applying 1000 VRFs and 4000 interfaces with zebra + bgpd, its no-op resync, its
# memory and FRR's) and writes it to docs/bench.md. About 8 minutes.
# Extra arguments go to the program, e.g. `hack/bench.sh -quick` (short runs, docs/bench.md left alone),
# `hack/bench.sh -only perpacket` (docs/bench.md holds only those rows) or `hack/bench.sh -only podstart -merge`
# (their rows replaced in docs/bench.md, the others kept). Namespaces are per-run and removed on exit and on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $(id -u) -ne 0 ]]; then
  echo "bench: needs root (network namespaces, BPF programs)" >&2
  exit 1
fi
for tool in iperf3 iptables-restore conntrack nsenter ping; do
  command -v "$tool" >/dev/null || { echo "bench: $tool missing; run 'make deps'" >&2; exit 1; }
done
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/bench" ./hack/tools/bench
go build -o "$bin/network-operator" ./cmd/network-operator
go build -o "$bin/network-agent" ./cmd/network-agent
"$bin/bench" -out docs/bench.md -operator "$bin/network-operator" -agent "$bin/network-agent" "$@"
