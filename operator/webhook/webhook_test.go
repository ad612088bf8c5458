/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package webhook_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/webhook"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// One control plane for the package: the API server with the CRDs, the webhooks served from this process.
var shared = testenv.Shared{Options: testenv.Options{Webhooks: webhook.Options{}.Setup}}

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

var kinds = map[string]string{
	"vrf":  "VRFRouteConfiguration",
	"l2":   "Layer2NetworkConfiguration",
	"bgpp": "BGPPeering",
	"taas": "RoutingTable",
	"mt":   "MirrorTarget",
	"ms":   "MirrorSelector",
}

// object builds an unstructured object of kind (a key of kinds) from a YAML spec: unstructured, so the API
// server gets exactly the bad input (including values Go types cannot hold).
func object(t *testing.T, kind, name, spec string) *unstructured.Unstructured {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatalf("spec of %s: %v", name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": s}}
	u.SetAPIVersion(v1.GroupVersion.String())
	u.SetKind(kinds[kind])
	u.SetName(name)
	return u
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// storedNames lists the names of all stored objects of a kind.
func storedNames(t *testing.T, kind string) []string {
	t.Helper()
	env := shared.Get(t)
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(v1.GroupVersion.WithKind(kinds[kind] + "List"))
	if err := env.Client.List(ctxT(t), l); err != nil {
		t.Fatalf("list %s: %v", kinds[kind], err)
	}
	var names []string
	for _, o := range l.Items {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	return names
}

// createSamples creates config/samples in dependency order: VRFs, Layer2 networks, peerings.
func createSamples(t *testing.T) map[string][]string {
	t.Helper()
	env := shared.Get(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	created := map[string][]string{}
	for _, f := range []string{"vrfrouteconfiguration", "layer2networkconfiguration", "bgppeering"} {
		data, err := os.ReadFile(filepath.Join(root, "config", "samples", "network_v1alpha1_"+f+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				break
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := env.Client.Create(ctxT(t), u); err != nil {
				t.Fatalf("sample %s %s rejected: %v", u.GetKind(), u.GetName(), err)
			}
			created[u.GetKind()] = append(created[u.GetKind()], u.GetName())
		}
	}
	if len(created["VRFRouteConfiguration"]) < 2 || len(created["Layer2NetworkConfiguration"]) < 1 || len(created["BGPPeering"]) < 1 {
		t.Fatalf("samples incomplete: %v", created)
	}
	return created
}

// rejection is one bad object and what its rejection must say.
type rejection struct {
	kind, spec string
	// path and value must both appear in the API server's message.
	path, value string
	// by says which layer rejects: "schema" (OpenAPI/CEL in the CRD) or "webhook".
	by string
}

func TestAdmission(t *testing.T) {
	env := shared.Get(t)
	createSamples(t)

	good := []struct{ kind, name, spec string }{
		{"vrf", "good-12-byte-name", `{vrf: tenant-abcde, vni: 3001, seq: 10, import: [{cidr: "fd00::/8", ge: 128, le: 128, action: deny}]}`},
		{"vrf", "good-no-vni", `{vrf: cluster, seq: 10, export: [{cidr: "192.0.2.0/24", action: permit}]}`},
		{"l2", "good-cluster-vrf", `{id: 200, vni: 100200, vrf: cluster}`},
		{"bgpp", "good-loopback", `{loopbackPeer: {ips: ["10.30.0.1", "fd00:30::1"]}, remoteASN: 4200000000, holdTime: 3s, keepaliveTime: 1s}`},
		// Any apply order: references to objects that do not exist yet are admitted; the operator holds them back.
		{"l2", "good-vrf-later", `{id: 301, vni: 6101, vrf: tenant-z}`},
		{"bgpp", "good-l2-later", `{peeringVlan: {name: l2-z}, remoteASN: 65100}`},
		{"vrf", "good-upper-case", `{vrf: Tenant_U, vni: 3002, seq: 10, communities: ["65000:1 65000:2 additive"]}`},
		{"taas", "good-table", `{tableId: 100}`},
		{"mt", "good-target", `{type: l3gre, destinationIP: 203.0.113.10, destinationVrf: tenant-z, sourceLoopback: lo.mir}`},
		{"ms", "good-selector", `{direction: ingress, mirrorTarget: {kind: MirrorTarget, name: later}, mirrorSource: {kind: Layer2NetworkConfiguration, name: later}}`},
	}
	for _, g := range good {
		if err := env.Client.Create(ctxT(t), object(t, g.kind, g.name, g.spec)); err != nil {
			t.Fatalf("good %s %s rejected: %v", kinds[g.kind], g.name, err)
		}
	}
	before := map[string][]string{}
	for k := range kinds {
		before[k] = storedNames(t, k)
	}

	bad := []rejection{
		// VRFRouteConfiguration
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, import: [{cidr: "10.0.0.1/24", action: permit}]}`, "spec.import[0].cidr", `"10.0.0.1/24": not a network address (did you mean 10.0.0.0/24?)`, "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, export: [{cidr: "10.0.0.0/33", action: permit}]}`, "spec.export[0].cidr", `10.0.0.0/33`, "schema"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, import: [{cidr: "10.0.0.0/16", ge: 8, action: permit}]}`, "spec.import[0].ge", "8", "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, import: [{cidr: "10.0.0.0/16", le: 33, action: permit}]}`, "spec.import[0].le", "33", "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, import: [{cidr: "fd00::/8", le: 129, action: permit}]}`, "spec.import[0].le", "129", "schema"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, import: [{cidr: "10.0.0.0/16", ge: 28, le: 24, action: permit}]}`, "spec.import[0].ge", "28", "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, import: [{cidr: "10.0.0.0/16", seq: 7, action: permit}, {cidr: "10.1.0.0/16", seq: 7, action: permit}]}`, "spec.import[1].seq", "7", "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, import: [{cidr: "10.0.0.0/16", action: allow}]}`, "spec.import[0].action", `"allow"`, "schema"},
		{"vrf", `{vrf: tenant-abcdefgh, vni: 5001, seq: 10}`, "spec.vrf", "tenant-abcdefgh", "schema"},
		{"vrf", `{vrf: Tenant.A, vni: 5001, seq: 10}`, "spec.vrf", `"Tenant.A"`, "schema"},
		{"vrf", `{vrf: t1, seq: 10}`, "spec.vni", "VRF t1 needs its L3 VNI: write spec.vni", "schema"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, communities: ["65000:1 65536:2"]}`, "spec.communities[0]", `"65536:2"`, "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, sbrPrefixes: ["10.1.1.1/16"]}`, "spec.sbrPrefixes[0]", `did you mean 10.1.0.0/16`, "webhook"},
		{"vrf", `{vrf: t1, vni: 0, seq: 10}`, "spec.vni", "0", "schema"},
		{"vrf", `{vrf: t1, vni: 16777216, seq: 10}`, "spec.vni", "16777216", "schema"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 0}`, "spec.seq", "0", "schema"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 65535}`, "spec.seq", "65535", "schema"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, mtu: 999}`, "spec.mtu", "999", "schema"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, routeTarget: "70000:70000"}`, "spec.routeTarget", `"70000:70000"`, "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, communities: ["65536:1"]}`, "spec.communities[0]", `"65536:1"`, "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, aggregate: ["10.100.1.0/16"]}`, "spec.aggregate[0]", `"10.100.1.0/16"`, "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, nodeSelector: {matchExpressions: [{key: zone, operator: Near}]}}`, "spec.nodeSelector.matchExpressions[0].operator", `"Near"`, "webhook"},
		{"vrf", `{vrf: t1, vni: 5001, seq: 10, nodeSelector: {matchLabels: {"a/b/c": x}}}`, "spec.nodeSelector.matchLabels", `"a/b/c"`, "webhook"},
		{"vrf", `{vrf: t1, vni: 100100, seq: 10}`, "spec.vni", "100100", "webhook"},
		{"vrf", `{vrf: t1, vni: 2002, seq: 10}`, "spec.vni", "2002", "webhook"},
		{"vrf", `{vrf: tenant-a, vni: 2001, seq: 10}`, "spec.seq", "10", "webhook"},
		{"vrf", `{vrf: tenant-a, vni: 2009, seq: 30}`, "spec.vni", "2009", "webhook"},
		// Layer2NetworkConfiguration
		{"l2", `{id: 0, vni: 6001}`, "spec.id", "0", "schema"},
		{"l2", `{id: 4095, vni: 6001}`, "spec.id", "4095", "schema"},
		{"l2", `{id: 300, vni: 16777216}`, "spec.vni", "16777216", "schema"},
		{"l2", `{id: 300, vni: 6001, mtu: 9001}`, "spec.mtu", "9001", "schema"},
		{"l2", `{id: 300, vni: 6001, anycastGateways: ["10.50.0.1/24"]}`, "spec.anycastMac", "10.50.0.1/24", "schema"},
		{"l2", `{id: 300, vni: 6001, anycastMac: "02:00:00:00:00"}`, "spec.anycastMac", `"02:00:00:00:00"`, "schema"},
		{"l2", `{id: 300, vni: 6001, anycastMac: "01:00:5e:00:00:01"}`, "spec.anycastMac", `"01:00:5e:00:00:01"`, "webhook"},
		{"l2", `{id: 300, vni: 6001, anycastMac: "02:00:00:00:00:01", anycastGateways: ["10.50.0.0/24"]}`, "spec.anycastGateways[0]", `"10.50.0.0/24"`, "webhook"},
		{"l2", `{id: 300, vni: 2001}`, "spec.vni", "2001", "webhook"},
		{"l2", `{id: 100, vni: 6001}`, "spec.id", "100", "webhook"},
		{"l2", `{id: 300, vni: 6001, vrf: tenant-abcdefgh}`, "spec.vrf", `"tenant-abcdefgh"`, "webhook"},
		{"l2", `{id: 300, vni: 6001, nodeSelector: {matchLabels: {rack: "a b"}}}`, "spec.nodeSelector.matchLabels", `"a b"`, "webhook"},
		// BGPPeering
		{"bgpp", `{remoteASN: 65100}`, "spec", "got neither", "schema"},
		{"bgpp", `{peeringVlan: {name: tenant-a-workers}, loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100}`, "spec", "tenant-a-workers", "schema"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 0}`, "spec.remoteASN", "0", "schema"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 4294967295}`, "spec.remoteASN", "4294967295", "schema"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 23456}`, "spec.remoteASN", "23456", "webhook"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, holdTime: 2s, keepaliveTime: 1s}`, "spec.holdTime", `"2s"`, "webhook"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, holdTime: 90s, keepaliveTime: 100s}`, "spec.keepaliveTime", "100s", "schema"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, holdTime: abc, keepaliveTime: 1s}`, "spec.holdTime", `"abc"`, "schema"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, holdTime: 9s, keepaliveTime: 1500ms}`, "spec.keepaliveTime", `"1.5s"`, "webhook"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, keepaliveTime: 30s}`, "spec.holdTime", "30s", "webhook"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, maximumPrefixes: 0}`, "spec.maximumPrefixes", "0", "schema"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, passwordSecretRef: {namespace: Kube_System, name: s, key: k}}`, "spec.passwordSecretRef.namespace", `"Kube_System"`, "webhook"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9/32"]}, remoteASN: 65100}`, "spec.loopbackPeer.ips[0]", `"10.30.0.9/32"`, "webhook"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.9"]}, remoteASN: 65100, import: [{cidr: "10.30.0.1/24", action: permit}]}`, "spec.import[0].cidr", "10.30.0.1/24", "webhook"},
		{"bgpp", `{loopbackPeer: {ipAddresses: ["10.30.0.9"]}, remoteASN: 65100}`, "spec.loopbackPeer", "ipAddresses is now spelt ips, the name das-schiff uses: write ips: [10.30.0.9]", "schema"},
		{"bgpp", `{loopbackPeer: {}, remoteASN: 65100}`, "spec.loopbackPeer", "loopbackPeer needs ips", "schema"},
		// RoutingTable, MirrorTarget, MirrorSelector
		{"taas", `{tableId: 254}`, "spec.tableId", "254 and 255 are the kernel", "schema"},
		{"taas", `{tableId: 100}`, "spec.tableId", `RoutingTable "good-table"`, "webhook"},
		{"mt", `{type: vxlan, destinationIP: 203.0.113.10, destinationVrf: t1, sourceLoopback: lo.mir}`, "spec.type", `"vxlan"`, "schema"},
		{"mt", `{type: l3gre, destinationIP: 224.0.0.1, destinationVrf: t1, sourceLoopback: lo.mir}`, "spec.destinationIP", `"224.0.0.1"`, "webhook"},
		{"ms", `{direction: ingress, mirrorTarget: {kind: Collector, name: c}, mirrorSource: {kind: Layer2NetworkConfiguration, name: l}}`, "spec.mirrorTarget.kind", "Collector", "schema"},
		{"ms", `{direction: ingress, mirrorTarget: {kind: MirrorTarget, name: c}, mirrorSource: {kind: Layer2NetworkConfiguration, name: l}, trafficMatch: {dstPort: 80}}`, "spec.trafficMatch.dstPort", "80", "webhook"},
		{"bgpp", `{peeringVlan: {name: tenant-a-workers}, remoteASN: 65100}`, "spec.peeringVlan.name", `"tenant-a-workers"`, "webhook"},
		{"bgpp", `{peeringVlan: {name: good-cluster-vrf}, remoteASN: 65100}`, "spec.peeringVlan.name", `"good-cluster-vrf"`, "webhook"},
		{"bgpp", `{loopbackPeer: {ips: ["10.30.0.1"]}, remoteASN: 65100}`, "spec.loopbackPeer.ips[0]", `"10.30.0.1"`, "webhook"},
	}
	if len(bad) < 40 {
		t.Fatalf("only %d bad objects, the contract is at least 40", len(bad))
	}
	for i, b := range bad {
		name := fmt.Sprintf("bad-%02d", i)
		t.Run(fmt.Sprintf("%s/%s/%s", name, kinds[b.kind], b.path), func(t *testing.T) {
			err := env.Client.Create(ctxT(t), object(t, b.kind, name, b.spec))
			if err == nil {
				t.Fatalf("accepted %s %s", kinds[b.kind], b.spec)
			}
			checkRejection(t, err, b.path, b.value, b.by)
			u := object(t, b.kind, name, "{}")
			if err := env.Client.Get(ctxT(t), client.ObjectKeyFromObject(u), u); !apierrors.IsNotFound(err) {
				t.Errorf("rejected object was stored (get: %v)", err)
			}
		})
	}

	t.Run("rejected updates keep the stored object", func(t *testing.T) {
		updates := []struct {
			kind, name, path string
			set              func(*unstructured.Unstructured)
			value, by        string
		}{
			{"vrf", "tenant-b", "spec.seq", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(65535), "spec", "seq")
			}, "65535", "schema"},
			{"vrf", "tenant-b", "spec.seq", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "tenant-a", "spec", "vrf")
				_ = unstructured.SetNestedField(u.Object, int64(2001), "spec", "vni")
			}, "10", "webhook"},
			{"l2", "tenant-a-workers", "spec.anycastGateways[0]", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedStringSlice(u.Object, []string{"10.100.0.0/24"}, "spec", "anycastGateways")
			}, `"10.100.0.0/24"`, "webhook"},
		}
		for _, up := range updates {
			u := object(t, up.kind, up.name, "{}")
			if err := env.Client.Get(ctxT(t), client.ObjectKeyFromObject(u), u); err != nil {
				t.Fatal(err)
			}
			orig := u.DeepCopy()
			up.set(u)
			err := env.Client.Update(ctxT(t), u)
			if err == nil {
				t.Fatalf("update of %s %s accepted", kinds[up.kind], up.name)
			}
			checkRejection(t, err, up.path, up.value, up.by)
			got := object(t, up.kind, up.name, "{}")
			if err := env.Client.Get(ctxT(t), client.ObjectKeyFromObject(got), got); err != nil {
				t.Fatal(err)
			}
			if got.GetResourceVersion() != orig.GetResourceVersion() {
				t.Errorf("%s %s changed by a rejected update", kinds[up.kind], up.name)
			}
		}
	})

	for k := range kinds {
		if after := storedNames(t, k); !slices.Equal(after, before[k]) {
			t.Errorf("%s: stored %v after the rejections, want exactly %v", kinds[k], after, before[k])
		}
	}
}

// checkRejection asserts the API server answered 422 Invalid (schema) or a webhook denial whose message names
// the field path and the value.
func checkRejection(t *testing.T, err error, path, value, by string) {
	t.Helper()
	msg := err.Error()
	t.Log(msg)
	viaWebhook := strings.Contains(msg, `admission webhook "`)
	switch {
	case by == "webhook" && !viaWebhook:
		t.Errorf("want a webhook rejection, got: %s", msg)
	case by == "schema" && viaWebhook:
		t.Errorf("want a schema (OpenAPI/CEL) rejection, got: %s", msg)
	}
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Errorf("want 422 Invalid or 403 Forbidden, got %v: %s", apierrors.ReasonForError(err), msg)
	}
	if !strings.Contains(msg, path+":") {
		t.Errorf("message does not name the field %s: %s", path, msg)
	}
	if !strings.Contains(msg, value) {
		t.Errorf("message does not name the value %s: %s", value, msg)
	}
}
