#!/usr/bin/env bash
# make lint: production code that no binary reaches is a defect (issue 11). deadcode lists the functions that
# no program under cmd/, demo/ or hack/tools/ can reach; the harness (hack/harness-packages.txt) exists to serve tests
# (its unreachable functions are what the tests call), everything else must be reached or deleted.
set -euo pipefail
cd "$(dirname "$0")/.."

source hack/lib/harness.sh

found=$(go tool deadcode -filter '^github.com/network-operator/network-operator/' ./cmd/... ./demo ./hack/tools/...)
bad=()
while IFS= read -r line; do
  [[ -z $line ]] && continue
  file=${line%%:*}
  in_harness "$(dirname "$file")" || bad+=("$line")
done <<< "$found"

if ((${#bad[@]})); then
  echo "deadcode: production code that no binary under cmd/, demo/ or hack/tools/ reaches (wire it or delete it):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "deadcode: every production function is reached by a binary ($(grep -c . <<< "$found" || true) unreachable functions in the harness)"
