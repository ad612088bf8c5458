#!/usr/bin/env bash
# `make test`: every test with every prerequisite required (a test that cannot run fails, naming what is
# missing; only a kernel feature this kernel lacks may skip), the router's fuzz target, the tests that need
# neither root nor namespaces once more under -race, then a check that nothing was left on the host, and one
# summary: every skip with its reason, every failure, and "N passed, N failed, N skipped".
#
# Expects what the Makefile's test target sets up first (deps, check-generated, envtest) and KUBEBUILDER_ASSETS.
# Full event streams stay in $TEST_OUT (default _out/test) for a closer look.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=${PKGS:-./...}
timeout=${TEST_TIMEOUT:-25m}
fuzztime=${FUZZTIME:-20s}
out=${TEST_OUT:-_out/test}
[[ -n ${KUBEBUILDER_ASSETS:-} ]] || { echo "test: KUBEBUILDER_ASSETS is not set (make test sets it)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "test: make test needs root (namespaces, BPF, FRR); make test-unit runs without" >&2; exit 2; }

mkdir -p "$out" bin/tools
rm -f "$out"/*.json "$out"/leftovers.txt
go build -o bin/tools/ ./hack/tools/testsummary ./hack/tools/leftovers
bin/tools/leftovers snapshot "$out/host-before.json"

# pass NAME PREREQ-MODE GO-TEST-ARGS...: one `go test -json` run, logged compactly, its stream kept. Its exit
# status is not what decides: the summary reads every event (a build failure or panic is an event too).
pass() {
  local name=$1 mode=$2
  shift 2
  echo "== $name: go test $*"
  NETOP_TEST_PREREQS=$mode go test -json "$@" 2>&1 | bin/tools/testsummary stream -json "$out/$name.json" || true
}

start=$SECONDS
pass main require -count=1 -timeout "$timeout" $pkgs
pass fuzz require -run '^$' -fuzz '^FuzzRouterMalformed$' -fuzztime "$fuzztime" ./bpf/
pass race exclude -race -count=1 -timeout "$timeout" $pkgs
echo "== tests took $((SECONDS - start)) s"

# The kernel lane: the tests that skip here for a kernel feature, in Debian's own kernels under QEMU, with and
# without VRF devices, and the data path on Debian 12's and 13's kernels (hack/kernel-lane-tests.txt,
# test/harness/kernellane; KERNEL_SUITES=trixie narrows it). Their streams join the summary, which
# names the kernels each host skip passed on.
lane=()
lane_failure=()
if [[ ${KERNEL_LANE:-1} == 1 ]]; then
  echo "== kernel lane: Debian's kernels under QEMU"
  rm -f "$out"/kernel-*.json
  go build -o bin/tools/ ./hack/tools/kernellane
  lane_start=$SECONDS
  lane_rc=0
  bin/tools/kernellane -suites "${KERNEL_SUITES:-}" -streams "$out" -features-doc docs/install.md || lane_rc=$?
  echo "== the kernel lane took $((SECONDS - lane_start)) s"
  for f in "$out"/kernel-*.json; do
    [[ -e $f ]] && lane+=("$(basename "$f" .json):kernel:$f")
  done
  if ((lane_rc >= 2 || ${#lane[@]} == 0)); then
    lane_failure=(-failure "the kernel lane did not finish (exit status $lane_rc; see its log above)")
  fi
fi

echo "== what is left on the host"
bin/tools/leftovers check -o "$out/leftovers.txt" "$out/host-before.json" || true

echo "== summary"
exec bin/tools/testsummary report -leftovers "$out/leftovers.txt" -standins hack/kernel-lane-standins.txt "${lane_failure[@]}" \
  "main:strict:$out/main.json" "fuzz:strict:$out/fuzz.json" "race:strict:$out/race.json" "${lane[@]}"
