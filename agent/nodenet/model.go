package nodenet

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/sys/unix"
)

// LinkKind is the kernel link type (rtnl kind).
type LinkKind string

// Link kinds nodenet creates.
const (
	KindVRF    LinkKind = "vrf"
	KindBridge LinkKind = "bridge"
	KindVXLAN  LinkKind = "vxlan"
	KindVeth   LinkKind = "veth"
	KindVLAN   LinkKind = "vlan"
	KindDummy  LinkKind = "dummy"
)

// Roles name what a link is for; they form the middle of the alias.
const (
	RoleVRF         = "vrf"
	RoleL3Bridge    = "l3bridge"
	RoleL3VXLAN     = "l3vxlan"
	RoleL2Bridge    = "l2bridge"
	RoleL2VXLAN     = "l2vxlan"
	RoleVethDefault = "veth-default"
	RoleVethVRF     = "veth-vrf"
	RoleVLAN        = "vlan"
	// RoleRoutingTable is the VRF device of a routing table (NodeRoutingTable).
	RoleRoutingTable = "routingtable"
	// RoleLoopback is a VRF's loopback (NodeLoopback): a dummy, or an empty bridge where there are no dummies.
	RoleLoopback = "loopback"
	// RoleLink is a node Link's bridge or VXLAN (NodeLink), named after the Link.
	RoleLink = "link"
)

// Alias is the ownership mark of a link with that role for that object name.
func Alias(role, name string) string { return AliasPrefix + role + ":" + name }

// OwnedAlias reports whether an alias marks a link as nodenet's.
func OwnedAlias(alias string) bool { return strings.HasPrefix(alias, AliasPrefix) }

// LinkSpec is one link as nodenet wants it (desired) or found it (observed, see LinkState).
type LinkSpec struct {
	Name  string
	Kind  LinkKind
	Alias string
	// VRF and Layer2 name the objects the link belongs to (for messages; not compared).
	VRF    string
	Layer2 string
	// MTU of the link; 0: not managed (VRF devices).
	MTU int
	// MAC of the link; nil: not managed.
	MAC net.HardwareAddr
	// Master is the name of the link's master ("" none).
	Master string
	// Table of a VRF device.
	Table uint32
	// VXLAN attributes of a VXLAN device.
	VXLAN *VXLANSpec
	// Peer is the other end of a veth pair; PeerAlias its alias (desired only).
	Peer      string
	PeerAlias string
	// VLAN attributes of an 802.1Q device.
	VLAN *VLANSpec
	// Port holds the bridge port flags when Master is a bridge.
	Port *PortFlags
	// Addrs are the link's global addresses, sorted.
	Addrs []Address
	// SegmentationOff turns the link's segmentation offload (tso, gso, gro) off (desired only; a layer-2
	// network's disableSegmentation).
	SegmentationOff bool
	// Flood are the peer VTEPs of a VXLAN with static flooding: one all-zero-MAC FDB entry each (head-end
	// replication of broadcast and unknown traffic), sorted. Only VXLANs that learn (VXLANSpec.Learning: nodenet
	// sets it for static flooding only) have them, desired and observed; an EVPN VXLAN's flood entries are zebra's.
	Flood []netip.Addr
}

// VXLANSpec are the immutable attributes of a VXLAN device.
type VXLANSpec struct {
	VNI   uint32
	Local netip.Addr
	Port  int
	Dev   string // underlay device ("" none)
	// Learning: the device learns remote MACs from the packets it receives. nodenet sets it for static flooding
	// only (EVPN fills the FDB through zebra), so it also marks the devices whose flood entries are nodenet's.
	Learning bool
}

func (v VXLANSpec) String() string {
	s := fmt.Sprintf("vni %d, local %s, dstport %d", v.VNI, v.Local, v.Port)
	if v.Dev != "" {
		s += ", dev " + v.Dev
	}
	if !v.Learning {
		s += ", nolearning"
	}
	return s
}

// VLANSpec are the immutable attributes of an 802.1Q device.
type VLANSpec struct {
	Parent string
	ID     int
}

// PortFlags are the bridge port flags nodenet manages.
type PortFlags struct {
	Learning      bool
	NeighSuppress bool
}

func (p PortFlags) String() string {
	return fmt.Sprintf("learning %s, neigh_suppress %s", onOff(p.Learning), onOff(p.NeighSuppress))
}

// Address is an interface address (address with prefix length).
type Address struct {
	Prefix netip.Prefix
	// NoPrefixRoute: the kernel adds no connected route to the main table (table-only VRFs get theirs from
	// nodenet in the VRF table).
	NoPrefixRoute bool
}

func (a Address) String() string {
	if a.NoPrefixRoute {
		return a.Prefix.String() + " noprefixroute"
	}
	return a.Prefix.String()
}

// LinkState is an observed link.
type LinkState struct {
	LinkSpec
	Index int
	Up    bool
	// PeerIndex is the ifindex of a veth's peer in the same namespace (0 otherwise).
	PeerIndex int
	// PeerElsewhere: a veth whose peer is in another namespace.
	PeerElsewhere bool
	// Segmentation is the segmentation offload state of an owned bridge (Manager.Observe; nil: not read).
	Segmentation []OffloadFeature
	// SegmentationErr says why the segmentation offload state of an owned bridge could not be read.
	SegmentationErr string
}

// RouteType is the kernel route type.
type RouteType string

