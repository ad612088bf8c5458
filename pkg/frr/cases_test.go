package frr

import (
	"net/netip"
	"time"

	"github.com/network-operator/network-operator/pkg/bfd"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// fabricUnderlay is the underlay most cases share: iBGP to a route reflector.
func fabricUnderlay() Underlay {
	return Underlay{
		ASN:        65000,
		RouterID:   addr("10.0.0.1"),
		VTEPSource: addr("10.0.0.1"),
		PeerGroups: []PeerGroup{{Name: "fabric", RemoteAS: RemoteASInternal}},
		Neighbors:  []Neighbor{{Address: addr("192.168.0.254"), PeerGroup: "fabric"}},
	}
}

// goldenCase is one rendering case; base set means brownfield mode.
type goldenCase struct {
	name string
	base string // file under testdata/brownfield
	mgmt []string
	cfg  NodeConfig
}

func goldenCases() []goldenCase {
	tenant := func(name string, vni uint32) VRF {
		return VRF{Name: name, VNI: vni, RedistributeConnected: true}
	}
	return []goldenCase{
		{name: "underlay-only", cfg: NodeConfig{Underlay: fabricUnderlay()}},
		{name: "underlay-unnumbered", cfg: NodeConfig{Underlay: Underlay{
			ASN: 4200000101, RouterID: addr("10.0.0.11"), VTEPSource: addr("10.0.0.11"),
			PeerGroups: []PeerGroup{{Name: "spines", RemoteAS: RemoteASExternal, SessionOptions: SessionOptions{
				HoldTime: 9 * time.Second, KeepaliveTime: 3 * time.Second, BFD: &bfd.Profile{},
			}}},
			Neighbors: []Neighbor{{Interface: "eth0", PeerGroup: "spines"}, {Interface: "eth1", PeerGroup: "spines"}},
		}}},
		{name: "underlay-session-options", cfg: NodeConfig{Underlay: Underlay{
			ASN: 65001, RouterID: addr("10.0.0.12"), VTEPSource: addr("10.0.0.12"),
			PeerGroups: []PeerGroup{{Name: "rr", RemoteAS: "65000", SessionOptions: SessionOptions{
				Password: "fabric-secret", EBGPMultihop: 2, UpdateSource: "lo",
			}}},
			Neighbors: []Neighbor{
				{Address: addr("10.255.0.1"), PeerGroup: "rr"},
				{Address: addr("10.255.0.2"), PeerGroup: "rr"},
				{Address: addr("192.168.7.1"), RemoteAS: "65007", SessionOptions: SessionOptions{HoldTime: 30 * time.Second, KeepaliveTime: 10 * time.Second}},
			},
		}}},
		// An IPv6-only underlay: an IPv6 VTEP announced in ipv6 unicast, unnumbered uplinks, a numbered IPv6 session
		// and one to a link-local address on its interface, an IPv6 workload peering beside them. No ipv4 unicast at
		// all. The layer-2 network floods statically (isolated from EVPN), which FRR before 10.6 can serve.
		{name: "underlay-ipv6-only", cfg: NodeConfig{
			Underlay: Underlay{
				ASN: 4200000111, RouterID: addr("10.0.0.111"), VTEPSource: addr("2001:db8:ff::111"), Families: []Family{FamilyIPv6},
				PeerGroups: []PeerGroup{{Name: "spines", RemoteAS: RemoteASExternal}},
				Neighbors: []Neighbor{
					{Interface: "eth0", PeerGroup: "spines"}, {Interface: "eth1", PeerGroup: "spines"},
					{Address: addr("2001:db8:0:7::1"), RemoteAS: "65007"},
					{Address: addr("fe80::7"), Interface: "eth2", RemoteAS: RemoteASExternal, SessionOptions: SessionOptions{BFD: &bfd.Profile{}}},
				},
			},
			L2VNIs: []L2VNI{{VNI: 300, Isolated: true}},
			Peerings: []Peering{{Name: "pods6", ListenRanges: []netip.Prefix{pfx("2001:db8:250::/64")}, RemoteASN: 64512,
				Import: []PrefixItem{{CIDR: pfx("2001:db8:244::/48"), LE: 128, Action: Permit}}}},
		}},
		// A dual-stack underlay with an IPv4 VTEP: a numbered session per family (a peer group each), unnumbered
		// uplinks (in a group and alone) carrying both, EVPN (an L2VNI and an L3VNI) over all of them.
		{name: "underlay-dual-stack", cfg: NodeConfig{
			Underlay: Underlay{
				ASN: 65021, RouterID: addr("10.0.0.21"), VTEPSource: addr("10.0.0.21"), Families: []Family{FamilyIPv6, FamilyIPv4},
				PeerGroups: []PeerGroup{
					{Name: "spines", RemoteAS: RemoteASExternal},
					{Name: "rr4", RemoteAS: RemoteASInternal, SessionOptions: SessionOptions{UpdateSource: "lo"}},
					{Name: "rr6", RemoteAS: RemoteASInternal, SessionOptions: SessionOptions{UpdateSource: "lo"}},
				},
				Neighbors: []Neighbor{
					{Interface: "eth0", PeerGroup: "spines"}, {Interface: "eth1", PeerGroup: "spines"},
					{Interface: "eth2", RemoteAS: "65099"}, // unnumbered without a group: both families
					{Address: addr("10.255.0.1"), PeerGroup: "rr4"}, {Address: addr("10.255.0.2"), PeerGroup: "rr4"},
					{Address: addr("2001:db8:255::1"), PeerGroup: "rr6"}, {Address: addr("2001:db8:255::2"), PeerGroup: "rr6"},
				},
			},
			L2VNIs: []L2VNI{{VNI: 100}},
			VRFs:   []VRF{{Name: "tenant1", VNI: 5001, RedistributeConnected: true}},
		}},
		// An IPv4 VTEP over IPv6 sessions only (RFC 8950): numbered IPv6 route reflectors in a peer group with
		// extended next hops, dynamic IPv6 neighbours in another, an eBGP neighbour on a global and one on a
		// link-local address with their own. Each carries ipv4 unicast (the VTEP's /32, with IPv6 next hops) and
		// l2vpn evpn; the underlay carries no IPv6 unicast (families: the VTEP's).
		{name: "underlay-ipv6-extended-nexthop", cfg: NodeConfig{
			Underlay: Underlay{
				ASN: 65000, RouterID: addr("10.0.0.41"), VTEPSource: addr("10.0.0.41"),
				PeerGroups: []PeerGroup{
					{Name: "rr", RemoteAS: RemoteASInternal, ExtendedNextHop: true},
					{Name: "leaves", RemoteAS: RemoteASExternal, ExtendedNextHop: true, ListenRanges: []netip.Prefix{pfx("2001:db8:41::/64")}},
				},
				Neighbors: []Neighbor{
					{Address: addr("2001:db8:255::1"), PeerGroup: "rr"}, {Address: addr("2001:db8:255::2"), PeerGroup: "rr"},
					{Address: addr("2001:db8:0:7::1"), RemoteAS: "65007", ExtendedNextHop: true},
					{Address: addr("fe80::8"), Interface: "eth2", RemoteAS: RemoteASExternal, ExtendedNextHop: true},
				},
			},
			L2VNIs: []L2VNI{{VNI: 100}},
		}},
		// EVPN with an IPv6 VTEP (an L2VNI and an L3VNI, iBGP to IPv6 route reflectors): FRR 10.6 and later only
		// (Version.IPv6VTEPs), so rendered for 10.6 alone.
		{name: "evpn-ipv6-vtep", cfg: NodeConfig{FRR: Version{Major: 10, Minor: 6},
			Underlay: Underlay{
				ASN: 65000, RouterID: addr("10.0.0.31"), VTEPSource: addr("2001:db8:ff::31"),
				PeerGroups: []PeerGroup{{Name: "fabric", RemoteAS: RemoteASInternal, SessionOptions: SessionOptions{UpdateSource: "2001:db8:ff::31"}}},
				Neighbors:  []Neighbor{{Address: addr("2001:db8:255::1"), PeerGroup: "fabric"}, {Address: addr("2001:db8:255::2"), PeerGroup: "fabric"}},
			},
			L2VNIs: []L2VNI{{VNI: 100}, {VNI: 200}},
			VRFs:   []VRF{{Name: "tenant1", VNI: 5001, RedistributeConnected: true}},
		}},
		{name: "no-forwarding", cfg: NodeConfig{
			DisableIPForwarding: true, DisableIPv6Forwarding: true, Underlay: fabricUnderlay(),
		}},
		{name: "l2vni-auto", cfg: NodeConfig{Underlay: fabricUnderlay(), L2VNIs: []L2VNI{{VNI: 200}, {VNI: 100}}}},
		{name: "l2vni-explicit", cfg: NodeConfig{Underlay: fabricUnderlay(), L2VNIs: []L2VNI{
			{VNI: 100, RD: "10.0.0.1:100", RouteTargets: []string{"65000:100"}},
			{VNI: 101, RD: "65000:101", ImportRouteTargets: []string{"65000:101", "65099:101"}, ExportRouteTargets: []string{"65000:1101"}},
		}}},
		{name: "l2vni-isolated", cfg: NodeConfig{Underlay: fabricUnderlay(), L2VNIs: []L2VNI{{VNI: 100}, {VNI: 300, Isolated: true}}}},
		{name: "l3vni-auto", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{Name: "tenant1", VNI: 5001}}}},
		{name: "l3vni-explicit", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant1", VNI: 5001, RD: "10.0.0.1:5001", RouteTargets: []string{"65000:5001"},
			ImportRouteTargets: []string{"65000:5999"}, RedistributeConnected: true, RedistributeStatic: true,
		}}}},
		{name: "multi-vrf-l2vni", cfg: NodeConfig{Underlay: fabricUnderlay(),
			L2VNIs: []L2VNI{{VNI: 100}, {VNI: 110}, {VNI: 120}},
			VRFs:   []VRF{tenant("red", 5002), tenant("blue", 5001), tenant("green", 5003)},
		}},
		{name: "leak-import", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant1", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 10, Import: []PrefixItem{
				{CIDR: pfx("10.1.0.0/16"), Seq: 15, GE: 24, LE: 28, Action: Permit},
				{CIDR: pfx("10.1.99.0/24"), Seq: 5, Action: Deny},
				{CIDR: pfx("10.2.0.0/16"), LE: 32, Action: Permit},
			}}},
		}}}},
		{name: "leak-export-community", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant1", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 20,
				Export:      []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}},
				Communities: []string{"65000:100"},
			}},
		}}}},
		{name: "leak-additive-communities", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant1", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 20,
				Import:      []PrefixItem{{CIDR: pfx("10.1.0.0/16"), LE: 32, Action: Permit}},
				Export:      []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}},
				Communities: []string{"65000:100", "65000:200", "no-export", "4200000101:1:2"}, Additive: true,
			}},
		}}}},
		{name: "leak-replace-communities", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant1", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 20,
				Export:      []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}},
				Communities: []string{"65000:100", "no-export", "4200000101:1:2", "4200000101:3:4"},
			}},
		}}}},
		// Written in another order than FRR keeps them, with duplicates and a well-known value as a number: rendered
		// as FRR shows them (numeric order, once, by name), so a reload converges.
		{name: "leak-community-order", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant1", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 20,
				Export:      []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}},
				Communities: []string{"no-export", "65000:1", "65535:0", "0:0", "65000:1", "4200000101:3:4", "4200000101:1:2"},
			}},
		}}}},
		// A graceful-restart speaker in every instance; the restart time at FRR's default is not rendered.
		{name: "graceful-restart", cfg: func() NodeConfig {
			u := fabricUnderlay()
			u.GracefulRestart = &GracefulRestart{RestartTime: 120 * time.Second, StalePathTime: 300 * time.Second}
			return NodeConfig{Underlay: u, VRFs: []VRF{{Name: "tenant1", VNI: 5001}}, L2VNIs: []L2VNI{{VNI: 100}}}
		}()},
		// BFD profiles: one per distinct setting, shared by the sessions that name it; defaults (the peer group's
		// multiplier 3, 300 ms) are not rendered, and all-default settings name no profile.
		{name: "bfd-profiles", cfg: bfdConfig()},
		{name: "leak-multi", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{
			{Name: "tenant2", VNI: 5002, RouteConfigs: []RouteConfig{{Seq: 10,
				Import: []PrefixItem{{CIDR: pfx("10.2.0.0/16"), LE: 24, Action: Permit}},
				Export: []PrefixItem{{CIDR: pfx("0.0.0.0/0"), Action: Permit}},
			}}},
			{Name: "tenant1", VNI: 5001, RouteConfigs: []RouteConfig{
				{Seq: 30, Import: []PrefixItem{{CIDR: pfx("10.1.128.0/17"), LE: 32, Action: Permit}}},
				{Seq: 10, Import: []PrefixItem{{CIDR: pfx("10.1.0.0/17"), LE: 32, Action: Permit}},
					Export: []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}}, Communities: []string{"65000:1"}},
			}},
		}}},
		{name: "aggregates", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant1", VNI: 5001,
			RouteConfigs: []RouteConfig{{Seq: 10, Export: []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}}}},
			Aggregates:   []netip.Prefix{pfx("10.251.0.0/16"), pfx("fd00:250::/48"), pfx("10.250.0.0/16")},
			SummaryOnly:  true,
		}}}},
		{name: "leak-ipv6", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{
			Name: "tenant6", VNI: 5006, RouteConfigs: []RouteConfig{{Seq: 10,
				Import: []PrefixItem{{CIDR: pfx("fd00:1::/48"), GE: 64, LE: 128, Action: Permit}, {CIDR: pfx("10.6.0.0/16"), Action: Permit}},
				Export: []PrefixItem{{CIDR: pfx("fd00:250::/48"), LE: 128, Action: Permit}},
			}},
		}}}},
		{name: "peering-listen-range", cfg: NodeConfig{Underlay: fabricUnderlay(), Peerings: []Peering{{
			Name: "calico", ListenRanges: []netip.Prefix{pfx("10.250.0.0/24")}, RemoteASN: 64512, MaximumPrefixes: 100,
			SessionOptions: SessionOptions{HoldTime: 30 * time.Second, KeepaliveTime: 10 * time.Second, BFD: &bfd.Profile{}, Password: "s3cret"},
			Import:         []PrefixItem{{CIDR: pfx("10.244.0.0/16"), LE: 32, Action: Permit}},
			Export:         []PrefixItem{{CIDR: pfx("0.0.0.0/0"), Action: Permit}},
		}}}},
		{name: "peering-neighbors", cfg: NodeConfig{Underlay: fabricUnderlay(), Peerings: []Peering{{
			Name: "metallb", Neighbors: []netip.Addr{addr("10.250.1.12"), addr("10.250.1.11")}, RemoteASN: 64513,
			SessionOptions: SessionOptions{EBGPMultihop: 2},
		}}}},
		{name: "peering-ipv6", cfg: NodeConfig{Underlay: fabricUnderlay(), Peerings: []Peering{{
			Name: "calico6", ListenRanges: []netip.Prefix{pfx("fd00:250::/64")}, RemoteASN: 64512, MaximumPrefixes: 500,
			Import: []PrefixItem{{CIDR: pfx("fd00:244::/48"), LE: 128, Action: Permit}},
			Export: []PrefixItem{{CIDR: pfx("::/0"), Action: Permit}},
		}}}},
		{name: "peering-in-vrf", cfg: NodeConfig{Underlay: fabricUnderlay(), VRFs: []VRF{{Name: "tenant1", VNI: 5001}},
			Peerings: []Peering{{
				Name: "tenant1-lb", VRF: "tenant1", ListenRanges: []netip.Prefix{pfx("10.1.250.0/24")}, RemoteASN: 64600,
				SessionOptions: SessionOptions{BFD: &bfd.Profile{}},
				Import:         []PrefixItem{{CIDR: pfx("10.1.0.0/16"), LE: 32, Action: Permit}},
			}}}},
		{name: "routing-table", cfg: NodeConfig{Underlay: fabricUnderlay(), RoutingTables: []RoutingTable{
			{Name: "taas.200", TableID: 200}, {Name: "taas.10", TableID: 10},
		}}},
		{name: "routing-table-leak", cfg: NodeConfig{Underlay: fabricUnderlay(),
			VRFs: []VRF{{Name: "tenant1", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 10,
				Import: []PrefixItem{{CIDR: pfx("10.1.0.0/16"), LE: 32, Action: Permit}},
				Export: []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}},
			}}}},
			RoutingTables: []RoutingTable{{Name: "taas.100", TableID: 100}},
		}},
		{name: "full", cfg: fullConfig()},
		{name: "brownfield-hints", base: "hints.conf", cfg: brownfieldConfig()},
		{name: "brownfield-dasschiff-readme", base: "dasschiff-readme.conf", mgmt: []string{"mgmt_vrf"}, cfg: dasSchiffConfig(65000, "10.0.0.1", "mgmt_vrf")},
		{name: "brownfield-dasschiff-testdata", base: "dasschiff-testdata.conf", mgmt: []string{"om_refm2m"}, cfg: dasSchiffConfig(64510, "198.51.100.0", "om_refm2m")},
		// A base without a BFD hint gets the profiles at its end.
		{name: "brownfield-bfd", base: "dasschiff-readme.conf", mgmt: []string{"mgmt_vrf"}, cfg: func() NodeConfig {
			c := dasSchiffConfig(65000, "10.0.0.1", "mgmt_vrf")
			c.Peerings[0].BFD = &bfd.Profile{ReceiveInterval: 200 * time.Millisecond, TransmitInterval: 200 * time.Millisecond, Passive: true}
			return c
		}()},
		{name: "brownfield-routing-table", base: "hints.conf", cfg: func() NodeConfig {
			c := brownfieldConfig()
			c.RoutingTables = []RoutingTable{{Name: "taas.100", TableID: 100}}
			return c
		}()},
		{name: "brownfield-partial", base: "partial.conf", cfg: NodeConfig{
			Underlay: Underlay{ASN: 65000, RouterID: addr("10.0.0.1")},
			VRFs:     []VRF{{Name: "tenant1", VNI: 5001}},
		}},
	}
}

