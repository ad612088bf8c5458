package frr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/pkg/fielderr"
)

func TestValidateNamesFieldAndValue(t *testing.T) {
	base := func() NodeConfig { return fullConfig() }
	cases := []struct {
		name   string
		modify func(c *NodeConfig)
		want   string // field, value and reason as the error shows them
	}{
		{"asn reserved", func(c *NodeConfig) { c.Underlay.ASN = 4294967295 }, `underlay.asn: Invalid value: 4294967295: AS number must be within 1..4294967294`},
		{"peering asn reserved", func(c *NodeConfig) { c.Peerings[0].RemoteASN = 4294967295 }, `peerings[0].remoteASN: Invalid value: 4294967295`},
		{"remote-as AS_TRANS", func(c *NodeConfig) { c.Underlay.PeerGroups[0].RemoteAS = "23456" }, `underlay.peerGroups[0].remoteAS: Invalid value: 23456: AS 23456 is AS_TRANS`},
		{"unknown well-known community", func(c *NodeConfig) { c.VRFs[0].RouteConfigs[0].Communities = []string{"no-export-subconfed"} },
			`vrfs[0].routeConfigs[0].communities[0]: Invalid value: "no-export-subconfed": not a BGP community`},
		{"asn zero", func(c *NodeConfig) { c.Underlay.ASN = 0 }, `underlay.asn: Invalid value: 0: AS number must be within 1..4294967294`},
		{"router id missing", func(c *NodeConfig) { c.Underlay.RouterID = netip.Addr{} }, `underlay.routerID: Invalid value: "invalid IP": must be an IPv4 address`},
		{"ipv6 vtep with EVPN on FRR 10.3", func(c *NodeConfig) {
			c.Underlay.VTEPSource, c.Underlay.Families = addr("fd00::1"), []Family{FamilyIPv4, FamilyIPv6}
		}, `underlay.vtepSource: Invalid value: "fd00::1": EVPN (L2VNI 100) with an IPv6 VTEP needs FRR 10.6 or later; FRR 10.3 announces`},
		{"ipv6 vtep with an L3VNI on FRR 8.4", func(c *NodeConfig) {
			c.FRR = Version{Major: 8, Minor: 4}
			c.L2VNIs = []L2VNI{{VNI: 100, Isolated: true}}
			c.Underlay.VTEPSource, c.Underlay.Families = addr("fd00::1"), []Family{FamilyIPv4, FamilyIPv6}
		}, `underlay.vtepSource: Invalid value: "fd00::1": EVPN (the L3VNI 5001 of VRF tenant1) with an IPv6 VTEP needs FRR 10.6 or later; FRR 8.4`},
		{"ipv6 vtep not announced", func(c *NodeConfig) {
			c.FRR, c.Underlay.VTEPSource, c.Underlay.Families = Version{Major: 10, Minor: 6}, addr("fd00::1"), []Family{FamilyIPv4}
		}, `underlay.vtepSource: Invalid value: "fd00::1": is not announced: the underlay carries ipv4 only`},
		{"link-local vtep", func(c *NodeConfig) { c.Underlay.VTEPSource = addr("fe80::1") }, `underlay.vtepSource: Invalid value: "fe80::1": must be an address the fabric routes`},
		{"ipv4 neighbour in an ipv6 underlay", func(c *NodeConfig) { c.Underlay.Families = []Family{FamilyIPv6} },
			`underlay.neighbors[0].address: Invalid value: "192.168.0.254": is an ipv4 session, but the underlay carries ipv6 only`},
		{"ipv6 neighbour in an ipv4 underlay", func(c *NodeConfig) {
			c.Underlay.Neighbors = append(c.Underlay.Neighbors, Neighbor{Address: addr("2001:db8::1"), RemoteAS: "65001"})
		}, `underlay.neighbors[1].address: Invalid value: "2001:db8::1": is an ipv6 session, but the underlay carries ipv4 only`},
		{"extended next hop on an ipv4 session", func(c *NodeConfig) { c.Underlay.Neighbors[0].ExtendedNextHop = true },
			`underlay.neighbors[0].extendedNextHop: Invalid value: true: is for IPv6 sessions; 192.168.0.254 is ipv4`},
		{"extended next hop for an ipv4 member", func(c *NodeConfig) { c.Underlay.PeerGroups[0].ExtendedNextHop = true },
			`underlay.neighbors[0].peerGroup: Invalid value: "fabric": has extendedNextHop, which is for IPv6 sessions; 192.168.0.254 is ipv4`},
		{"extended next hop on an unnumbered session", func(c *NodeConfig) {
			c.Underlay.Neighbors = append(c.Underlay.Neighbors, Neighbor{Interface: "eth0", RemoteAS: "external", ExtendedNextHop: true})
		}, `underlay.neighbors[1].extendedNextHop: Invalid value: true: an unnumbered session always has extended next hops`},
		{"extended next hop for an ipv4 listen range", func(c *NodeConfig) {
			c.Underlay.PeerGroups = append(c.Underlay.PeerGroups, PeerGroup{Name: "rr6", RemoteAS: "internal", ExtendedNextHop: true,
				ListenRanges: []netip.Prefix{pfx("2001:db8::/64"), pfx("10.1.0.0/24")}})
		}, `underlay.peerGroups[1].listenRanges[1]: Invalid value: "10.1.0.0/24": is ipv4, but the group has extendedNextHop`},
		{"unknown family", func(c *NodeConfig) { c.Underlay.Families = []Family{FamilyIPv4, 5} }, `underlay.families[1]: Invalid value: 5: must be 4 or 6`},
		{"repeated family", func(c *NodeConfig) { c.Underlay.Families = []Family{FamilyIPv4, FamilyIPv4} }, `underlay.families[1]: Invalid value: "ipv4": duplicate family`},
		{"link-local neighbour without interface", func(c *NodeConfig) {
			c.Underlay.Families = []Family{FamilyIPv4, FamilyIPv6}
			c.Underlay.Neighbors = append(c.Underlay.Neighbors, Neighbor{Address: addr("fe80::1"), RemoteAS: "external"})
		}, `underlay.neighbors[1].interface: Invalid value: "": IPv6 link-local neighbour fe80::1 needs the interface it is on`},
		{"peer group of two families", func(c *NodeConfig) {
			c.Underlay.Families = []Family{FamilyIPv4, FamilyIPv6}
			c.Underlay.Neighbors = append(c.Underlay.Neighbors, Neighbor{Address: addr("2001:db8::1"), PeerGroup: "fabric"})
		}, `underlay.neighbors[1].peerGroup: Invalid value: "fabric": is activated in ipv4 for its member 192.168.0.254; 2001:db8::1 needs ipv6`},
		{"peer group of unnumbered and numbered", func(c *NodeConfig) {
			c.Underlay.Families = []Family{FamilyIPv4, FamilyIPv6}
			c.Underlay.Neighbors = append(c.Underlay.Neighbors, Neighbor{Interface: "eth0", PeerGroup: "fabric"})
		}, `underlay.neighbors[1].peerGroup: Invalid value: "fabric": is activated in ipv4 for its member 192.168.0.254; eth0 needs ipv4 and ipv6`},
		{"listen range of another family", func(c *NodeConfig) { c.Underlay.PeerGroups[0].ListenRanges = []netip.Prefix{pfx("2001:db8::/64")} },
			`underlay.peerGroups[0].listenRanges[0]: Invalid value: "2001:db8::/64": is ipv6, but the underlay carries ipv4 only`},
		{"bad remote-as", func(c *NodeConfig) { c.Underlay.PeerGroups[0].RemoteAS = "sixty" }, `underlay.peerGroups[0].remoteAS: Invalid value: "sixty"`},
		{"duplicate peer group", func(c *NodeConfig) {
			c.Underlay.PeerGroups = append(c.Underlay.PeerGroups, c.Underlay.PeerGroups[0])
		}, `underlay.peerGroups[1].name: Invalid value: "fabric": duplicate peer group`},
		{"neighbor address and interface", func(c *NodeConfig) { c.Underlay.Neighbors[0].Interface = "eth0" },
			`underlay.neighbors[0].interface: Invalid value: "eth0": goes with an IPv6 link-local address only (or alone: unnumbered); 192.168.0.254 is routed`},
		{"neighbor without address or interface", func(c *NodeConfig) { c.Underlay.Neighbors[0].Address = netip.Addr{} },
			`underlay.neighbors[0]: Invalid value: "": needs an address, an interface, or an IPv6 link-local address and its interface`},
		{"unknown peer group", func(c *NodeConfig) { c.Underlay.Neighbors[0].PeerGroup = "spines" }, `underlay.neighbors[0].peerGroup: Invalid value: "spines": no such peer group`},
		{"vni zero", func(c *NodeConfig) { c.L2VNIs[0].VNI = 0 }, `l2vnis[0].vni: Invalid value: 0: VNI must be within 1..16777215`},
		{"vni too big", func(c *NodeConfig) { c.L2VNIs[0].VNI = 1 << 24 }, `l2vnis[0].vni: Invalid value: 16777216`},
		{"vni used twice", func(c *NodeConfig) { c.VRFs[0].VNI = 100 }, `vrfs[0].vni: Invalid value: 100: already used by l2vnis[0].vni`},
		{"isolated with route targets", func(c *NodeConfig) { c.L2VNIs[1].Isolated = true }, `l2vnis[1].isolated: Invalid value: 101: an isolated L2VNI takes no RD or route targets`},
		{"bad rd", func(c *NodeConfig) { c.L2VNIs[1].RD = "10.0.0.1" }, `l2vnis[1].rd: Invalid value: "10.0.0.1": route target must be <asn>:<nn> or <ipv4>:<nn>`},
		{"rt out of range", func(c *NodeConfig) { c.L2VNIs[1].RouteTargets = []string{"4200000000:70000"} }, `l2vnis[1].routeTargets[0]: Invalid value: "4200000000:70000"`},
		{"wildcard export rt", func(c *NodeConfig) { c.VRFs[0].ExportRouteTargets = []string{"*:5001"} }, `vrfs[0].exportRouteTargets[0]: Invalid value: "*:5001"`},
		{"vrf named default", func(c *NodeConfig) { c.VRFs[0].Name = "default" }, `vrfs[0].name: Invalid value: "default": is the cluster VRF`},
		{"vrf name too long", func(c *NodeConfig) { c.VRFs[0].Name = "tenant-name-too-long" }, `vrfs[0].name: Invalid value: "tenant-name-too-long"`},
		{"route-map seq 65535", func(c *NodeConfig) { c.VRFs[0].RouteConfigs[0].Seq = 65535 }, `vrfs[0].routeConfigs[0].seq: Invalid value: 65535: must be 1..65534`},
		{"host bits", func(c *NodeConfig) { c.VRFs[0].RouteConfigs[0].Import[0].CIDR = pfx("10.1.2.3/16") }, `vrfs[0].routeConfigs[0].import[0].cidr: Invalid value: "10.1.2.3/16": has host bits set; FRR would store 10.1.0.0/16`},
		{"ge below length", func(c *NodeConfig) { c.VRFs[0].RouteConfigs[0].Import[0].GE = 8 }, `vrfs[0].routeConfigs[0].import[0].ge: Invalid value: 8: must be 16..32`},
		{"le below ge", func(c *NodeConfig) {
			c.VRFs[0].RouteConfigs[0].Import[0].GE, c.VRFs[0].RouteConfigs[0].Import[0].LE = 24, 20
		}, `vrfs[0].routeConfigs[0].import[0].le: Invalid value: 20`},
		{"bad action", func(c *NodeConfig) { c.VRFs[0].RouteConfigs[0].Export[0].Action = "allow" }, `vrfs[0].routeConfigs[0].export[0].action: Invalid value: "allow": must be "permit" or "deny"`},
		{"duplicate item seq", func(c *NodeConfig) { c.VRFs[0].RouteConfigs[0].Import[1].Seq = 10 }, `vrfs[0].routeConfigs[0].import[1].seq: Invalid value: 10: duplicate`},
		{"graceful restart time", func(c *NodeConfig) { c.Underlay.GracefulRestart = &GracefulRestart{RestartTime: 5000 * time.Second} },
			`underlay.gracefulRestart.restartTime: Invalid value: "1h23m20s": must be whole seconds, 1s..4095s`},
		{"bad community", func(c *NodeConfig) { c.VRFs[0].RouteConfigs[0].Communities = []string{"65536:1"} }, `vrfs[0].routeConfigs[0].communities[0]: Invalid value: "65536:1": standard community parts must be within 0..65535`},
		{"peering without range or neighbours", func(c *NodeConfig) { c.Peerings[0].ListenRanges = nil }, `peerings[0]: Invalid value: "calico": needs exactly one of listenRanges or neighbors`},
		{"peering item family", func(c *NodeConfig) { c.Peerings[0].Import[0].CIDR = pfx("fd00::/48") }, `peerings[0].import[0].cidr: Invalid value: "fd00::/48": must be IPv4 like the peering's addresses`},
		{"peering mixed families", func(c *NodeConfig) {
			c.Peerings[1].Neighbors = append(c.Peerings[1].Neighbors, addr("fd00::1"))
		}, `peerings[1].neighbors[1]: Invalid value: "fd00::1": mixes address families`},
		{"peering unknown vrf", func(c *NodeConfig) { c.Peerings[1].VRF = "tenant9" }, `peerings[1].vrf: Invalid value: "tenant9": no such VRF`},
		{"peering asn", func(c *NodeConfig) { c.Peerings[0].RemoteASN = 0 }, `peerings[0].remoteASN: Invalid value: 0`},
		{"peering name", func(c *NodeConfig) { c.Peerings[0].Name = "calico lb" }, `peerings[0].name: Invalid value: "calico lb"`},
		{"hold without keepalive", func(c *NodeConfig) { c.Peerings[0].KeepaliveTime = 0 }, `peerings[0].holdTime: Invalid value: "30s": holdTime and keepaliveTime must be set together`},
		{"keepalive not below hold", func(c *NodeConfig) { c.Peerings[0].KeepaliveTime = 30 * time.Second }, `peerings[0].keepaliveTime: Invalid value: "30s": must be below holdTime 30s`},
		{"fractional timers", func(c *NodeConfig) { c.Peerings[0].HoldTime = 1500 * time.Millisecond }, `timers must be whole seconds`},
		{"routing table without table", func(c *NodeConfig) { c.RoutingTables = []RoutingTable{{Name: "taas.0"}} },
			`routingTables[0].tableID: Invalid value: 0: must be 1..4294967295`},
		{"routing table on main", func(c *NodeConfig) { c.RoutingTables = []RoutingTable{{Name: "taas.254", TableID: 254}} },
			`routingTables[0].tableID: Invalid value: 254: is the kernel's main table`},
		{"routing table twice", func(c *NodeConfig) {
			c.RoutingTables = []RoutingTable{{Name: "taas.100", TableID: 100}, {Name: "taas.101", TableID: 100}}
		}, `routingTables[1].tableID: Invalid value: 100: already used by routingTables[0]`},
		{"routing table name twice", func(c *NodeConfig) {
			c.RoutingTables = []RoutingTable{{Name: "taas.100", TableID: 100}, {Name: "taas.100", TableID: 101}}
		}, `routingTables[1].name: Invalid value: "taas.100": already used by routingTables[0]`},
		{"routing table named like a VRF", func(c *NodeConfig) { c.RoutingTables = []RoutingTable{{Name: "tenant1", TableID: 100}} },
			`routingTables[0].name: Invalid value: "tenant1": already a VRF in vrfs`},
		{"routing table named default", func(c *NodeConfig) { c.RoutingTables = []RoutingTable{{Name: "default", TableID: 100}} },
			`routingTables[0].name: Invalid value: "default": is the cluster VRF`},
		{"routing table name too long", func(c *NodeConfig) { c.RoutingTables = []RoutingTable{{Name: "taas.1234567890123", TableID: 100}} },
			`routingTables[0].name: Invalid value: "taas.1234567890123": must be 1..15 characters`},
		{"password with space", func(c *NodeConfig) { c.Peerings[0].Password = "not secret" }, `peerings[0].password: Invalid value: "<redacted>": must be at most 80 characters without whitespace`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base()
			c.modify(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("invalid config accepted")
			}
			if !errors.Is(err, fielderr.ErrInvalid) {
				t.Errorf("errors.Is(err, fielderr.ErrInvalid) = false for %v", err)
			}
			var fe *field.Error
			if !errors.As(err, &fe) {
				t.Errorf("no *field.Error in %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "not secret") {
				t.Errorf("error leaks a password: %v", err)
			}
			if _, rerr := Render(&cfg); !errors.Is(rerr, fielderr.ErrInvalid) {
				t.Errorf("Render accepted the invalid config: %v", rerr)
			}
		})
	}
	if err := (&NodeConfig{}).Validate(); err == nil || strings.Count(err.Error(), "\n") < 1 {
		t.Errorf("empty config: want every problem reported, got %v", err)
	}
}

func TestSecretNeverPrinted(t *testing.T) {
	cfg := fullConfig()
	for _, s := range []string{
		fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprint(cfg.Peerings[0].Password),
	} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("formatted config shows the password: %s", s)
		}
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "s3cret") {
		t.Errorf("JSON shows the password")
	}
	out, err := Render(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "neighbor calico password s3cret\n") {
		t.Errorf("the config file itself must carry the password")
	}
}

func TestExplicitRTs(t *testing.T) {
	cases := []struct {
		in, want []string
	}{
		{[]string{"65000:100"}, nil}, // equal to the automatic RT: stays automatic
		{[]string{"65000:100", "65099:100"}, []string{"65099:100", "65000:100"}},
		{[]string{"65099:100"}, []string{"65099:100"}},
		{nil, []string{}},
	}
	for _, c := range cases {
		got := explicitRTs(c.in, autoRT(65000, 100))
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("explicitRTs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := autoRT(4200000101, 5001); got != "60005:5001" { // 4200000101 & 0xffff = 60005
		t.Errorf("autoRT = %s", got)
	}
}
