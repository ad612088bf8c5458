package frrmodel

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/bfd"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/frr"
)

func baseSpec() *v1.NodeNetworkConfigSpec {
	return &v1.NodeNetworkConfigSpec{
		Revision: "r1",
		Underlay: v1.UnderlaySpec{ASN: 65001, RouterID: "10.0.0.1", VTEPAddress: "10.0.0.1", Interfaces: []string{"eth0", "eth1"},
			Neighbors: []v1.UnderlayNeighbor{{Interface: "eth0", RemoteASN: "external"}, {Address: "192.0.2.1", RemoteASN: "65000"}}},
		VRFs: []v1.NodeVRF{
			{Name: "cluster", ID: 1, TableID: 254},
			{Name: "red", ID: 2, TableID: 1_000_000_100, VNI: 100, RouteTargets: []string{"65000:100"},
				Aggregates: []string{"10.100.0.0/16"},
				Leaks: []v1.VRFLeak{{Source: "red-a", Seq: 10,
					Import:      []v1.NodePrefixItem{{CIDR: "10.100.0.0/16", Seq: 10, LE: ptr[int32](24), Action: v1.PrefixActionPermit}},
					Export:      []v1.NodePrefixItem{{CIDR: "10.0.0.0/8", Seq: 10, Action: v1.PrefixActionPermit}},
					Communities: []string{"65000:1"}}}},
		},
		Layer2s: []v1.NodeLayer2{{Name: "l2", VLAN: 10, VNI: 1010, MTU: 1500, VRF: "red"}},
	}
}

func ptr[T any](v T) *T { return &v }

func noPasswords(context.Context, v1.SecretKeyReference) (string, error) {
	return "", errors.New("no secrets here")
}

