#!/usr/bin/env bash
# make lint: the layout shows the architecture (issue 26), checked rather than hoped for:
#   - no top-level folder holds more than a third of the Go lines (generated and vendored files not counted);
#   - no import climbs back up the floors, production code only (tests may reach across):
#       cmd, demo, hack/tools      may import anything
#       operator, agent            never each other, nor the harness (test/)
#       internal                   neither operator nor agent
#       api                        only libraries (pkg, bpf/limits: the limits it states)
#       pkg, bpf                   no api, internal, operator, agent (libraries)
set -euo pipefail
cd "$(dirname "$0")/.."

module=$(go list -m)
bad=0

files=$(git ls-files '*.go' | grep -v '^third_party/' | grep -v -e 'zz_generated' -e '_bpfel\.go$')
total=$(xargs cat <<< "$files" | wc -l)
while read -r top; do
  n=$(grep "^$top/" <<< "$files" | xargs cat | wc -l)
  if ((3 * n > total)); then
    echo "layout: $top/ holds $n of $total Go lines, more than a third" >&2
    bad=1
  fi
done < <(cut -d/ -f1 <<< "$files" | grep -v '\.go$' | sort -u)

# forbidden <importer-prefix> <imported-prefix> [allowed exception]
rules=(
  "operator/ agent/"
  "agent/ operator/"
  "operator/ test/"
  "agent/ test/"
  "internal/ operator/"
  "internal/ agent/"
  "pkg/ api/"
  "pkg/ internal/"
  "pkg/ operator/"
  "pkg/ agent/"
  "bpf/ api/"
  "bpf/ internal/"
  "bpf/ operator/"
  "bpf/ agent/"
  "api/ internal/"
  "api/ operator/"
  "api/ agent/"
  "api/ test/"
  "pkg/ test/"
  "internal/ test/"
)
# The harness (hack/harness-packages.txt) serves tests: it may reach into test/ from where it sits.
source hack/lib/harness.sh

while read -r pkg imports; do
  rel=${pkg#"$module"/}
  in_harness "$rel" && continue
  for imp in $imports; do
    [[ $imp == "$module"/* ]] || continue
    irel=${imp#"$module"/}
    for r in "${rules[@]}"; do
      read -r from to <<< "$r"
      if [[ $rel/ == "$from"* && $irel/ == "$to"* ]]; then
        echo "layout: $rel imports $irel ($from must not import $to)" >&2
        bad=1
      fi
    done
  done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)

((bad == 0)) && echo "layout: no top-level folder over a third of the Go lines ($total); no import climbs back up"
exit $bad
