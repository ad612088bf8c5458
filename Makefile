# network-operator: the two commands a user needs are `make demo` and `make test`.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO            ?= go
PKGS          ?= ./...
TEST_TIMEOUT  ?= 25m
# Kubernetes control-plane binaries for envtest, built from source by hack/envtest-assets.sh and cached.
ENVTEST_K8S_VERSION  ?= 1.37.1
ENVTEST_ETCD_VERSION ?= 3.7.0
# helm and kustomize, built from their Go modules by hack/chart-tools.sh and cached.
HELM_VERSION      ?= 4.3.1
KUSTOMIZE_VERSION ?= 5.8.2
# Container images (make images): archives in IMAGES_DIR named IMAGE_REPO/NAME:IMAGE_TAG (default tag: git describe).
IMAGES_DIR ?= _out/images
IMAGE_REPO ?= localhost/network-operator
IMAGE_TAG  ?=
IMAGES     ?= network-operator network-agent frr pause

.PHONY: all build deps images generate generate-bpf generate-k8s check-generated envtest k8s-binaries chart-tools frr-root test test-kernel test-unit fuzz bench demo demo-processes demo-up demo-down demo-dataplane lint clean

all: build

build:
	$(GO) build ./...

## deps: Debian packages, bpffs/tracefs mounts (idempotent).
deps:
	./hack/install-deps.sh

## images: OCI archives of the operator, the agent and FRR in $(IMAGES_DIR) for `ctr -n k8s.io images import`,
## without docker or a registry; reproducible (SOURCE_DATE_EPOCH overrides the commit time). FRR's root file system
## is built once with mmdebstrap (~1.5-2.5 min) and cached. See docs/images.md.
images: deps
	$(GO) build -o bin/tools/ ./hack/tools/imagebuild
	bin/tools/imagebuild -out $(IMAGES_DIR) -repo $(IMAGE_REPO) $(if $(IMAGE_TAG),-tag $(IMAGE_TAG)) $(IMAGES)

## generate: bpf2go objects, deepcopy, CRDs, RBAC and webhook manifests.
generate: generate-bpf generate-k8s

generate-bpf:
	$(GO) generate ./bpf/... ./test/harness/pktgen

generate-k8s:
	$(GO) tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(GO) tool controller-gen crd webhook paths=./api/... paths=./operator/... \
		output:crd:artifacts:config=config/crd/bases output:webhook:artifacts:config=config/webhook
	@# Least privilege: the operator and the agent get a ClusterRole each, from their own code's markers.
	$(GO) tool controller-gen rbac:roleName=network-operator paths=./operator/... output:rbac:artifacts:config=config/rbac/operator
	$(GO) tool controller-gen rbac:roleName=network-operator-agent paths=./agent/... output:rbac:artifacts:config=config/rbac/agent
	@# The chart is built from copies of these (charts/network-operator/files).
	./hack/chart-files.sh

## check-generated: fails when committed generated files differ from a fresh `make generate`.
check-generated:
	./hack/check-generated.sh

## envtest: builds (once, cached) kube-apiserver and etcd for the API-server tests.
envtest:
	./hack/envtest-assets.sh $(ENVTEST_K8S_VERSION) $(ENVTEST_ETCD_VERSION) >/dev/null

## k8s-binaries: builds (once, cached) kubelet, kube-controller-manager, kube-scheduler, kube-proxy, kubectl.
k8s-binaries:
	./hack/k8s-binaries.sh $(ENVTEST_K8S_VERSION) $(ENVTEST_ETCD_VERSION) >/dev/null

## chart-tools: builds (once, cached) helm and kustomize.
chart-tools:
	./hack/chart-tools.sh $(HELM_VERSION) $(KUSTOMIZE_VERSION) >/dev/null

## frr-root: builds (once, cached) the FRR image's root file system (Debian 13's FRR 10.3) and unpacks it: the
## FRR the tests, the demo and the benchmarks run.
frr-root: deps
	./hack/frr-root.sh >/dev/null

