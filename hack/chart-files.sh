#!/usr/bin/env bash
# Copies the generated manifests the chart is built from (CRDs, the roles from the code's RBAC markers, the webhook
# configuration) into charts/network-operator/files, so the chart and config/ never disagree. Run by
# `make generate`; hack/check-generated.sh fails when the copies are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
dst=charts/network-operator/files
rm -rf "$dst/crds" "$dst/rbac" "$dst/webhook"
mkdir -p "$dst/crds" "$dst/rbac" "$dst/webhook"
cp config/crd/bases/*.yaml "$dst/crds/"
cp config/rbac/operator/role.yaml "$dst/rbac/operator.yaml"
cp config/rbac/agent/role.yaml "$dst/rbac/agent.yaml"
cp config/webhook/manifests.yaml "$dst/webhook/manifests.yaml"
