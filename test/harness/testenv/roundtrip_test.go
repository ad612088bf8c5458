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

package testenv_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestGeneratedKindsRoundTrip starts a control plane (no webhooks) and checks that the operator-generated kinds
// survive the API server unchanged: the schemaless revision snapshot is not pruned, NodeNetworkConfig's spec and
// its status subresource keep every field.
func TestGeneratedKindsRoundTrip(t *testing.T) {
	_, err := testenv.AssetsDir()
	testreq.Available(t, "API-server binaries (kube-apiserver, etcd)", err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})

	spec := v1.NetworkConfigRevisionSpec{
		Sequence: 1,
		VRF: []v1.VRFRevision{{Name: "tenant-a", VRFRouteConfigurationSpec: v1.VRFRouteConfigurationSpec{
			VRF: "tenant-a", VNI: ptr.To[int32](2001), Seq: 10,
			Import:       []v1.PrefixItem{{CIDR: "10.0.0.0/8", LE: ptr.To[int32](24), Action: v1.PrefixActionPermit}},
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "a"}},
		}}},
		Layer2: []v1.Layer2Revision{{Name: "l2", Layer2NetworkConfigurationSpec: v1.Layer2NetworkConfigurationSpec{
			ID: 100, VNI: 100100, MTU: 1500, AnycastMac: "02:00:00:00:00:01", AnycastGateways: []string{"10.1.0.1/24"},
		}}},
		BGP: []v1.BGPRevision{{Name: "p", BGPPeeringSpec: v1.BGPPeeringSpec{
			LoopbackPeer: &v1.BGPPeeringLoopback{IPAddresses: []string{"10.2.0.1"}}, RemoteASN: 65100,
			HoldTime: &metav1.Duration{Duration: 90 * time.Second}, KeepaliveTime: &metav1.Duration{Duration: 30 * time.Second},
			PasswordSecretRef: &v1.SecretKeyReference{Namespace: "kube-system", Name: "s", Key: "k"},
		}}},
	}
	if spec.Revision, err = spec.ContentHash(); err != nil {
		t.Fatal(err)
	}
	ncr := &v1.NetworkConfigRevision{ObjectMeta: metav1.ObjectMeta{Name: "rev-1"}, Spec: spec}
	if err := env.Client.Create(ctx, ncr); err != nil {
		t.Fatalf("create NetworkConfigRevision: %v", err)
	}
	ncr.Status = v1.NetworkConfigRevisionStatus{Phase: v1.RevisionRolling, Total: 3, Updated: 1, Pending: 2}
	if err := env.Client.Status().Update(ctx, ncr); err != nil {
		t.Fatalf("update NetworkConfigRevision status: %v", err)
	}
	var gotNCR v1.NetworkConfigRevision
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "rev-1"}, &gotNCR); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(gotNCR.Spec, spec) {
		t.Errorf("revision spec changed by the API server:\n got %+v\nwant %+v", gotNCR.Spec, spec)
	}
	if h, _ := gotNCR.Spec.ContentHash(); h != spec.Revision {
		t.Errorf("content hash after the round trip %s, want %s", h, spec.Revision)
	}
	if gotNCR.Status.Phase != v1.RevisionRolling || gotNCR.Status.Updated != 1 || gotNCR.Status.Total != 3 {
		t.Errorf("revision status = %+v", gotNCR.Status)
	}

	nnc := &v1.NodeNetworkConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec: v1.NodeNetworkConfigSpec{
			Revision: spec.Revision,
			Underlay: v1.UnderlaySpec{ASN: 65001, RouterID: "192.0.2.1", VTEPAddress: "192.0.2.1",
				Interfaces: []string{"eth0"}, Neighbors: []v1.UnderlayNeighbor{{Interface: "eth0", RemoteASN: "external"}}},
			VRFs: []v1.NodeVRF{{Name: "tenant-a", ID: 1, TableID: 1001, VNI: 2001, RouteTargets: []string{"65000:2001"},
				Leaks: []v1.VRFLeak{{Source: "tenant-a", Seq: 10,
					Import: []v1.NodePrefixItem{{CIDR: "10.0.0.0/8", Seq: 10, LE: ptr.To[int32](24), Action: v1.PrefixActionPermit}}}}}},
			Layer2s:  []v1.NodeLayer2{{Name: "l2", VLAN: 100, VNI: 100100, MTU: 1500, VRF: "tenant-a"}},
			BGPPeers: []v1.NodeBGPPeer{{Name: "p", RemoteASN: 65100, Addresses: []string{"10.2.0.1"}, PasswordSecretRef: &v1.SecretKeyReference{Namespace: "kube-system", Name: "s", Key: "k"}}},
			DataPlane: v1.DataPlaneSpec{Strict: true, Interfaces: []v1.DataPlaneInterface{
				{Name: "eth1", VRF: "tenant-a", Mode: v1.ModeRoute, Hook: v1.HookAuto},
				{Name: "eth2", Mode: v1.ModeRedirect, RedirectTarget: "eth3", Hook: v1.HookTC},
			}},
		},
	}
	nnc.Spec.ExpectedMapVersion = nnc.Spec.MapVersion()
	want := nnc.Spec.DeepCopy()
	if err := env.Client.Create(ctx, nnc); err != nil {
		t.Fatalf("create NodeNetworkConfig: %v", err)
	}
	nnc.Status = v1.NodeNetworkConfigStatus{
		AppliedRevision: spec.Revision, MapVersion: want.ExpectedMapVersion,
		Interfaces: []v1.InterfaceStatus{{Name: "eth1", Mode: v1.AttachTCX}},
		Conditions: []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Applied",
			LastTransitionTime: metav1.Now()}},
	}
	if err := env.Client.Status().Update(ctx, nnc); err != nil {
		t.Fatalf("update NodeNetworkConfig status: %v", err)
	}
	var got v1.NodeNetworkConfig
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "node-1"}, &got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Spec, *want) {
		t.Errorf("node spec changed by the API server:\n got %+v\nwant %+v", got.Spec, *want)
	}
	if got.Spec.MapVersion() != got.Spec.ExpectedMapVersion {
		t.Error("MapVersion of the stored spec differs from expectedMapVersion")
	}
	if got.Status.MapVersion != want.ExpectedMapVersion || len(got.Status.Conditions) != 1 || got.Status.Interfaces[0].Mode != v1.AttachTCX {
		t.Errorf("node status = %+v", got.Status)
	}

	// A data-plane interface name longer than IFNAMSIZ-1 is refused by the schema.
	bad := nnc.DeepCopy()
	bad.ObjectMeta = metav1.ObjectMeta{Name: "node-2"}
	bad.Spec.DataPlane.Interfaces[0].Name = "a-very-long-ifname"
	if err := env.Client.Create(ctx, bad); err == nil {
		t.Error("accepted a 18-byte interface name")
	}
}