## test: installs what it needs, checks generated files and lint (vet, gofmt, deadcode), runs every test (root, namespaces, FRR, API server) with
## every prerequisite required, the fuzz target, the unprivileged tests again under -race, checks that nothing was
## left behind, and ends with one summary (hack/test.sh).
test: deps check-generated lint envtest k8s-binaries chart-tools frr-root
	NETOP_FRR_ROOT="$$(./hack/frr-root.sh)" \
		KUBEBUILDER_ASSETS="$$(./hack/envtest-assets.sh $(ENVTEST_K8S_VERSION) $(ENVTEST_ETCD_VERSION))" \
		NETOP_K8S_BINARIES="$$(./hack/k8s-binaries.sh $(ENVTEST_K8S_VERSION) $(ENVTEST_ETCD_VERSION))" \
		NETOP_CHART_TOOLS="$$(./hack/chart-tools.sh $(HELM_VERSION) $(KUSTOMIZE_VERSION))" \
		PKGS="$(PKGS)" TEST_TIMEOUT=$(TEST_TIMEOUT) FUZZTIME=20s ./hack/test.sh

## test-kernel: the kernel lane alone (make test runs it too): the tests that need VRF devices, 802.1Q or GRE, in
## Debian's own kernels under QEMU, with and without VRF devices, and the data path on Debian 12's and 13's
## kernels (hack/kernel-lane-tests.txt, test/harness/kernellane; kernels cached by version). KERNEL_SUITES=trixie
## narrows it to one suite. The real-node harness's cgroup v2 test needs the cached API-server and node binaries
## (the guest sees the host's caches).
KERNEL_SUITES ?=
test-kernel: deps envtest k8s-binaries frr-root
	$(GO) build -o bin/tools/ ./hack/tools/kernellane
	NETOP_FRR_ROOT="$$(./hack/frr-root.sh)" bin/tools/kernellane -suites "$(KERNEL_SUITES)"

## kernel-table: boot every lane kernel and rewrite docs/install.md's kernel x feature table from what each one
## reports (make test checks it).
kernel-table: deps
	$(GO) build -o bin/tools/ ./hack/tools/kernellane
	bin/tools/kernellane -only ./test/harness/kernellane -variants - -features-doc docs/install.md -update-doc

## test-unit: for a laptop without root: a test whose prerequisite is missing skips with the reason.
test-unit:
	$(GO) test -count=1 $(PKGS)

## fuzz: short coverage-guided run of the router's malformed-packet fuzz target.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzRouterMalformed$$' -fuzztime $(FUZZTIME) ./bpf/

## bench: one side-by-side table: BPF per-packet cost, iperf3 kernel vs eBPF, generation swap times, FRR apply, the
## operator rolling changes out to 1000 simulated nodes against a real API server, pod Running -> interface up on a
## real kubelet node.
bench: deps envtest k8s-binaries frr-root
	NETOP_FRR_ROOT="$$(./hack/frr-root.sh)" ./hack/bench.sh

## demo: the whole system on this machine as a user installs it: a control plane and N real kubelet nodes, the
## images imported, the chart installed with helm (operator Deployment, agent + FRR DaemonSet), an EVPN fabric,
## Prometheus; Ctrl-C tears it down. demo-up / demo-down keep it running. demo-processes: the same scenario with
## the operator and agents as plain processes (quick development loop).
demo: deps
	./hack/demo.sh

demo-processes: deps
	DEMO_INSTALL=processes ./hack/demo.sh

demo-up: deps
	./hack/demo.sh up

demo-down:
	./hack/demo.sh down

## demo-dataplane: the data plane alone (router namespace, two tenants, tables from a file), no control plane.
demo-dataplane: deps
	./hack/demo-dataplane.sh

## lint: go vet, gofmt, go.mod tidy, deadcode (production code no binary reaches), the binaries' dependencies and the layout (hack/layout.sh).
lint:
	$(GO) vet ./...
	$(GO) mod tidy -diff
	test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '_bpfel.go$$' | grep -v '^third_party/'))"
	./hack/deadcode.sh
	./hack/binary-deps.sh
	./hack/layout.sh

clean:
	rm -rf bin _out
