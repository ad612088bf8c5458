#!/usr/bin/env bash
# The network-operator demo, first form: the eBPF data plane on this machine, driven by the agent's CLI.
# (The whole system - control plane, operator, agents, FRR, Prometheus - is hack/demo.sh.)
#
#   hack/demo-dataplane.sh        build, set up, send traffic, show counters and isolation, then tear down
#                                 (on a terminal it waits for Enter or Ctrl-C first, so you can look around)
#   hack/demo-dataplane.sh up     the same, but leave everything running (inspect it, then: ... down)
#   hack/demo-dataplane.sh down   tear down what `up` left
#
# Two tenants with the same addresses sit behind one router namespace; the eBPF router (tc) forwards each
# tenant's packets with a FIB lookup in the tenant's own routing table. Kernel forwarding is off on every
# tenant interface: what gets through was forwarded by eBPF. Needs root and `make deps` (iproute2, iperf3,
# bpftool, jq). Re-runnable: leftovers of an earlier run are removed first. DEMO_PREFIX (default "demo-")
# starts every namespace name and names the pin directory, so a test can run it beside a running demo.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
case $mode in run | up | down) ;; *)
  echo "usage: $0 [up|down]" >&2
  exit 2
  ;;
esac
if [[ $(id -u) -ne 0 ]]; then
  echo "demo: needs root (network namespaces, BPF)" >&2
  exit 1
fi

prefix=${DEMO_PREFIX:-demo-}
[[ $prefix =~ ^[a-z0-9]{1,8}-$ ]] || { echo "demo: DEMO_PREFIX=$prefix: want 1-8 of [a-z0-9] and a trailing -" >&2; exit 2; }
pin_dir=/sys/fs/bpf/network-operator-${prefix%-}
tables=hack/demo/tables.yaml
agent=bin/network-agent
router=${prefix}router
hosts=("${prefix}a-cli" "${prefix}a-srv" "${prefix}b-cli" "${prefix}b-srv")

bold=$(tput bold 2>/dev/null || true)
plain=$(tput sgr0 2>/dev/null || true)
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
# show CMD...: print the command as a user would type it ("[ns] cmd" for commands inside a namespace), run it.
show() {
  case $1 in
  in_ns) printf '[%s] $ %s\n' "$2" "${*:3}" ;;
  agent_in_router) printf '[%s] $ network-agent dataplane %s\n' "$router" "${*:2}" ;;
  *) printf '$ %s\n' "$*" ;;
  esac
  "$@"
}
in_ns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" -- "$@"; } # keeps /sys/fs/bpf visible (ip netns exec hides it)
agent_in_router() { in_ns "$router" "$agent" dataplane "$@"; }
# fail MSG: say what went wrong, show the router's counters (they tell why), exit.
fail() {
  echo "demo: $*" >&2
  agent_in_router dump -f "$tables" --pin-dir "$pin_dir" >&2 || true
  exit 1
}
# The demo is IPv4; without IPv6 no router solicitations or MLD reports blur the packet counts it shows.
no_ipv6() { ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1; }
mac_of() { ip -n "$1" -j link show "$2" | jq -r '.[0].address'; }
rx_packets() { ip -n "$1" -j -s link show eth0 | jq -r '.[0].stats64.rx.packets'; }

down() {
  if [[ -e /run/netns/$router && -x $agent && -d $pin_dir ]]; then
    agent_in_router uninstall --pin-dir "$pin_dir" >/dev/null 2>&1 || true
  fi
  for ns in "$router" "${hosts[@]}"; do
    if [[ -e /run/netns/$ns ]]; then
      # Processes (iperf3) first, or the namespace lingers until they exit.
      ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
      ip netns del "$ns"
    fi
  done
  rm -rf "$pin_dir"
}

# wait_listening NS PORT: poll until a TCP listener shows up (5 s at most).
wait_listening() {
  local i
  for i in $(seq 50); do
    in_ns "$1" ss -Hltn "sport = :$2" | grep -q LISTEN && return 0
    sleep 0.1
  done
  echo "demo: nothing listens on port $2 in $1" >&2
  return 1
}

build() {
  step "Build the agent"
  mkdir -p bin
  show go build -o "$agent" ./cmd/network-agent
}

