package frr

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/network-operator/network-operator/pkg/bfd"
	"github.com/network-operator/network-operator/pkg/bgp"
)

// NodeConfig is the FRR-relevant part of one node's desired state. It mirrors
// what a NodeNetworkConfig carries (underlay, Layer2 networks, VRF route
// configurations, routing tables, BGP peerings) without depending on the API
// types.
type NodeConfig struct {
	// FRR is the release rendered for (zero: Shipped): where releases spell a command differently, the
	// release's spelling, so FRR takes it and shows it the same.
	FRR Version

	// DisableIPForwarding and DisableIPv6Forwarding render "no ip[v6]
	// forwarding". Otherwise FRR's datacenter default applies: zebra turns
	// forwarding on, and a reload enforces it. (No hostname is rendered:
	// vtysh always shows the system's, so a configured one never converges.)
	DisableIPForwarding   bool
	DisableIPv6Forwarding bool

	Underlay      Underlay
	L2VNIs        []L2VNI
	VRFs          []VRF
	RoutingTables []RoutingTable
	Peerings      []Peering
}

// Underlay is the node's default-VRF BGP instance towards the fabric.
type Underlay struct {
	ASN      uint32
	RouterID netip.Addr
	// VTEPSource is the local VTEP address (a loopback's host address), IPv4 or IPv6. It is announced ("network
	// A/32" or "A/128") in its family's unicast address family so the other VTEPs can reach it. EVPN with an
	// IPv6 VTEP needs FRR 10.6 or later (IPv6VTEPs).
	VTEPSource netip.Addr
	// Families are the unicast address families the underlay sessions carry, each an "address-family ipv4|ipv6
	// unicast" with its activations; empty: VTEPSource's family (IPv4 without one). A numbered neighbour is
	// activated in its own family, an unnumbered one in every family (FRR gives it extended next hops, so IPv4
	// runs over its IPv6 link-local session), and so is a numbered IPv6 one with ExtendedNextHop (its own or its
	// peer group's); a peer group in the families of its members, which must agree. Every underlay session is
	// activated in l2vpn evpn.
	Families   []Family
	PeerGroups []PeerGroup
	Neighbors  []Neighbor
	// GracefulRestart makes every BGP instance of the node a graceful-restart speaker; nil leaves FRR's
	// default (helper only: the node keeps its peers' routes while they restart, not the other way round).
	GracefulRestart *GracefulRestart
}

// GracefulRestart (RFC 4724) keeps a node forwarding while its bgpd restarts (an FRR upgrade, a crash): it
// announces the capability with preserved forwarding state, so its peers keep the routes learnt from it, as
// stale, until it is back or RestartTime is over; the kernel keeps the node's own routes when zebra runs with
// -K. Zero durations leave FRR's defaults (restart-time 120 s, stalepath-time 360 s).
type GracefulRestart struct {
	// RestartTime is how long peers wait for the node's sessions to come back (whole seconds, 1..4095).
	RestartTime time.Duration
	// StalePathTime is how long the node keeps a restarting peer's stale routes (whole seconds, 1..4095).
	StalePathTime time.Duration
}

// Family is an IP address family: FamilyIPv4 or FamilyIPv6.
type Family int

// The address families.
const (
	FamilyIPv4 Family = 4
	FamilyIPv6 Family = 6
)

func (f Family) String() string {
	switch f {
	case FamilyIPv4:
		return "ipv4"
	case FamilyIPv6:
		return "ipv6"
	}
	return fmt.Sprintf("family(%d)", int(f))
}

// Remote AS keywords accepted besides a decimal AS number.
const (
	RemoteASInternal = bgp.RemoteASInternal
	RemoteASExternal = bgp.RemoteASExternal
)

// SessionOptions are the per-session knobs shared by peer groups, neighbours
// and workload peerings. Zero values leave FRR's defaults.
type SessionOptions struct {
	// HoldTime and KeepaliveTime are rendered together ("timers K H"); both
	// must be set, in whole seconds.
	HoldTime      time.Duration
	KeepaliveTime time.Duration
	// BFD runs BFD on the session with this profile (the zero Profile: bfdd's defaults); nil: no BFD. bfdd must
	// run next to bgpd.
	BFD *bfd.Profile
	// Password is the TCP MD5 secret. It is only written into the config file.
	Password Secret
	// EBGPMultihop > 0 renders "ebgp-multihop N".
	EBGPMultihop uint8
	// UpdateSource is an interface name or address ("update-source X").
	UpdateSource string
}

// PeerGroup is an underlay peer group.
type PeerGroup struct {
	Name string
	// RemoteAS is "internal", "external" or a decimal AS number.
	RemoteAS string
	// ListenRanges accept dynamic neighbours into this group.
	ListenRanges []netip.Prefix
	// ExtendedNextHop gives the group's sessions, which must be IPv6 (numbered members, listen ranges) or
	// unnumbered, extended next hops (Neighbor.ExtendedNextHop).
	ExtendedNextHop bool
	SessionOptions
}