func TestNodeConfig(t *testing.T) {
	hold := &metav1.Duration{Duration: 30 * time.Second}
	cases := []struct {
		name  string
		spec  func(s *v1.NodeNetworkConfigSpec)
		check func(t *testing.T, c *frr.NodeConfig)
	}{
		{"underlay", nil, func(t *testing.T, c *frr.NodeConfig) {
			u := c.Underlay
			if u.ASN != 65001 || u.RouterID != netip.MustParseAddr("10.0.0.1") || u.VTEPSource != u.RouterID {
				t.Errorf("underlay %+v", u)
			}
			// eth0 is listed once (explicit neighbour wins), eth1 gets an unnumbered external session.
			var keys []string
			for _, n := range u.Neighbors {
				keys = append(keys, n.Interface+n.Address.String()+"/"+n.RemoteAS)
			}
			if got := strings.Join(keys, " "); got != "eth0invalid IP/external 192.0.2.1/65000 eth1invalid IP/external" {
				t.Errorf("neighbours %s", got)
			}
		}},
		{"tenant VRF named like its device, cluster VRF left to the default instance", nil, func(t *testing.T, c *frr.NodeConfig) {
			if len(c.VRFs) != 1 {
				t.Fatalf("VRFs %+v, want only red", c.VRFs)
			}
			v := c.VRFs[0]
			if v.Name != "vr.red" || v.VNI != 100 || !v.RedistributeConnected || len(v.RouteTargets) != 1 {
				t.Errorf("vrf %+v", v)
			}
			if len(v.Aggregates) != 1 || v.Aggregates[0].String() != "10.100.0.0/16" {
				t.Errorf("aggregates %v", v.Aggregates)
			}
			rc := v.RouteConfigs[0]
			if rc.Seq != 10 || len(rc.Import) != 1 || rc.Import[0].LE != 24 || rc.Export[0].CIDR.String() != "10.0.0.0/8" ||
				rc.Communities[0] != "65000:1" {
				t.Errorf("route config %+v", rc)
			}
		}},
		{"additive communities", func(s *v1.NodeNetworkConfigSpec) {
			s.VRFs[1].Leaks[0].Communities = []string{"65000:1", "4200000101:1:2"}
			s.VRFs[1].Leaks[0].AdditiveCommunities = true
		}, func(t *testing.T, c *frr.NodeConfig) {
			rc := c.VRFs[0].RouteConfigs[0]
			if !rc.Additive || !slices.Equal(rc.Communities, []string{"65000:1", "4200000101:1:2"}) {
				t.Errorf("route config %+v, want both communities, additive", rc)
			}
			conf, err := frr.Render(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{" set community 65000:1 additive\n", " set large-community 4200000101:1:2 additive\n"} {
				if !strings.Contains(string(conf), want) {
					t.Errorf("rendered config lacks %q:\n%s", want, conf)
				}
			}
		}},
		{"communities replace without additiveCommunities", nil, func(t *testing.T, c *frr.NodeConfig) {
			if rc := c.VRFs[0].RouteConfigs[0]; rc.Additive {
				t.Errorf("route config %+v is additive", rc)
			}
		}},
		{"L2VNIs", nil, func(t *testing.T, c *frr.NodeConfig) {
			if len(c.L2VNIs) != 1 || c.L2VNIs[0].VNI != 1010 || c.L2VNIs[0].Isolated {
				t.Errorf("l2vnis %+v", c.L2VNIs)
			}
		}},
		{"Links' VXLANs in a bridge are L2VNIs, isolated with static flooding; a VXLAN without bridge is not", func(s *v1.NodeNetworkConfigSpec) {
			s.Links = []v1.NodeLink{
				{Name: "evpn", InterfaceName: "vxe", VXLAN: &v1.NodeVXLANLink{VNI: 2001, Port: 4789, Master: "br0"}},
				{Name: "static", InterfaceName: "vxs", VXLAN: &v1.NodeVXLANLink{VNI: 2002, Port: 4789, Master: "br0",
					Flooding: &v1.Flooding{Mode: v1.FloodingStatic}}},
				{Name: "bare", InterfaceName: "vxb", VXLAN: &v1.NodeVXLANLink{VNI: 2003, Port: 4789, Flooding: &v1.Flooding{Mode: v1.FloodingStatic}}},
				{Name: "bridge", InterfaceName: "br0", Bridge: &v1.BridgeLink{}},
			}
		}, func(t *testing.T, c *frr.NodeConfig) {
			want := []frr.L2VNI{{VNI: 1010}, {VNI: 2001}, {VNI: 2002, Isolated: true}}
			if !slices.EqualFunc(c.L2VNIs, want, func(a, b frr.L2VNI) bool { return a.VNI == b.VNI && a.Isolated == b.Isolated }) {
				t.Errorf("l2vnis %+v, want %+v", c.L2VNIs, want)
			}
		}},
		{"a static-flooding network's VNI is isolated from EVPN", func(s *v1.NodeNetworkConfigSpec) {
			s.Layer2s[0].Flooding = &v1.Flooding{Mode: v1.FloodingStatic, Peers: []string{"192.0.2.9"}}
		}, func(t *testing.T, c *frr.NodeConfig) {
			if len(c.L2VNIs) != 1 || c.L2VNIs[0].VNI != 1010 || !c.L2VNIs[0].Isolated {
				t.Errorf("l2vnis %+v, want VNI 1010 isolated", c.L2VNIs)
			}
		}},
		{"peering split by family, password, timers", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "lb.speakers", VRF: "red", RemoteASN: 64512, ListenRanges: []string{"10.100.1.0/24", "fd00:1::/64"},
				Addresses: []string{"10.100.2.1"}, HoldTime: hold, MaximumPrefixes: ptr[int64](50), EnableBFD: true,
				PasswordSecretRef: &v1.SecretKeyReference{Namespace: "ns", Name: "s", Key: "k"},
				Import:            []v1.NodePrefixItem{{CIDR: "10.100.1.0/24", Seq: 10, Action: v1.PrefixActionPermit}}}}
		}, func(t *testing.T, c *frr.NodeConfig) {
			if len(c.Peerings) != 3 {
				t.Fatalf("peerings %+v, want v4 ranges, v6 ranges, v4 neighbours", c.Peerings)
			}
			v4, v6, n4 := c.Peerings[0], c.Peerings[1], c.Peerings[2]
			if v4.Name != "lb_speakers-r4" || v6.Name != "lb_speakers-r6" || n4.Name != "lb_speakers-n4" || v4.VRF != "vr.red" {
				t.Errorf("names %q %q %q vrf %q", v4.Name, v6.Name, n4.Name, v4.VRF)
			}
			if len(v4.ListenRanges) != 1 || len(v6.ListenRanges) != 1 || len(n4.Neighbors) != 1 || len(n4.ListenRanges) != 0 {
				t.Errorf("v4 %+v v6 %+v n4 %+v", v4, v6, n4)
			}
			// Filters keep their family: the v6 group has no v4 entry (and so denies everything).
			if len(v4.Import) != 1 || len(v6.Import) != 0 {
				t.Errorf("imports v4 %v v6 %v", v4.Import, v6.Import)
			}
			if v4.Password.Value() != "pw-ns/s/k" || v4.HoldTime != 30*time.Second || v4.KeepaliveTime != 10*time.Second ||
				v4.MaximumPrefixes != 50 || v4.BFD == nil {
				t.Errorf("session %+v", v4.SessionOptions)
			}
		}},
		{"BFD settings on the underlay's and a peering's sessions", func(s *v1.NodeNetworkConfigSpec) {
			s.Underlay.BFD = &v1.BFDProfile{ReceiveInterval: &metav1.Duration{Duration: 100 * time.Millisecond}}
			s.BGPPeers = []v1.NodeBGPPeer{
				{Name: "tuned", RemoteASN: 64512, Addresses: []string{"10.100.2.1"}, EnableBFD: true, BFD: &v1.BFDProfile{PassiveMode: true}},
				{Name: "defaults", RemoteASN: 64512, Addresses: []string{"10.100.2.2"}, EnableBFD: true},
				{Name: "none", RemoteASN: 64512, Addresses: []string{"10.100.2.3"}},
			}
		}, func(t *testing.T, c *frr.NodeConfig) {
			for _, n := range c.Underlay.Neighbors {
				if n.BFD == nil || n.BFD.ReceiveInterval != 100*time.Millisecond {
					t.Errorf("underlay neighbour %s: bfd %+v", cmp.Or(n.Interface, n.Address.String()), n.BFD)
				}
			}
			want := map[string]*bfd.Profile{"tuned": {Passive: true}, "defaults": {}, "none": nil}
			for _, p := range c.Peerings {
				if w := want[p.Name]; (w == nil) != (p.BFD == nil) || w != nil && *w != *p.BFD {
					t.Errorf("peering %s: bfd %+v, want %+v", p.Name, p.BFD, w)
				}
			}
		}},
		{"routing tables", func(s *v1.NodeNetworkConfigSpec) {
			s.RoutingTables = []v1.NodeRoutingTable{{Name: "taas.100", TableID: 100}, {Name: "taas.7", TableID: 7}}
		}, func(t *testing.T, c *frr.NodeConfig) {
			want := []frr.RoutingTable{{Name: "taas.100", TableID: 100}, {Name: "taas.7", TableID: 7}}
			if !slices.Equal(c.RoutingTables, want) {
				t.Errorf("routing tables %+v, want %+v", c.RoutingTables, want)
			}
			if d := Describe(c); !strings.Contains(d, "taas.100(table 100) taas.7(table 7)") {
				t.Errorf("Describe: %s", d)
			}
			out, err := frr.Render(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range []string{"router bgp 65001 vrf taas.7\n", "  import vrf taas.100\n", " match source-vrf taas.7\n"} {
				if !strings.Contains(string(out), line) {
					t.Errorf("rendered config lacks %q", line)
				}
			}
		}},
		{"cluster VRF peering goes to the default instance", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "calico", VRF: "cluster", RemoteASN: 64512, ListenRanges: []string{"10.244.0.0/16"}}}
		}, func(t *testing.T, c *frr.NodeConfig) {
			if c.Peerings[0].VRF != "" || c.Peerings[0].Name != "calico" {
				t.Errorf("peering %+v", c.Peerings[0])
			}
		}},
	}
	pw := func(_ context.Context, r v1.SecretKeyReference) (string, error) {
		return "pw-" + r.Namespace + "/" + r.Name + "/" + r.Key, nil
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			if tc.spec != nil {
				tc.spec(s)
			}
			c, err := NodeConfig(context.Background(), s, pw)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
			// Every translation is something pkg/frr accepts and renders.
			if err := c.Validate(); err != nil {
				t.Fatalf("pkg/frr rejects the translation: %v", err)
			}
			if _, err := frr.Render(c); err != nil {
				t.Fatalf("render: %v", err)
			}
		})
	}
}

func TestNodeConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		spec func(s *v1.NodeNetworkConfigSpec)
		want []string
	}{
		{"bad router id", func(s *v1.NodeNetworkConfigSpec) { s.Underlay.RouterID = "fd00::1" }, []string{`underlay.routerID: Invalid value: "fd00::1"`}},
		{"bad neighbour address", func(s *v1.NodeNetworkConfigSpec) {
			s.Underlay.Neighbors = []v1.UnderlayNeighbor{{Address: "nope", RemoteASN: "1"}}
		}, []string{`underlay.neighbors[0].address: Invalid value: "nope"`}},
		{"peer in unknown VRF and bad CIDR", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", VRF: "nosuch", RemoteASN: 1, ListenRanges: []string{"10.0.0.0/33"}}}
		}, []string{`bgpPeers[0].vrf: Invalid value: "nosuch"`, `bgpPeers[0].listenRanges[0]: Invalid value: "10.0.0.0/33"`}},
		{"password unreadable", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", RemoteASN: 1, Addresses: []string{"10.0.0.1"},
				PasswordSecretRef: &v1.SecretKeyReference{Namespace: "a", Name: "b", Key: "c"}}}
		}, []string{"bgpPeers[0].passwordSecretRef: password Secret unavailable: no secrets here"}},
		{"underlay BFD", func(s *v1.NodeNetworkConfigSpec) {
			s.Underlay.BFD = &v1.BFDProfile{TransmitInterval: &metav1.Duration{Duration: 5 * time.Millisecond}}
		}, []string{`underlay.bfd.transmitInterval: Invalid value: "5ms"`}},
		{"leak seq", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[1].Leaks[0].Seq = 0 }, []string{"vrfs[1].leaks[0].seq: Invalid value: 0"}},
		{"reserved underlay ASN", func(s *v1.NodeNetworkConfigSpec) { s.Underlay.ASN = 4294967295 },
			[]string{"underlay.asn: Invalid value: 4294967295: AS number must be within 1..4294967294"}},
		{"reserved remote ASN", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", RemoteASN: 4294967295, Addresses: []string{"10.0.0.1"}}}
		}, []string{"bgpPeers[0].remoteASN: Invalid value: 4294967295: AS number must be within 1..4294967294"}},
		{"AS_TRANS remote ASN", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", RemoteASN: 23456, Addresses: []string{"10.0.0.1"}}}
		}, []string{"bgpPeers[0].remoteASN: Invalid value: 23456: AS 23456 is AS_TRANS"}},
		{"underlay neighbour remote AS", func(s *v1.NodeNetworkConfigSpec) {
			s.Underlay.Neighbors = []v1.UnderlayNeighbor{{Interface: "eth9", RemoteASN: "extern"}}
		}, []string{`underlay.neighbors[0].remoteASN: Invalid value: "extern"`}},
		{"community", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[1].Leaks[0].Communities = []string{"65536:1"} },
			[]string{`vrfs[1].leaks[0].communities[0]: Invalid value: "65536:1": standard community parts must be within 0..65535`}},
		{"prefix seq", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", RemoteASN: 1, Addresses: []string{"10.0.0.1"},
				Import: []v1.NodePrefixItem{{CIDR: "10.0.0.0/8", Seq: 4294967296, Action: v1.PrefixActionPermit}}}}
		}, []string{"bgpPeers[0].import[0].seq: Invalid value: 4294967296: prefix-list sequence must be within 1..4294967295"}},
		// A Layer2 network always has a VNI (nodenet builds its VXLAN device from it): 0 is refused, not skipped.
		{"layer2 without VNI", func(s *v1.NodeNetworkConfigSpec) { s.Layer2s[0].VNI = 0 },
			[]string{"layer2s[0].vni: Invalid value: 0: VNI must be within 1..16777215"}},
		{"layer2 VNI too large", func(s *v1.NodeNetworkConfigSpec) { s.Layer2s[0].VNI = 1 << 24 },
			[]string{"layer2s[0].vni: Invalid value: 16777216"}},
		{"VRF VNI negative", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[1].VNI = -1 },
			[]string{"vrfs[1].vni: Invalid value: -1: VNI must be within 1..16777215"}},
		// ge/le outside the family's lengths are refused at the spec's path, never clamped into range.
		{"le beyond the family", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[1].Leaks[0].Import[0].LE = ptr[int32](33) },
			[]string{"vrfs[1].leaks[0].import[0].le: Invalid value: 33: prefix length must be within 0..32 for 10.100.0.0/16"}},
		{"negative ge", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", RemoteASN: 1, Addresses: []string{"fd00::1"},
				Export: []v1.NodePrefixItem{{CIDR: "fd00::/64", Seq: 10, GE: ptr[int32](-1), Action: v1.PrefixActionPermit}}}}
		}, []string{"bgpPeers[0].export[0].ge: Invalid value: -1: prefix length must be within 0..128 for fd00::/64"}},
		{"password without Secret access", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", RemoteASN: 1, Addresses: []string{"10.0.0.1"},
				PasswordSecretRef: &v1.SecretKeyReference{Namespace: "a", Name: "b", Key: "c"}}}
		}, []string{`bgpPeers[0].passwordSecretRef: Invalid value: "a/b": cannot be read: no Secret access in this mode`}},
		{"routing table name", func(s *v1.NodeNetworkConfigSpec) {
			s.RoutingTables = []v1.NodeRoutingTable{{Name: "taas.100", TableID: 100}, {Name: "tbl.101", TableID: 101}}
		}, []string{`routingTables[1].name: Invalid value: "tbl.101": must be taas.101 (the VRF of table 101)`}},
		{"routing table id", func(s *v1.NodeNetworkConfigSpec) {
			s.RoutingTables = []v1.NodeRoutingTable{{Name: "taas.0", TableID: 0}}
		}, []string{"routingTables[0].tableID: Invalid value: 0: table id must be within 1..4294967295"}},
		{"routing table on a kernel table", func(s *v1.NodeNetworkConfigSpec) {
			s.RoutingTables = []v1.NodeRoutingTable{{Name: "taas.255", TableID: 255}}
		}, []string{"routingTables[0].tableID: Invalid value: 255: is a table of the kernel"}},
		{"peer without addresses", func(s *v1.NodeNetworkConfigSpec) {
			s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", RemoteASN: 1}}
		}, []string{"neither listenRanges nor addresses"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			tc.spec(s)
			passwords := PasswordFunc(noPasswords)
			if strings.Contains(tc.name, "without Secret access") {
				passwords = nil
			}
			_, err := NodeConfig(context.Background(), s, passwords)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// A spec problem is final (ErrInvalid); an unreadable Secret may be read later.
			if invalid := tc.name != "password unreadable"; errors.Is(err, fielderr.ErrInvalid) != invalid ||
				errors.Is(err, ErrSecretUnavailable) == invalid {
				t.Errorf("errors.Is(%v, fielderr.ErrInvalid) = %t, ErrSecretUnavailable %t", err, !invalid,
					errors.Is(err, ErrSecretUnavailable))
			}
		})
	}
	if _, err := NodeConfig(context.Background(), &v1.NodeNetworkConfigSpec{}, nil); !errors.Is(err, ErrNoUnderlay) {
		t.Errorf("empty underlay: %v, want ErrNoUnderlay", err)
	}
}