func fullConfig() NodeConfig {
	return NodeConfig{
		Underlay: fabricUnderlay(),
		L2VNIs:   []L2VNI{{VNI: 100}, {VNI: 101, RD: "10.0.0.1:101", RouteTargets: []string{"65000:101"}}},
		VRFs: []VRF{{
			Name: "tenant1", VNI: 5001, RouteTargets: []string{"65000:5001"}, RedistributeConnected: true,
			RouteConfigs: []RouteConfig{{Seq: 10,
				Import:      []PrefixItem{{CIDR: pfx("10.1.0.0/16"), LE: 32, Action: Permit}, {CIDR: pfx("fd00:1::/48"), LE: 128, Action: Permit}},
				Export:      []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}},
				Communities: []string{"65000:5001"}, Additive: true,
			}},
			Aggregates: []netip.Prefix{pfx("10.250.0.0/16")},
		}},
		Peerings: []Peering{
			{Name: "calico", ListenRanges: []netip.Prefix{pfx("10.250.0.0/24")}, RemoteASN: 64512, MaximumPrefixes: 100,
				SessionOptions: SessionOptions{HoldTime: 30 * time.Second, KeepaliveTime: 10 * time.Second, BFD: &bfd.Profile{}, Password: "s3cret"},
				Import:         []PrefixItem{{CIDR: pfx("10.244.0.0/16"), LE: 32, Action: Permit}},
				Export:         []PrefixItem{{CIDR: pfx("0.0.0.0/0"), Action: Permit}}},
			{Name: "tenant1-lb", VRF: "tenant1", Neighbors: []netip.Addr{addr("10.1.250.10")}, RemoteASN: 64600,
				Import: []PrefixItem{{CIDR: pfx("10.1.0.0/16"), LE: 32, Action: Permit}}},
		},
	}
}