// Neighbor is an underlay neighbour: by address (numbered, IPv4 or IPv6), by interface (unnumbered: the session
// runs on the interface's IPv6 link-local addresses), or by an IPv6 link-local address with the interface it is
// on (both set: "neighbor fe80::1 interface eth0"). It belongs to PeerGroup or names its own RemoteAS.
type Neighbor struct {
	Address   netip.Addr
	Interface string
	PeerGroup string
	RemoteAS  string
	// ExtendedNextHop makes a numbered IPv6 session carry every family of the underlay, as an unnumbered one
	// does: IPv4 unicast with IPv6 next hops (RFC 8950, "capability extended-nexthop"), so an IPv4 VTEP is
	// announced over an IPv6-only underlay. Unnumbered sessions always have it (FRR's doing): not for them, nor
	// for IPv4 sessions.
	ExtendedNextHop bool
	SessionOptions
}

// L2VNI is one Layer2 network stretched over EVPN. Empty RD and route targets
// mean FRR derives them automatically.
type L2VNI struct {
	VNI uint32
	// Isolated keeps the VNI out of EVPN, for a VXLAN that floods to static
	// peers without BGP. zebra (advertise-all-vni) takes every VXLAN in a
	// bridge, so FRR knows the VNI anyway; it is rendered with the route target
	// IsolatedRouteTarget for import and export, which no other node uses: no
	// node imports its type-2/type-3 routes, and it imports none, so zebra never
	// installs flood entries or MACs on its VXLAN (they stay the kernel's and
	// their owner's). Its routes still reach the fabric, inert. No RD or route
	// targets go with it.
	Isolated bool
	RD       string
	// RouteTargets are used for both import and export, in addition to
	// ImportRouteTargets and ExportRouteTargets.
	RouteTargets       []string
	ImportRouteTargets []string
	ExportRouteTargets []string
}

// VRF is one tenant VRF with its L3VNI and its leaking to the cluster VRF.
type VRF struct {
	// Name is the kernel VRF device name (at most 15 characters).
	Name string
	// VNI is the L3VNI (symmetric IRB, type-5 routes).
	VNI uint32
	RD  string
	// RouteTargets are used for both import and export of the L3VNI, in
	// addition to ImportRouteTargets and ExportRouteTargets. Empty means auto.
	RouteTargets       []string
	ImportRouteTargets []string
	ExportRouteTargets []string
	// RedistributeConnected / RedistributeStatic feed the VRF's own routes
	// into BGP (and so into EVPN type-5).
	RedistributeConnected bool
	RedistributeStatic    bool
	// RouteConfigs describe leaking between this VRF and the cluster (default)
	// VRF; each one becomes one route-map entry per direction (its Seq).
	RouteConfigs []RouteConfig
	// Aggregates are announced in the VRF (summaries of exported routes);
	// SummaryOnly suppresses the more specific routes.
	Aggregates  []netip.Prefix
	SummaryOnly bool
}

// RoutingTable is a host routing table exported to the cluster VRF (das-schiff's RoutingTable, "TaaS"): a VRF
// device on kernel table TableID, whose BGP instance redistributes the table's kernel routes in both address
// families; the cluster VRF imports all of them, through an entry of its import route-map like a tenant VRF's.
// It has no L3VNI: its routes reach the fabric only as the cluster VRF's.
type RoutingTable struct {
	// Name is the VRF device name, "taas.<TableID>" by das-schiff's convention.
	Name string
	// TableID is the kernel table of the VRF device. FRR finds the table through the device, so it is checked
	// (a valid, unreserved table of its own) but not rendered.
	TableID uint32
}

// RouteConfig is one VRFRouteConfiguration: prefixes leaked in both directions
// between a VRF and the cluster VRF, with communities and aggregates.
type RouteConfig struct {
	// Seq orders the route-map entries; 1..65534 (65535 is the default deny).
	Seq uint16
	// Import lists routes imported from the VRF into the cluster VRF.
	Import []PrefixItem
	// Export lists routes exported from the cluster VRF into the VRF.
	Export []PrefixItem
	// Communities are set on exported routes: standard ("AA:NN" or a
	// well-known name) and large ("A:B:C"). Additive keeps existing ones.
	Communities []string
	Additive    bool
}

// Action is a prefix-list action.
type Action string

// Prefix-list actions.
const (
	Permit Action = "permit"
	Deny   Action = "deny"
)

// PrefixItem is one prefix-list entry. Seq 0 means (position in the list +
// 1) * 10; GE/LE 0 mean unset.
type PrefixItem struct {
	CIDR   netip.Prefix
	Seq    uint32
	GE, LE uint8
	Action Action
}

// Peering is a BGP peering with workloads (e.g. CNI or load balancer
// speakers), either in the cluster VRF (VRF "") or a tenant VRF.
type Peering struct {
	// Name becomes the peer-group name; letters, digits, '_' and '-'.
	Name string
	VRF  string
	// ListenRanges accept dynamic neighbours; Neighbors are static ones.
	// Their family (all the same) decides the address family.
	ListenRanges []netip.Prefix
	Neighbors    []netip.Addr
	RemoteASN    uint32
	// MaximumPrefixes > 0 limits received prefixes ("maximum-prefix N").
	MaximumPrefixes uint32
	SessionOptions
	// Import filters routes received from the peer, Export routes sent to it.
	// An empty list denies everything in that direction.
	Import []PrefixItem
	Export []PrefixItem
}

// Secret holds a password. It prints as "<redacted>" so a logged NodeConfig
// never shows it; templates use Value.
type Secret string

// String hides the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "<redacted>"
}

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalText hides the secret from JSON/YAML encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Value returns the secret itself, for the config file only.
func (s Secret) Value() string { return string(s) }