// Route types nodenet installs.
const (
	RouteUnicast     RouteType = "unicast"
	RouteLocal       RouteType = "local"
	RouteUnreachable RouteType = "unreachable"
)

// RouteSpec is one route nodenet installs (all carry Settings.RouteProtocol).
type RouteSpec struct {
	Table  uint32
	Dst    netip.Prefix
	Type   RouteType
	Dev    string     // "" for unreachable routes
	Src    netip.Addr // preferred source (IPv4 only)
	Metric uint32
}

// routeKey identifies a route in the kernel; the other RouteSpec fields are its value.
type routeKey struct {
	table  uint32
	dst    netip.Prefix
	metric uint32
}

func (r RouteSpec) key() routeKey { return routeKey{r.Table, r.Dst, r.Metric} }

func (r RouteSpec) String() string {
	var b strings.Builder
	if r.Type != RouteUnicast {
		b.WriteString(string(r.Type) + " ")
	}
	if r.Dst.Bits() == 0 {
		b.WriteString("default")
		if r.Dst.Addr().Is6() {
			b.WriteString(" (ipv6)")
		}
	} else if r.Type == RouteLocal && r.Dst.IsSingleIP() {
		b.WriteString(r.Dst.Addr().String())
	} else {
		b.WriteString(r.Dst.String())
	}
	if r.Dev != "" {
		b.WriteString(" dev " + r.Dev)
	}
	fmt.Fprintf(&b, " table %d", r.Table)
	if r.Src.IsValid() {
		b.WriteString(" src " + r.Src.String())
	}
	if r.Metric != 0 {
		fmt.Fprintf(&b, " metric %d", r.Metric)
	}
	return b.String()
}

func (r RouteSpec) family() int {
	if r.Dst.Addr().Is6() {
		return unix.AF_INET6
	}
	return unix.AF_INET
}

// RuleSpec is one policy routing rule nodenet installs (all carry Settings.RouteProtocol).
type RuleSpec struct {
	Priority int
	Family   int // unix.AF_INET or unix.AF_INET6
	Iif      string
	Oif      string
	Src      netip.Prefix // zero: any source
	Table    uint32
}

func (r RuleSpec) String() string {
	var sel string
	switch {
	case r.Src.IsValid():
		sel = "from " + r.Src.String()
	case r.Iif != "" && r.Oif != "":
		sel = "iif " + r.Iif + " oif " + r.Oif
	case r.Iif != "":
		sel = "iif " + r.Iif
	case r.Oif != "":
		sel = "oif " + r.Oif
	default:
		sel = "from all"
	}
	return fmt.Sprintf("%d: %s lookup %d (%s)", r.Priority, sel, r.Table, familyName(r.Family))
}

func familyName(f int) string {
	if f == unix.AF_INET6 {
		return "ipv6"
	}
	return "ipv4"
}

// VRFState summarises one VRF for the runtime: what the eBPF router and status need.
type VRFState struct {
	Name  string
	Table uint32
	VNI   uint32
	Mode  VRFMode // VRFModeDevice or VRFModeTableOnly
	// Device is the VRF device ("" when table-only): the BPF lookup_ifindex.
	Device string
	// Bridge and VXLAN are the L3VNI links ("" without a VNI).
	Bridge string
	VXLAN  string
	// Members are the links routed by the VRF's table.
	Members []string
	// Gateways are the VRF's own addresses on its members (anycast gateways). A table-only VRF needs a
	// source rule for each, so replies and ICMP errors the node sends from them are routed in its table.
	Gateways []netip.Addr
	// SBR are the source prefixes whose traffic (outside any VRF's interfaces) is routed by the table, sorted.
	SBR []netip.Prefix
}

// Unsupported is an object the spec asks for that this kernel cannot create.
type Unsupported struct {
	Object string // e.g. "vlan vl.100 (layer2 net1 on eth1)"
	Err    error  // wraps ErrNotSupported
}

func (u Unsupported) String() string { return fmt.Sprintf("%s: %v", u.Object, u.Err) }

// Conflict is a link nodenet needs whose name is held by a link it does not own.
type Conflict struct {
	Name   string
	Want   LinkKind
	Found  LinkKind
	Alias  string // the foreign link's alias
	Reason string
}

func (c Conflict) String() string {
	alias := c.Alias
	if alias == "" {
		alias = "none"
	}
	return fmt.Sprintf("%s: want %s, found %s with alias %s: %s", c.Name, c.Want, c.Found, alias, c.Reason)
}

// Err wraps ErrConflict with the object.
func (c Conflict) Err() error { return fmt.Errorf("link %s: %w (%s)", c.Name, ErrConflict, c) }

// Desired is everything nodenet wants in the kernel, in creation order.
type Desired struct {
	VRFs []VRFState
	// RoutingTables are the VRFs of host routing tables (NodeRoutingTable), sorted by table; not the eBPF
	// router's.
	RoutingTables []VRFState
	Links         []LinkSpec
	Routes        []RouteSpec
	Rules         []RuleSpec
	Unsupported   []Unsupported
	Notes         []string
	// RouteProtocol tags the routes and rules.
	RouteProtocol uint8
}

// Observed is what Observe read: every link of the namespace (foreign links too, for conflict detection) and
// the routes and rules carrying nodenet's protocol.
type Observed struct {
	Links  []LinkState
	Routes []RouteSpec
	Rules  []RuleSpec
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
