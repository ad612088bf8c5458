#!/usr/bin/env bash
# make lint: the product's binaries link neither the standard testing package nor the test and demo harness
# (issue 26). The harness is every package of hack/harness-packages.txt and everything below it. The demo is
# built on the harness but is a program too: it must not link the testing package.
set -euo pipefail
cd "$(dirname "$0")/.."

module=$(go list -m)
source hack/lib/harness.sh

bad=0
for bin in ./cmd/network-agent ./cmd/network-operator; do
  deps=$(go list -deps "$bin")
  found=$(grep -xE 'testing' <<< "$deps" || true)
  for h in "${HARNESS[@]}"; do
    found+=$'\n'$(grep -E "^$module/$h(/|$)" <<< "$deps" || true)
  done
  found=$(grep . <<< "$found" || true)
  if [[ -n $found ]]; then
    echo "binary-deps: $bin links test or harness packages:" >&2
    sed 's/^/  /' <<< "$found" >&2
    bad=1
  fi
done
if grep -qx testing <(go list -deps ./demo); then
  echo "binary-deps: ./demo links the standard testing package (a harness package it uses imports it: take a narrow interface, as test/harness/lab.TB does)" >&2
  bad=1
fi
((bad == 0)) && echo "binary-deps: network-agent and network-operator link no testing and no harness package; the demo links no testing"
exit $bad
