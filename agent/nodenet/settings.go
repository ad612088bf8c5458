package nodenet

import (
	"net/netip"

	"github.com/vishvananda/netns"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// AliasPrefix starts the IFLA_IFALIAS of every link nodenet creates: "network-operator:<role>:<name>". It is the
// ownership mark: links without it are never modified or deleted.
const AliasPrefix = "network-operator:"

// DefaultRouteProtocol is the rtproto number that tags owned routes and rules. Kernel and FRR use 0-42 and
// 186-198; 241 is unassigned.
const DefaultRouteProtocol uint8 = 241

// DefaultRulePriority puts owned rules after the kernel's l3mdev rule (1000) and before main (32766).
const DefaultRulePriority = 1100

// DefaultMTU is the MTU of a VRF's links when neither the VRF nor Settings give one.
const DefaultMTU = 1500

// VXLANPort is the IANA VXLAN UDP port every VXLAN device uses.
const VXLANPort = 4789

// UnreachableMetric is the metric of the unreachable default routes in every VRF table: the highest a route may
// have, so any real default route wins, and lookups never fall through to the main table.
const UnreachableMetric = 4278198272

// VRFMode says how a VRF exists in the kernel.
type VRFMode string

const (
	// VRFModeAuto uses VRF devices when the kernel has them, else table-only (Settings only).
	VRFModeAuto VRFMode = "auto"
	// VRFModeDevice: a VRF device bound to the VRF's table; its member links are enslaved to it.
	VRFModeDevice VRFMode = "device"
	// VRFModeTableOnly: no VRF device; the table is filled by nodenet (connected and local routes) and reached
	// through iif/oif rules; the eBPF router looks the table up directly.
	VRFModeTableOnly VRFMode = "table-only"
)

// Names are the prefixes of the link names nodenet derives from VRF names and VLAN ids.
type Names struct {
	VRF         string // VRF device: <VRF><vrf>
	L3Bridge    string // L3VNI bridge: <L3Bridge><vrf>
	L3VXLAN     string // L3VNI VXLAN: <L3VXLAN><vrf>
	L2Bridge    string // layer-2 network bridge: <L2Bridge><vlan>
	L2VXLAN     string // layer-2 network VXLAN: <L2VXLAN><vlan>
	VethDefault string // veth end in the default VRF: <VethDefault><vrf>
	VethVRF     string // veth end in the VRF: <VethVRF><vrf>
	VLAN        string // 802.1Q sub-interface of the L2 trunk: <VLAN><vlan>
}

// DefaultNames are 3-byte prefixes for VRF-derived names (a VRF name has at most 12 bytes) and longer ones for
// VLAN-derived names (at most 4 digits), so every name fits the kernel's 15 bytes and VRF and VLAN names never
// collide (a VRF may be called "100").
func DefaultNames() Names {
	return Names{
		VRF:         v1alpha1.VRFDevicePrefix,
		L3Bridge:    v1alpha1.BridgePrefix,
		L3VXLAN:     v1alpha1.VXLANPrefix,
		L2Bridge:    v1alpha1.L2BridgePrefix,
		L2VXLAN:     v1alpha1.L2VXLANPrefix,
		VethDefault: v1alpha1.VethDefaultPrefix,
		VethVRF:     v1alpha1.VethVRFPrefix,
		VLAN:        v1alpha1.L2VLANPrefix,
	}
}

// Settings are the node-local inputs that are not part of the NodeNetworkConfigSpec. Zero values take defaults.
type Settings struct {
	// VTEPAddress is the local VXLAN tunnel endpoint; zero: spec.Underlay.VTEPAddress.
	VTEPAddress netip.Addr
	// VTEPInterface optionally binds every VXLAN device to this underlay device (IFLA_VXLAN_LINK).
	VTEPInterface string
	// DefaultMTU is the MTU of a VRF's links when NodeVRF.MTU is 0; 0: DefaultMTU.
	DefaultMTU int
	// VethVRFs lists the VRFs that get a veth pair to the default VRF.
	VethVRFs []string
	// L2Trunk, when set, bridges every layer-2 network to this device through an 802.1Q sub-interface.
	L2Trunk string
	// Names are the link name prefixes; empty fields take DefaultNames.
	Names Names
	// RouteProtocol tags owned routes and rules; 0: DefaultRouteProtocol.
	RouteProtocol uint8
	// RulePriority of owned rules; 0: DefaultRulePriority. Source-based routing rules (NodeVRF.SBRPrefixes) take
	// RulePriority+1, after the table-only VRFs' interface rules.
	RulePriority int
	// VRFMode forces device or table-only VRFs; "" or auto: detect.
	VRFMode VRFMode
	// NoTableLookup says why the eBPF router cannot look up a routing table by its id on this kernel ("": it
	// can). Without such lookups it reaches a VRF's table through the VRF's device, so table-only VRFs and
	// source-based routing are refused (ErrTableLookupNotSupported) instead of forwarding from the wrong table.
	NoTableLookup string
	// NetNS is the namespace of the netlink handle, for the ethtool ioctls of segmentation offload (netlink has
	// no such call); 0: the agent's own. nodenet checks the ifindex before it touches a link through it.
	NetNS netns.NsHandle
}

// withDefaults fills zero fields and checks the rest.
func (s Settings) withDefaults() (Settings, error) {
	d := DefaultNames()
	fill := func(p *string, def string) {
		if *p == "" {
			*p = def
		}
	}
	fill(&s.Names.VRF, d.VRF)
	fill(&s.Names.L3Bridge, d.L3Bridge)
	fill(&s.Names.L3VXLAN, d.L3VXLAN)
	fill(&s.Names.L2Bridge, d.L2Bridge)
	fill(&s.Names.L2VXLAN, d.L2VXLAN)
	fill(&s.Names.VethDefault, d.VethDefault)
	fill(&s.Names.VethVRF, d.VethVRF)
	fill(&s.Names.VLAN, d.VLAN)
	if s.DefaultMTU == 0 {
		s.DefaultMTU = DefaultMTU
	}
	if s.RouteProtocol == 0 {
		s.RouteProtocol = DefaultRouteProtocol
	}
	if s.RulePriority == 0 {
		s.RulePriority = DefaultRulePriority
	}
	if s.VRFMode == "" {
		s.VRFMode = VRFModeAuto
	}
	switch s.VRFMode {
	case VRFModeAuto, VRFModeDevice, VRFModeTableOnly:
	default:
		return s, fielderr.Join(field.ErrorList{field.NotSupported(field.NewPath("settings", "vrfMode"), s.VRFMode,
			[]VRFMode{VRFModeAuto, VRFModeDevice, VRFModeTableOnly})})
	}
	if s.DefaultMTU < minLinkMTU || s.DefaultMTU > maxLinkMTU {
		return s, invalid(field.NewPath("settings", "defaultMTU"), s.DefaultMTU, "must be within %d..%d", minLinkMTU, maxLinkMTU)
	}
	if s.RulePriority < 1 || s.RulePriority >= 32765 {
		return s, invalid(field.NewPath("settings", "rulePriority"), s.RulePriority,
			"must be within 1..32764 (it and the source-based routing rules at +1 before the main table rule)")
	}
	return s, nil
}
