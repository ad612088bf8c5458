package frr

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sixHints is a base with exactly the hints das-schiff's README documents.
const sixHints = `vrf mgmt_vrf
 vni 4000
exit-vrf
!
#++{{.VRFs}}
router bgp 65000 vrf default
 bgp router-id 10.0.0.1
 no bgp default ipv4-unicast
 neighbor fabric peer-group
 neighbor fabric remote-as internal
#++{{.Neighbors}}
 !
 address-family ipv4 unicast
  neighbor fabric activate
#++{{.NeighborsV4}}
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor fabric activate
  advertise-all-vni
  vni 300
  exit-vni
 exit-address-family
exit
!
#++{{.BGP}}
ip prefix-list pl_peer_base_in seq 10 permit 10.0.0.0/8
#++{{.PrefixLists}}
route-map rm_base permit 10
exit
#++{{.RouteMaps}}
`

func brownfieldErr(t *testing.T, b Brownfield, cfg NodeConfig, want ...string) {
	t.Helper()
	_, err := RenderBrownfield(b, &cfg)
	if !errors.Is(err, ErrBaseConfig) {
		t.Fatalf("err = %v, want ErrBaseConfig", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %q, want it to contain %q", err, w)
		}
	}
}

func TestBrownfieldDasSchiffHints(t *testing.T) {
	cfg := NodeConfig{
		Underlay: Underlay{ASN: 65000, RouterID: addr("10.0.0.1")},
		L2VNIs:   []L2VNI{{VNI: 100}, {VNI: 200}},
		VRFs: []VRF{{Name: "vr.red", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 10,
			Import: []PrefixItem{{CIDR: pfx("10.1.0.0/16"), Action: Permit}}}}}},
	}
	out, err := RenderBrownfield(Brownfield{Base: []byte(sixHints)}, &cfg)
	if err != nil {
		t.Fatalf("six das-schiff hints, auto L2VNIs: %v", err)
	}
	// advertise-all-vni derives auto L2VNIs: nothing to render without the hint. "vrf default" is dropped.
	if strings.Contains(string(out), "vni 100") || strings.Contains(string(out), "vrf default") ||
		!strings.Contains(string(out), "\nrouter bgp 65000\n bgp router-id 10.0.0.1\n") {
		t.Errorf("unexpected output:\n%s", out)
	}

	explicit := cfg
	explicit.L2VNIs = []L2VNI{{VNI: 100}, {VNI: 101, RD: "10.0.0.1:101"}}
	brownfieldErr(t, Brownfield{Base: []byte(sixHints)}, explicit,
		"missing hint #++{{.L2VNIs}}: the RD and route targets of L2VNI 101 would be lost", "inside address-family l2vpn evpn")

	v6 := cfg
	v6.VRFs = []VRF{{Name: "vr.red", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 10,
		Import: []PrefixItem{{CIDR: pfx("fd00:1::/48"), Action: Permit}}}}}}
	brownfieldErr(t, Brownfield{Base: []byte(sixHints)}, v6,
		"missing hint #++{{.NeighborsV6}}: the default BGP instance's ipv6 unicast lines of vr.red, import vrf route-map rm6_cluster_import would be lost")

	// A routing table is imported in both families: das-schiff's six hints lose its IPv6 routes.
	tables := cfg
	tables.RoutingTables = []RoutingTable{{Name: "taas.100", TableID: 100}}
	brownfieldErr(t, Brownfield{Base: []byte(sixHints)}, tables,
		"missing hint #++{{.NeighborsV6}}: the default BGP instance's ipv6 unicast lines of taas.100, import vrf route-map rm6_cluster_import would be lost")
	brownfieldErr(t, Brownfield{Base: []byte(strings.Replace(sixHints, "#++{{.BGP}}\n", "", 1))}, tables,
		"missing hint #++{{.BGP}}: the BGP instance of VRF vr.red, routing table taas.100 would be lost")
	tables.VRFs = nil
	brownfieldErr(t, Brownfield{Base: []byte(strings.Replace(sixHints, "#++{{.BGP}}\n", "", 1))}, tables,
		"missing hint #++{{.BGP}}: the BGP instance of routing table taas.100 would be lost")
}

func TestBrownfieldDefaultVRF(t *testing.T) {
	for in, want := range map[string]string{
		"router bgp 65000 vrf default\n":          "router bgp 65000\n",
		"router bgp 4200000101 vrf default  \r\n": "router bgp 4200000101  \r\n",
		" router bgp 65000 vrf default\n":         " router bgp 65000\n",
		"router bgp 65000 vrf default-x\n":        "router bgp 65000 vrf default-x\n",
		"router bgp 65000 vrf red\n":              "router bgp 65000 vrf red\n",
	} {
		if got := normalizeDefaultVRF(in); got != want {
			t.Errorf("normalizeDefaultVRF(%q) = %q, want %q", in, got, want)
		}
	}
}

// A route-map the base refers to by das-schiff's name (rm_<vrf>_export for VRF vr.<vrf>) takes that name, with
// every reference; the base's own entries of it stay, its default deny is not rendered twice.
func TestBrownfieldDasSchiffNames(t *testing.T) {
	base := sixHints + `route-map rm_red_export deny 65535
exit
route-map rm_base permit 20
 call rm_red_export
exit
`
	cfg := NodeConfig{
		Underlay: Underlay{ASN: 65000, RouterID: addr("10.0.0.1")},
		VRFs: []VRF{{Name: "vr.red", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 10,
			Import: []PrefixItem{{CIDR: pfx("10.1.0.0/16"), Action: Permit}},
			Export: []PrefixItem{{CIDR: pfx("10.250.0.0/16"), Action: Permit}}}}}},
	}
	out, err := RenderBrownfield(Brownfield{Base: []byte(base)}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"  import vrf route-map rm_red_export\n", "route-map rm_red_export permit 10\n", "route-map rm_vr.red_import permit 10\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "rm_vr.red_export") || strings.Count(s, "route-map rm_red_export deny 65535") != 1 {
		t.Errorf("our name or a second default deny:\n%s", s)
	}
}

