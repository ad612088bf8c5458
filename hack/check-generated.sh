#!/usr/bin/env bash
# Regenerates everything generated and fails when the committed files differ.
# bpf2go output depends on the clang version; the check runs where the pinned clang (Debian 12's 14) exists.
set -euo pipefail
cd "$(dirname "$0")/.."

generated=(bpf config/crd config/rbac config/webhook api)
before=$(git status --porcelain -- "${generated[@]}" ; git diff -- "${generated[@]}" | sha256sum)

if command -v clang >/dev/null && clang --version | grep -q 'version 14\.'; then
  make -s generate-bpf
else
  echo "check-generated: clang 14 not found, skipping the bpf2go freshness check" >&2
fi
make -s generate-k8s

after=$(git status --porcelain -- "${generated[@]}" ; git diff -- "${generated[@]}" | sha256sum)
if [[ "$before" != "$after" ]]; then
  echo "check-generated: generated files are stale; run 'make generate' and commit:" >&2
  git status --porcelain -- "${generated[@]}" >&2
  exit 1
fi
echo "check-generated: generated files are fresh"
