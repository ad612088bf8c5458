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

package v1alpha1

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	"github.com/network-operator/network-operator/test/harness/golden"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func sampleNodeSpec() NodeNetworkConfigSpec {
	return NodeNetworkConfigSpec{
		Revision: "rev-1",
		Underlay: UnderlaySpec{ASN: 65001, RouterID: "192.0.2.1", VTEPAddress: "192.0.2.1"},
		VRFs: []NodeVRF{
			{Name: "tenant-a", ID: 1, TableID: 1001, VNI: 2001, MTU: 9000},
			{Name: "tenant-b", ID: 2, TableID: 1002, VNI: 2002},
		},
		BGPPeers: []NodeBGPPeer{{Name: "p", RemoteASN: 65100}},
		DataPlane: DataPlaneSpec{
			Strict: false,
			Interfaces: []DataPlaneInterface{
				{Name: "eth1", VRF: "tenant-a", Mode: ModeRoute, Hook: HookAuto},
				{Name: "eth2", VLAN: 10, VRF: "tenant-b", Mode: ModeRedirect, RedirectTarget: "eth3", Hook: HookTC},
			},
		},
	}
}

func TestMapVersionGolden(t *testing.T) {
	s := sampleNodeSpec()
	var buf bytes.Buffer
	writeMapVersion(&buf, &s)
	buf.WriteString("sha256 " + s.MapVersion() + "\n")
	// A change here changes every node's map version: bump mapVersionFormat when it is intended.
	golden.Assert(t, filepath.Join("testdata", "mapversion.golden"), buf.Bytes())
	if len(s.MapVersion()) != 64 {
		t.Errorf("MapVersion %q is not 64 hex characters", s.MapVersion())
	}
}

func TestMapVersionCoversDataPlaneOnly(t *testing.T) {
	base := sampleNodeSpec()
	v0 := base.MapVersion()
	tests := []struct {
		name    string
		mut     func(*NodeNetworkConfigSpec)
		changed bool
	}{
		{"reordered interfaces and VRFs", func(s *NodeNetworkConfigSpec) {
			s.VRFs[0], s.VRFs[1] = s.VRFs[1], s.VRFs[0]
			s.DataPlane.Interfaces[0], s.DataPlane.Interfaces[1] = s.DataPlane.Interfaces[1], s.DataPlane.Interfaces[0]
		}, false},
		{"empty mode is route", func(s *NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].Mode = "" }, false},
		{"hook", func(s *NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].Hook = HookXDP }, false},
		{"revision", func(s *NodeNetworkConfigSpec) { s.Revision = "rev-2" }, false},
		{"MTU", func(s *NodeNetworkConfigSpec) { s.VRFs[0].MTU = 1500 }, false},
		{"BGP", func(s *NodeNetworkConfigSpec) { s.BGPPeers = nil }, false},
		{"leaks", func(s *NodeNetworkConfigSpec) { s.VRFs[0].Leaks = []VRFLeak{{Source: "x", Seq: 1}} }, false},
		{"strict", func(s *NodeNetworkConfigSpec) { s.DataPlane.Strict = true }, true},
		{"sbr prefixes (the router's sbr_table)", func(s *NodeNetworkConfigSpec) { s.VRFs[0].SBRPrefixes = []string{"10.9.0.0/16"} }, true},

		{"vrf id", func(s *NodeNetworkConfigSpec) { s.VRFs[0].ID = 3 }, true},
		{"table id", func(s *NodeNetworkConfigSpec) { s.VRFs[1].TableID = 7 }, true},
		{"vni", func(s *NodeNetworkConfigSpec) { s.VRFs[1].VNI = 7 }, true},
		{"vrf name", func(s *NodeNetworkConfigSpec) { s.VRFs[1].Name = "tenant-c" }, true},
		{"interface vrf", func(s *NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].VRF = "tenant-b" }, true},
		{"interface mode", func(s *NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].Mode = ModePass }, true},
		{"interface vlan", func(s *NodeNetworkConfigSpec) { s.DataPlane.Interfaces[1].VLAN = 11 }, true},
		{"redirect target", func(s *NodeNetworkConfigSpec) { s.DataPlane.Interfaces[1].RedirectTarget = "eth4" }, true},
		{"interface added", func(s *NodeNetworkConfigSpec) {
			s.DataPlane.Interfaces = append(s.DataPlane.Interfaces, DataPlaneInterface{Name: "eth9"})
		}, true},
		{"name boundary cannot alias", func(s *NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].Name = "eth1\" vlan=0" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sampleNodeSpec()
			tt.mut(&s)
			if got := s.MapVersion(); (got != v0) != tt.changed {
				t.Errorf("changed = %v, want %v", got != v0, tt.changed)
			}
			if base.MapVersion() != v0 {
				t.Fatal("MapVersion modified its receiver or is not deterministic")
			}
		})
	}
}