func TestPeerGroupName(t *testing.T) {
	long := strings.Repeat("a", 60)
	cases := map[[2]string]string{
		{"calico", ""}:      "calico",
		{"lb.speakers", ""}: "lb_speakers",
		{"1st", "v4"}:       "p1st-v4",
	}
	for in, want := range cases {
		if got := PeerGroupName(in[0], in[1]); got != want {
			t.Errorf("PeerGroupName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	a, b := PeerGroupName(long+"x", ""), PeerGroupName(long+"y", "")
	if len(a) > maxPeerGroupName || a == b {
		t.Errorf("long names %q %q: too long or not distinct", a, b)
	}
}

// TestNodeConfigIPv6Underlay: the underlay's families, VTEP and neighbours of an IPv6-only, a dual-stack and an
// IPv4 underlay as pkg/frr gets them, and the family mistakes refused with the field and value.
func TestNodeConfigIPv6Underlay(t *testing.T) {
	spec := func(vtep string, fams []v1.IPFamily, ifaces []string, ns ...v1.UnderlayNeighbor) *v1.NodeNetworkConfigSpec {
		return &v1.NodeNetworkConfigSpec{Revision: "r1", Underlay: v1.UnderlaySpec{ASN: 65001, RouterID: "10.0.0.1",
			VTEPAddress: vtep, AddressFamilies: fams, Interfaces: ifaces, Neighbors: ns}}
	}
	nb := func(iface, address string) v1.UnderlayNeighbor {
		return v1.UnderlayNeighbor{Interface: iface, Address: address, RemoteASN: "external"}
	}
	cases := []struct {
		name      string
		spec      *v1.NodeNetworkConfigSpec
		families  []frr.Family
		neighbors string // interface/address of each neighbour
		err       string
	}{
		{name: "IPv4 as before", spec: spec("10.0.0.1", nil, []string{"eth0"}, nb("", "192.0.2.1")),
			families: []frr.Family{frr.FamilyIPv4}, neighbors: "/192.0.2.1 eth0/"},
		{name: "IPv6-only: numbered, link-local on eth1 (no second session there), unnumbered eth0",
			spec:     spec("2001:db8:ff::1", nil, []string{"eth0", "eth1"}, nb("", "2001:db8::1"), nb("eth1", "fe80::1")),
			families: []frr.Family{frr.FamilyIPv6}, neighbors: "/2001:db8::1 eth1/fe80::1 eth0/"},
		{name: "dual-stack, IPv6 VTEP", spec: spec("2001:db8:ff::1", []v1.IPFamily{v1.IPv6, v1.IPv4}, nil, nb("", "192.0.2.1"), nb("", "2001:db8::1")),
			families: []frr.Family{frr.FamilyIPv4, frr.FamilyIPv6}, neighbors: "/192.0.2.1 /2001:db8::1"},
		{name: "IPv6 neighbour in an IPv4 underlay", spec: spec("10.0.0.1", nil, nil, nb("", "2001:db8::1")),
			err: `underlay.neighbors[0].address: Invalid value: "2001:db8::1": an IPv6 session, but the underlay carries IPv4 only`},
		{name: "link-local without interface", spec: spec("2001:db8:ff::1", nil, nil, nb("", "fe80::1")),
			err: `underlay.neighbors[0].interface: Required value: IPv6 link-local address fe80::1`},
		{name: "VTEP of a family the underlay does not carry", spec: spec("2001:db8:ff::1", []v1.IPFamily{v1.IPv4}, nil),
			err: `underlay.vtepAddress: Invalid value: "2001:db8:ff::1": an IPv6 VTEP address, but the underlay carries IPv4 only`},
		{name: "bad VTEP", spec: spec("vtep", nil, nil), err: `underlay.vtepAddress: Invalid value: "vtep": not an IP address`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NodeConfig(context.Background(), tc.spec, noPasswords)
			if tc.err != "" {
				if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want an invalid-input error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Underlay.Families, tc.families) || c.Underlay.VTEPSource.String() != tc.spec.Underlay.VTEPAddress {
				t.Errorf("families %v, VTEP %s; want %v, %s", c.Underlay.Families, c.Underlay.VTEPSource, tc.families, tc.spec.Underlay.VTEPAddress)
			}
			var keys []string
			for _, n := range c.Underlay.Neighbors {
				a := ""
				if n.Address.IsValid() {
					a = n.Address.String()
				}
				keys = append(keys, n.Interface+"/"+a)
			}
			if got := strings.Join(keys, " "); got != tc.neighbors {
				t.Errorf("neighbours %q, want %q", got, tc.neighbors)
			}
			if _, err := frr.Render(c); err != nil {
				t.Errorf("render: %v", err)
			}
		})
	}
}

// EVPN with an IPv6 VTEP renders for FRR 10.6 and later only: older releases announce its routes with an IPv4 next
// hop, so the agent refuses with the release it renders for.
func TestIPv6VTEPNeedsFRR106(t *testing.T) {
	s := &v1.NodeNetworkConfigSpec{Revision: "r1",
		Underlay: v1.UnderlaySpec{ASN: 65001, RouterID: "10.0.0.1", VTEPAddress: "2001:db8:ff::1", Interfaces: []string{"eth0"}},
		Layer2s:  []v1.NodeLayer2{{Name: "l2", VLAN: 10, VNI: 1010, MTU: 1500}}}
	c, err := NodeConfig(context.Background(), s, noPasswords)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v    frr.Version
		want string
	}{
		{frr.Version{Major: 8, Minor: 4}, "needs FRR 10.6 or later; FRR 8.4"},
		{frr.Version{}, "needs FRR 10.6 or later; FRR 10.3"},
		{frr.Version{Major: 10, Minor: 6}, ""},
	} {
		c.FRR = tc.v
		out, err := frr.Render(c)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("FRR %s: %v", tc.v, err)
		case tc.want == "" && !strings.Contains(string(out), "  network 2001:db8:ff::1/128\n"):
			t.Errorf("FRR %s: the VTEP is not announced:\n%s", tc.v, out)
		case tc.want != "" && (!errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("FRR %s: err = %v, want %q", tc.v, err, tc.want)
		}
	}
	// Static flooding keeps the network out of EVPN: any release serves it.
	s.Layer2s[0].Flooding = &v1.Flooding{Mode: v1.FloodingStatic, Peers: []string{"2001:db8:ff::2"}}
	if c, err = NodeConfig(context.Background(), s, noPasswords); err != nil {
		t.Fatal(err)
	}
	c.FRR = frr.Version{Major: 8, Minor: 4}
	if _, err := frr.Render(c); err != nil {
		t.Errorf("static flooding over an IPv6 VTEP on FRR 8.4: %v", err)
	}
}
