#!/usr/bin/env bash
# Regenerates everything generated and fails when the committed files differ.
# bpf2go output depends on the clang version: the pinned one is Debian 12's clang 14 (`make deps` installs it);
# without it the check fails rather than pass unchecked.
set -euo pipefail
cd "$(dirname "$0")/.."

generated=(bpf test/harness/pktgen config/crd config/rbac config/webhook config/default api charts/network-operator/files)
before=$(git status --porcelain -- "${generated[@]}" ; git diff -- "${generated[@]}" | sha256sum)

if ! command -v clang >/dev/null || ! clang --version | grep -q 'version 14\.'; then
  echo "check-generated: clang 14 is missing (make deps installs it): cannot check the bpf2go objects" >&2
  exit 1
fi
make -s generate-bpf
make -s generate-k8s

after=$(git status --porcelain -- "${generated[@]}" ; git diff -- "${generated[@]}" | sha256sum)
if [[ "$before" != "$after" ]]; then
  echo "check-generated: generated files are stale; run 'make generate' and commit:" >&2
  git status --porcelain -- "${generated[@]}" >&2
  exit 1
fi
echo "check-generated: generated files are fresh"
