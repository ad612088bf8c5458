package nodescale

import (
	"fmt"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Scale of the node's configuration.
type Scale struct {
	// VRFs tenant VRFs, each with an L3VNI (its bridge + VXLAN) and one layer-2 network (its bridge + VXLAN, an
	// anycast gateway in the VRF): 4 interfaces per VRF.
	VRFs int
	// Prefixes exported per VRF (one leak with that many export prefixes and one import prefix).
	Prefixes int
}

// DefaultScale is issue 14's node: 1000 VRFs, 4000 interfaces.
func DefaultScale() Scale { return Scale{VRFs: 1000, Prefixes: 3} }

// Interfaces is the number of interfaces the agent creates for the scale.
func (s Scale) Interfaces() int { return 4 * s.VRFs }

// vtep is the node's VTEP address and router id.
const vtep = "10.255.0.1"

// Spec is the node's NodeNetworkConfigSpec: VRF i is "t<i>" (table 10000+i, L3VNI 100000+i, route target
// 65000:<vni>, a leak with one import and s.Prefixes export prefixes), its layer-2 network "n<i>" (VLAN 100+i, bridge l2br.<VLAN>,
// VNI 200000+i, gateway 10.<i/256>.<i%256>.1/24 in the VRF), and the eBPF router routes on every layer-2 bridge.
func Spec(s Scale, revision string) v1.NodeNetworkConfigSpec {
	spec := v1.NodeNetworkConfigSpec{Revision: revision,
		Underlay: v1.UnderlaySpec{ASN: 65000, RouterID: vtep, VTEPAddress: vtep,
			Neighbors: []v1.UnderlayNeighbor{{Address: "192.168.0.254", RemoteASN: "internal"}}}}
	for i := range s.VRFs {
		name, net := fmt.Sprintf("t%04d", i), fmt.Sprintf("n%04d", i)
		vni := int32(100000 + i)
		leak := v1.VRFLeak{Source: name, Seq: 10,
			Import:      []v1.NodePrefixItem{{CIDR: fmt.Sprintf("10.%d.%d.0/24", 128+i/256, i%256), Seq: 1, Action: v1.PrefixActionPermit}},
			Communities: []string{fmt.Sprintf("65000:%d", i+1)}}
		for p := range s.Prefixes {
			leak.Export = append(leak.Export, v1.NodePrefixItem{CIDR: fmt.Sprintf("172.%d.%d.%d/32", 16+p, i/256, i%256), Seq: int64(p + 1), Action: v1.PrefixActionPermit})
		}
		spec.VRFs = append(spec.VRFs, v1.NodeVRF{Name: name, ID: int32(i + 2), TableID: int32(10000 + i), VNI: vni,
			RouteTargets: []string{fmt.Sprintf("65000:%d", vni)}, Leaks: []v1.VRFLeak{leak}})
		spec.Layer2s = append(spec.Layer2s, v1.NodeLayer2{Name: net, VLAN: int32(100 + i), VNI: int32(200000 + i), MTU: 1500,
			VRF: name, AnycastMAC: "02:00:00:00:00:01", AnycastGateways: []string{fmt.Sprintf("10.%d.%d.1/24", i/256, i%256)}})
		spec.DataPlane.Interfaces = append(spec.DataPlane.Interfaces, v1.DataPlaneInterface{Name: fmt.Sprintf("%s%d", v1.L2BridgePrefix, 100+i),
			VRF: name, Mode: v1.ModeRoute, Hook: v1.HookAuto})
	}
	spec.ExpectedMapVersion = spec.MapVersion()
	return spec
}