func TestBrownfieldManagementVRF(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "brownfield", "dasschiff-readme.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := dasSchiffConfig(65000, "10.0.0.1", "mgmt_vrf")
	out, err := RenderBrownfield(Brownfield{Base: base, ManagementVRFs: []string{"mgmt_vrf"}}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The base owns the management VRF: no VRF block, BGP instance or cluster import of it is rendered.
	for _, bad := range []string{"vr.mgmt_vrf", "import vrf mgmt_vrf\n  import vrf"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("output has %q:\n%s", bad, out)
		}
	}
	// Without the option the VRF is a tenant VRF whose VNI the base already uses for mgmt_vrf.
	brownfieldErr(t, Brownfield{Base: base}, cfg, "VRF vr.mgmt_vrf: VNI 4000 is already the L3VNI of VRF mgmt_vrf in the base (base line 10: vni 4000)")
	// A hook the base does not have would lose the routes.
	noHook := strings.ReplaceAll(string(base), "rm_mgmt_vrf_export", "rm_other")
	brownfieldErr(t, Brownfield{Base: []byte(noHook), ManagementVRFs: []string{"mgmt_vrf"}}, cfg,
		"route-map rm_mgmt_vrf_export (das-schiff's management-VRF hook) is not in the base: its entries 10, 20 would be lost")
	// An entry at a sequence the base already has.
	taken := strings.Replace(string(base), "route-map rm_mgmt_vrf_export deny 65535", "route-map rm_mgmt_vrf_export permit 20\nexit\nroute-map rm_mgmt_vrf_export deny 65535", 1)
	brownfieldErr(t, Brownfield{Base: []byte(taken), ManagementVRFs: []string{"mgmt_vrf"}}, cfg,
		"route-map rm_mgmt_vrf_export permit 20: the base already has this entry (base line 55: route-map rm_mgmt_vrf_export permit 20)")
	// The base owns the management VRF's BGP instance.
	peered := cfg
	peered.Peerings = append(peered.Peerings, Peering{Name: "oam", VRF: "vr.mgmt_vrf", Neighbors: []netip.Addr{addr("10.99.0.1")}, RemoteASN: 64999})
	brownfieldErr(t, Brownfield{Base: base, ManagementVRFs: []string{"mgmt_vrf"}}, peered, "peering oam: VRF vr.mgmt_vrf is a management VRF")
}

// Values the base already has are refused before anything is rendered, naming the base's line.
func TestBrownfieldConflicts(t *testing.T) {
	ok := NodeConfig{Underlay: Underlay{ASN: 65000, RouterID: addr("10.0.0.1")}}
	cases := []struct {
		name string
		edit func(*NodeConfig)
		want string
	}{
		{"L3VNI of the base as L2VNI", func(c *NodeConfig) { c.L2VNIs = []L2VNI{{VNI: 4000}} },
			"L2VNI 4000: VNI 4000 is already the L3VNI of VRF mgmt_vrf in the base (base line 2: vni 4000)"},
		{"L2VNI of the base", func(c *NodeConfig) { c.VRFs = []VRF{{Name: "vr.red", VNI: 300}} },
			"VRF vr.red: VNI 300 is already an L2VNI of the base (base line 21: vni 300)"},
		{"VRF of the base", func(c *NodeConfig) { c.VRFs = []VRF{{Name: "mgmt_vrf", VNI: 5001}} },
			"VRF mgmt_vrf: the base already defines it (base line 1: vrf mgmt_vrf)"},
		{"routing table VRF of the base", func(c *NodeConfig) { c.RoutingTables = []RoutingTable{{Name: "mgmt_vrf", TableID: 100}} },
			"routing table mgmt_vrf: the base already defines its VRF (base line 1: vrf mgmt_vrf)"},
		{"neighbour of the base", func(c *NodeConfig) {
			c.Peerings = []Peering{{Name: "fabric", Neighbors: []netip.Addr{addr("10.9.0.1")}, RemoteASN: 64512}}
		}, "peering fabric: neighbor fabric is already in the base's default BGP instance (base line 9: neighbor fabric peer-group)"},
		{"prefix-list of the base", func(c *NodeConfig) {
			c.Peerings = []Peering{{Name: "base", Neighbors: []netip.Addr{addr("10.9.0.1")}, RemoteASN: 64512}}
		}, "ip prefix-list pl_peer_base_in: the base already defines it (base line 27: ip prefix-list pl_peer_base_in seq 10 permit 10.0.0.0/8)"},
		{"route-map of the base", func(c *NodeConfig) {
			c.VRFs = []VRF{{Name: "vr.red", VNI: 5001, RouteConfigs: []RouteConfig{{Seq: 10, Import: []PrefixItem{{CIDR: pfx("10.1.0.0/16"), Action: Permit}}}}}}
		}, "route-map rm_cluster_import: the base already defines it (base line 32: route-map rm_cluster_import permit 1)"},
	}
	base := sixHints + "route-map rm_cluster_import permit 1\nexit\n"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			brownfieldErr(t, Brownfield{Base: []byte(base)}, cfg, c.want)
		})
	}
}
