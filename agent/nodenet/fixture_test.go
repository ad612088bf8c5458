package nodenet_test

import (
	"net/netip"
	"slices"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
)

// Kernel feature sets the planner tests run against.
var (
	noVRFKernel = nodenet.Features{VRFReason: "test kernel has no VRF devices", VLANReason: "test kernel has no 802.1Q",
		DummyReason: "test kernel has no dummy devices"}
	fullKernel = nodenet.Features{VRF: true, VLAN: true, Dummy: true}
)

func testSettings() nodenet.Settings {
	return nodenet.Settings{VTEPAddress: netip.MustParseAddr("192.0.2.1"), VethVRFs: []string{"blue"}}
}

// tableOnly forces table-only VRFs, for kernel tests that assert table-only objects (iif/oif rules, the VRF
// tables' connected routes): auto mode makes VRF devices instead on a kernel that has them. Device mode has tests
// of its own.
func tableOnly(s nodenet.Settings) nodenet.Settings {
	s.VRFMode = nodenet.VRFModeTableOnly
	return s
}

// twoVRFsOneL2 is the spec most tests start from: VRFs blue (jumbo MTU, veth to default) and red, and one
// layer-2 network routed in blue with IPv4 and IPv6 anycast gateways.
func twoVRFsOneL2() *v1alpha1.NodeNetworkConfigSpec {
	return &v1alpha1.NodeNetworkConfigSpec{
		Revision: "r1",
		Underlay: v1alpha1.UnderlaySpec{ASN: 65001, RouterID: "192.0.2.1", VTEPAddress: "192.0.2.1"},
		VRFs: []v1alpha1.NodeVRF{
			{Name: "blue", ID: 1, TableID: 100, VNI: 1100, MTU: 9000},
			{Name: "red", ID: 2, TableID: 200, VNI: 1200},
		},
		Layer2s: []v1alpha1.NodeLayer2{{
			Name: "net1", VLAN: 100, VNI: 2100, MTU: 1500, VRF: "blue", AnycastMAC: "02:00:00:00:01:00",
			AnycastGateways: []string{"10.100.0.1/24", "fd00:100::1/64"}, NeighSuppression: true,
		}},
	}
}

func withGreen(s *v1alpha1.NodeNetworkConfigSpec) *v1alpha1.NodeNetworkConfigSpec {
	s.VRFs = append(s.VRFs, v1alpha1.NodeVRF{Name: "green", ID: 3, TableID: 300, VNI: 1300})
	return s
}

func withoutL2(s *v1alpha1.NodeNetworkConfigSpec) *v1alpha1.NodeNetworkConfigSpec {
	s.Layer2s = nil
	return s
}

// observedAfter is the state a kernel holds after applying d: what the planner must see as "nothing to do".
func observedAfter(d *nodenet.Desired) *nodenet.Observed {
	o := &nodenet.Observed{Routes: slices.Clone(d.Routes), Rules: slices.Clone(d.Rules)}
	index := map[string]int{}
	for i, l := range d.Links {
		index[l.Name] = i + 2 // 1 is lo
	}
	o.Links = append(o.Links, nodenet.LinkState{LinkSpec: nodenet.LinkSpec{Name: "lo", Kind: "device", MTU: 65536}, Index: 1, Up: true})
	for _, l := range d.Links {
		st := nodenet.LinkState{LinkSpec: l, Index: index[l.Name], Up: true}
		st.PeerAlias = ""
		if l.Kind == nodenet.KindVeth {
			st.PeerIndex = index[l.Peer]
		}
		if l.SegmentationOff {
			st.Alias += " segmentation-off=tso,gso,gro"
			st.Segmentation = []nodenet.OffloadFeature{{Name: "tso", Changeable: true}, {Name: "gso", Changeable: true},
				{Name: "gro", Changeable: true}}
		}
		o.Links = append(o.Links, st)
	}
	return o
}

// withLink adds a link to an observed state with the next free ifindex.
func withLink(o *nodenet.Observed, l nodenet.LinkState) *nodenet.Observed {
	highest := 0
	for _, have := range o.Links {
		highest = max(highest, have.Index)
	}
	l.Index = highest + 1
	o.Links = append(o.Links, l)
	return o
}
