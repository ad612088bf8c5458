#!/usr/bin/env bash
# Prints the directory of the FRR image's root file system unpacked: Debian 13's FRR 10.3, the FRR that ships
# (test/harness/images' recipe, pinned versions), built once with mmdebstrap (~30 s, root) from the mirror of this
# machine's own apt sources and cached by recipe. The tests, the processes demo and the benchmarks run their
# FRR chrooted from it (pkg/frr/frrproc.Tools), never the host's. Logs go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/tools/ ./hack/tools/imagebuild
exec bin/tools/imagebuild -frr-root
