#!/usr/bin/env bash
# Installs and mounts what the tests, benchmarks and demo need on a fresh Debian machine.
# Idempotent: a machine that already has everything costs a few dpkg queries.
set -euo pipefail

packages=(clang llvm libbpf-dev bpftool iproute2 ethtool iputils-ping jq iperf3 frr frr-pythontools
  prometheus tcpdump bpftrace iptables conntrack kmod dbus-daemon util-linux
  mmdebstrap containerd runc containernetworking-plugins # images (mmdebstrap) and real test nodes (test/harness/kubenodes)
  qemu-system-x86 busybox-static xz-utils zstd) # the kernel lane: Debian's kernels under QEMU (test/harness/kernellane)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  # The frr and containerd packages start host services; our tests run their own daemons. Only what this run
  # installed is stopped: a containerd that was there before is someone's.
  for svc in frr containerd; do
    if [[ " ${missing[*]} " == *" $svc "* ]]; then systemctl disable --now "$svc" >/dev/null 2>&1 || true; fi
  done
fi

if [[ $(id -u) -eq 0 ]]; then
  mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
  mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
  mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
fi