func TestContentHash(t *testing.T) {
	a := VRFRevision{Name: "a", VRFRouteConfigurationSpec: VRFRouteConfigurationSpec{VRF: "tenant-a", Seq: 10,
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"z": "1", "a": "2"}}}}
	b := VRFRevision{Name: "b", VRFRouteConfigurationSpec: VRFRouteConfigurationSpec{VRF: "tenant-b", Seq: 10}}
	l := Layer2Revision{Name: "l", Layer2NetworkConfigurationSpec: Layer2NetworkConfigurationSpec{ID: 10, VNI: 10, MTU: 1500}}
	hash := func(s NetworkConfigRevisionSpec) string {
		t.Helper()
		h, err := s.ContentHash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h0 := hash(NetworkConfigRevisionSpec{VRF: []VRFRevision{a, b}, Layer2: []Layer2Revision{l}})
	if len(h0) != 64 {
		t.Fatalf("hash %q is not 64 hex characters", h0)
	}
	if h := hash(NetworkConfigRevisionSpec{VRF: []VRFRevision{b, a}, Layer2: []Layer2Revision{l}, BGP: []BGPRevision{},
		Revision: "x", Sequence: 42}); h != h0 {
		t.Error("hash depends on order, empty-vs-nil lists, revision or sequence")
	}
	unsorted := NetworkConfigRevisionSpec{VRF: []VRFRevision{b, a}}
	hash(unsorted)
	if unsorted.VRF[0].Name != "b" {
		t.Error("ContentHash modified its receiver")
	}
	b2 := b
	b2.Seq = 11
	if hash(NetworkConfigRevisionSpec{VRF: []VRFRevision{a, b2}, Layer2: []Layer2Revision{l}}) == h0 {
		t.Error("hash ignores a changed seq")
	}
	if hash(NetworkConfigRevisionSpec{VRF: []VRFRevision{a, b}}) == h0 {
		t.Error("hash ignores a removed Layer2 network")
	}
}

func TestEffectiveSeq(t *testing.T) {
	if got := (PrefixItem{}).EffectiveSeq(0); got != 1 {
		t.Errorf("implicit seq at 0 = %d, want 1 (das-schiff: index+1)", got)
	}
	if got := (PrefixItem{Seq: 7}).EffectiveSeq(3); got != 7 {
		t.Errorf("explicit seq = %d, want 7", got)
	}
}

func TestSplitCommunities(t *testing.T) {
	s := VRFRouteConfigurationSpec{Communities: []string{"65000:1 65000:2", " 65000:2\tno-export additive"}, Community: new("65000:3")}
	got, additive := s.AllCommunities()
	if want := []string{"65000:1", "65000:2", "no-export", "65000:3"}; !slices.Equal(got, want) || !additive {
		t.Errorf("AllCommunities = %q, %t; want %q, true", got, additive, want)
	}
	if got, additive := SplitCommunities([]string{"65000:1"}); len(got) != 1 || additive {
		t.Errorf("SplitCommunities(65000:1) = %q, %t", got, additive)
	}
}

// TestMapVersionSBROrder: the order of a VRF's sbrPrefixes does not matter (the router's table has none).
func TestMapVersionSBROrder(t *testing.T) {
	a, b := sampleNodeSpec(), sampleNodeSpec()
	a.VRFs[0].SBRPrefixes = []string{"10.9.0.0/16", "10.8.0.0/16"}
	b.VRFs[0].SBRPrefixes = []string{"10.8.0.0/16", "10.9.0.0/16"}
	if a.MapVersion() != b.MapVersion() {
		t.Fatal("the order of sbrPrefixes changed the map version")
	}
	if b.VRFs[0].SBRPrefixes[0] != "10.8.0.0/16" || a.VRFs[0].SBRPrefixes[0] != "10.9.0.0/16" {
		t.Fatal("MapVersion reordered the spec's own list")
	}
}