func bfdConfig() NodeConfig {
	fast := &bfd.Profile{ReceiveInterval: 100 * time.Millisecond, TransmitInterval: 100 * time.Millisecond, DetectMultiplier: 3}
	u := fabricUnderlay()
	u.PeerGroups[0].BFD = fast
	u.Neighbors = append(u.Neighbors, Neighbor{Address: addr("192.168.0.253"), RemoteAS: RemoteASInternal,
		SessionOptions: SessionOptions{BFD: &bfd.Profile{ReceiveInterval: 100 * time.Millisecond, TransmitInterval: 100 * time.Millisecond}}})
	return NodeConfig{Underlay: u, Peerings: []Peering{
		{Name: "calico", ListenRanges: []netip.Prefix{pfx("10.250.0.0/24")}, RemoteASN: 64512,
			SessionOptions: SessionOptions{BFD: &bfd.Profile{DetectMultiplier: 5, ReceiveInterval: 250 * time.Millisecond,
				TransmitInterval: 500 * time.Millisecond, Passive: true}}},
		{Name: "metallb", Neighbors: []netip.Addr{addr("10.250.1.11")}, RemoteASN: 64513,
			SessionOptions: SessionOptions{BFD: &bfd.Profile{EchoInterval: 100 * time.Millisecond, DetectMultiplier: 3, ReceiveInterval: 300 * time.Millisecond}}},
		{Name: "plain", Neighbors: []netip.Addr{addr("10.250.1.21")}, RemoteASN: 64514,
			SessionOptions: SessionOptions{BFD: &bfd.Profile{}}},
	}}
}