setup() {
  step "Namespaces: router + two tenants with the SAME addresses"
  mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
  ip netns add "$router"
  no_ipv6 "$router"
  # Forwarding off everywhere first: writing "all" overwrites every device's flag.
  ip netns exec "$router" sysctl -qw net.ipv4.conf.all.forwarding=0
  # Stand-ins for VRF devices (this kernel has none): their forwarding flag is what the FIB lookup checks.
  for vrf in vrf-a vrf-b; do
    ip -n "$router" link add "$vrf" type dummy 2>/dev/null || ip -n "$router" link add "$vrf" type bridge
    ip -n "$router" link set "$vrf" up
    ip netns exec "$router" sysctl -qw "net.ipv4.conf.$vrf.forwarding=1"
  done
  local t tenant table side addr gw ns ifname
  for t in a:101 b:102; do
    tenant=${t%%:*} table=${t##*:}
    for side in cli srv; do
      ns=$prefix$tenant-$side ifname=$tenant-$side
      if [[ $side == cli ]]; then addr=10.1.0.2 gw=10.1.0.1; else addr=10.2.0.2 gw=10.2.0.1; fi
      ip netns add "$ns"
      no_ipv6 "$ns"
      ip -n "$ns" link set lo up
      ip -n "$router" link add "$ifname" type veth peer name eth0 netns "$ns"
      ip -n "$router" link set "$ifname" up
      ip -n "$ns" addr add "$addr/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" route add default via "$gw"
      # Permanent neighbours both ways: no ARP in the demo's figures.
      ip -n "$ns" neigh replace "$gw" lladdr "$(mac_of "$router" "$ifname")" dev eth0 nud permanent
      ip -n "$router" neigh replace "$addr" lladdr "$(mac_of "$ns" eth0)" dev "$ifname" nud permanent
      ip -n "$router" route add "${addr%.*}.0/24" dev "$ifname" table "$table"
    done
  done
  printf '  tenant A: %sa-cli 10.1.0.2 -> [a-cli  %s  a-srv] -> %sa-srv 10.2.0.2   (table 101)\n' "$prefix" "$router" "$prefix"
  printf '  tenant B: %sb-cli 10.1.0.2 -> [b-cli  %s  b-srv] -> %sb-srv 10.2.0.2   (table 102)\n' "$prefix" "$router" "$prefix"
  show ip -n "$router" route show table 101
  show ip -n "$router" route show table 102

  step "Before the router: the kernel does not forward (forwarding is off)"
  if in_ns "${prefix}a-cli" ping -c 1 -W 1 -q 10.2.0.2 >/dev/null; then
    echo "demo: unexpected reply without the eBPF router" >&2
    exit 1
  fi
  echo "  ping 10.2.0.2 from tenant A: no reply, as expected"

  step "Attach the eBPF router to the tenant interfaces"
  show agent_in_router attach --iface a-cli,a-srv,b-cli,b-srv --pin-dir "$pin_dir"

  step "Apply the tables ($tables)"
  show agent_in_router apply -f "$tables" --pin-dir "$pin_dir"
}

traffic() {
  step "Traffic: ping and a 2 s iperf3 in tenant A, ping in tenant B"
  local a0 b0
  a0=$(rx_packets "${prefix}a-srv") b0=$(rx_packets "${prefix}b-srv")
  show in_ns "${prefix}a-cli" ping -c 5 -i 0.2 -q 10.2.0.2 || fail "tenant A cannot reach its server"
  echo "  packets received meanwhile: tenant A's server +$(($(rx_packets "${prefix}a-srv") - a0)), tenant B's server +$(($(rx_packets "${prefix}b-srv") - b0))"
  a0=$(rx_packets "${prefix}a-srv") b0=$(rx_packets "${prefix}b-srv")
  show in_ns "${prefix}b-cli" ping -c 3 -i 0.2 -q 10.2.0.2 || fail "tenant B cannot reach its server"
  echo "  packets received meanwhile: tenant B's server +$(($(rx_packets "${prefix}b-srv") - b0)), tenant A's server +$(($(rx_packets "${prefix}a-srv") - a0))"

  in_ns "${prefix}a-srv" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
  wait_listening "${prefix}a-srv" 5201
  show in_ns "${prefix}a-cli" iperf3 -c 10.2.0.2 -p 5201 -t 2 -f g | grep -E '\] \$|sender|receiver'

  step "Isolation: the same address in tenant B is a different server"
  echo "  iperf3 listens only on tenant A's server. From tenant B, 10.2.0.2 is B's own server:"
  in_ns "${prefix}a-srv" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
  wait_listening "${prefix}a-srv" 5201
  if out=$(in_ns "${prefix}b-cli" iperf3 -c 10.2.0.2 -p 5201 -t 1 2>&1); then
    echo "demo: tenant B reached tenant A's iperf3 server: isolation broken" >&2
    exit 1
  fi
  echo "  [${prefix}b-cli] \$ iperf3 -c 10.2.0.2  ->  ${out##*error - }"
  in_ns "${prefix}a-cli" iperf3 -c 10.2.0.2 -p 5201 -t 1 >/dev/null # ends the waiting one-off server

  step "No route, no forwarding: tenant A to an address its table does not know"
  show in_ns "${prefix}a-cli" ping -c 2 -W 1 -q 10.9.9.9 || true
  echo "  (counted below as passed-not-fwded: the router hands such packets to the kernel, which does not forward)"
}

inspect() {
  step "Per-VRF counters: network-agent dataplane dump"
  show agent_in_router dump -f "$tables" --pin-dir "$pin_dir"

  step "The same maps through bpftool (private pin dir $pin_dir)"
  show bpftool map dump pinned "$pin_dir/version"
  show bpftool map dump pinned "$pin_dir/vrf_table"
}

case $mode in
down)
  down
  echo "demo: torn down"
  ;;
up)
  down
  build
  setup
  traffic
  inspect
  step "Left running"
  cat <<EOT
  Look around:   nsenter --net=/run/netns/$router $agent dataplane dump -f $tables --pin-dir $pin_dir
                 nsenter --net=/run/netns/${prefix}a-cli ping 10.2.0.2
                 bpftool map dump pinned $pin_dir/iface_table
                 bpftrace tools/bpftrace/vrf-paths.bt
  Tear down:     hack/demo-dataplane.sh down
EOT
  ;;
run)
  down
  trap 'down' EXIT
  trap 'exit 130' INT TERM
  build
  setup
  traffic
  inspect
  if [[ -t 0 && -t 1 ]]; then
    step "Done"
    read -r -p "Press Enter (or Ctrl-C) to tear everything down... " || true
  fi
  step "Tearing down"
  ;;
esac
