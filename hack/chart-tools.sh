#!/usr/bin/env bash
# Builds helm and kustomize from their Go modules at pinned versions (no prebuilt binaries are reachable here),
# caches them keyed by version, and prints the directory holding both on stdout. Logs go to stderr.
#
#   hack/chart-tools.sh [<helm-version> <kustomize-version>]     default: the versions below
#
# Cold on 2 cores: ~4-5 min (helm is the slow one); cached: instant.
set -euo pipefail

helm_version=${1:-${HELM_VERSION:-4.3.1}}
kustomize_version=${2:-${KUSTOMIZE_VERSION:-5.8.2}}
log() { echo "chart-tools: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[[ $helm_version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "helm version '$helm_version' is not X.Y.Z"
[[ $kustomize_version =~ ^5\.[0-9]+\.[0-9]+$ ]] || die "kustomize version '$kustomize_version' is not 5.Y.Z"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/network-operator
out=$cache/chart-tools/helm-$helm_version-kustomize-$kustomize_version
if [[ -x $out/helm && -x $out/kustomize ]]; then
  log "using cached $out"
  echo "$out"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.chart-tools.lock"
flock 9
if [[ ! -x $out/helm || ! -x $out/kustomize ]]; then
  start=$SECONDS
  tmp=$(mktemp -d "$cache/.chart-tools.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  major=${helm_version%%.*}
  log "building helm v$helm_version and kustomize v$kustomize_version"
  # `go install pkg@version` builds a module as published, outside any project module.
  GOBIN=$tmp CGO_ENABLED=0 GOFLAGS=-trimpath GOWORK=off go install \
    -ldflags "-s -w -X helm.sh/helm/v$major/internal/version.version=v$helm_version" \
    "helm.sh/helm/v$major/cmd/helm@v$helm_version" >&2 || die "building helm failed"
  GOBIN=$tmp CGO_ENABLED=0 GOFLAGS=-trimpath GOWORK=off go install -ldflags "-s -w" \
    "sigs.k8s.io/kustomize/kustomize/v5@v$kustomize_version" >&2 || die "building kustomize failed"
  "$tmp/helm" version >&2 || die "built helm does not run"
  "$tmp/kustomize" version >&2 || die "built kustomize does not run"
  mkdir -p "$out"
  mv "$tmp/helm" "$tmp/kustomize" "$out/"
  log "built in $((SECONDS - start)) s: $out"
fi
echo "$out"