func brownfieldConfig() NodeConfig {
	c := fullConfig()
	c.Underlay = Underlay{ASN: 65000, RouterID: addr("10.0.0.1")}
	return c
}

// dasSchiffConfig is a node as das-schiff ran it, for its own base configs: a VRF vr.red (das-schiff's "vr."
// names) leaking both ways with the cluster VRF, an auto L2VNI, a cluster peering, and the management VRF
// (skipVRFConfig) whose export routes go into the base's rm_<mgmt>_export hook.
func dasSchiffConfig(asn uint32, routerID, mgmt string) NodeConfig {
	return NodeConfig{
		Underlay: Underlay{ASN: asn, RouterID: addr(routerID)},
		L2VNIs:   []L2VNI{{VNI: 100}},
		VRFs: []VRF{
			{Name: "vr.red", VNI: 5001, RedistributeConnected: true, RouteConfigs: []RouteConfig{{Seq: 10,
				Import: []PrefixItem{{CIDR: pfx("10.1.0.0/16"), LE: 32, Action: Permit}},
				Export: []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}},
			}}},
			{Name: "vr." + mgmt, VNI: 4000, RedistributeConnected: true, RouteConfigs: []RouteConfig{
				{Seq: 10, Export: []PrefixItem{{CIDR: pfx("10.250.0.0/16"), LE: 32, Action: Permit}}, Communities: []string{"65000:4000"}},
				{Seq: 20, Export: []PrefixItem{{CIDR: pfx("10.251.0.0/24"), Action: Permit}}},
			}},
		},
		Peerings: []Peering{{Name: "calico", ListenRanges: []netip.Prefix{pfx("10.250.0.0/24")}, RemoteASN: 64512,
			Import: []PrefixItem{{CIDR: pfx("10.244.0.0/16"), LE: 32, Action: Permit}}}},
	}
}
