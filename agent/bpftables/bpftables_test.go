package bpftables

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/maps"
)

var links = map[string]int{"eth0": 2, "eth1": 3, "br.red": 10, "vr.red": 11, "veth9": 20}

func lookup(name string) (Link, bool) {
	i, ok := links[name]
	return Link{Ifindex: i}, ok
}

func spec() *v1.NodeNetworkConfigSpec {
	return &v1.NodeNetworkConfigSpec{
		VRFs: []v1.NodeVRF{{Name: "red", ID: 3, TableID: 1_000_000_100, VNI: 100}, {Name: "cluster", ID: 1, TableID: 254}},
		DataPlane: v1.DataPlaneSpec{Interfaces: []v1.DataPlaneInterface{
			{Name: "br.red", VRF: "red"},
			{Name: "eth0", VLAN: 100, VRF: "red", Mode: v1.ModeRoute},
			{Name: "eth0", VRF: "cluster", Mode: v1.ModePass},
		}},
	}
}

func TestTables(t *testing.T) {
	cases := []struct {
		name string
		edit func(s *v1.NodeNetworkConfigSpec)
		devs map[string]string
		want maps.Tables
	}{
		{"route and pass, VLANs of one device, no VRF device", nil, nil,
			maps.Tables{
				Interfaces: []maps.Interface{
					{Ifindex: 2, VRF: 1, Mode: maps.ModePass},
					{Ifindex: 2, VLAN: 100, VRF: 3, Mode: maps.ModeRoute},
					{Ifindex: 10, VRF: 3, Mode: maps.ModeRoute},
				},
				VRFs: []maps.VRF{{ID: 1, TableID: 254}, {ID: 3, TableID: 1_000_000_100, VNI: 100}},
			}},
		{"VRF device as lookup interface", nil, map[string]string{"red": "vr.red"},
			maps.Tables{
				Interfaces: []maps.Interface{
					{Ifindex: 2, VRF: 1, Mode: maps.ModePass},
					{Ifindex: 2, VLAN: 100, VRF: 3, Mode: maps.ModeRoute},
					{Ifindex: 10, VRF: 3, Mode: maps.ModeRoute},
				},
				VRFs: []maps.VRF{{ID: 1, TableID: 254}, {ID: 3, TableID: 1_000_000_100, VNI: 100, LookupIfindex: 11}},
			}},
		{"strict applies to every interface; redirect", func(s *v1.NodeNetworkConfigSpec) {
			s.DataPlane.Strict = true
			s.DataPlane.Interfaces = []v1.DataPlaneInterface{{Name: "eth1", Mode: v1.ModeRedirect, RedirectTarget: "veth9"}}
		}, nil, maps.Tables{
			Interfaces: []maps.Interface{{Ifindex: 3, Mode: maps.ModeRedirect, Strict: true}},
			VRFs:       []maps.VRF{{ID: 1, TableID: 254}, {ID: 3, TableID: 1_000_000_100, VNI: 100}},
			Redirects:  []maps.Redirect{{Ifindex: 3, EgressIfindex: 20}},
		}},
		// Mode fib: an interface of a VRF this configuration does not manage: no VRF, counted under 0.
		{"fib without a VRF", func(s *v1.NodeNetworkConfigSpec) {
			s.DataPlane.Interfaces = []v1.DataPlaneInterface{{Name: "eth1", Mode: v1.ModeFIB}}
		}, nil, maps.Tables{
			Interfaces: []maps.Interface{{Ifindex: 3, Mode: maps.ModeFIB}},
			VRFs:       []maps.VRF{{ID: 1, TableID: 254}, {ID: 3, TableID: 1_000_000_100, VNI: 100}},
		}},
		// The kernel has no rules for a VRF routing by main (nodenet notes its prefixes): neither has the router.
		{"sbr prefixes of a VRF, none of the main table's", func(s *v1.NodeNetworkConfigSpec) {
			s.VRFs[0].SBRPrefixes = []string{"10.50.0.0/24", "fd00:50::/64"}
			s.VRFs[1].SBRPrefixes = []string{"10.99.0.0/16"}
		}, nil, maps.Tables{
			Interfaces: []maps.Interface{
				{Ifindex: 2, VRF: 1, Mode: maps.ModePass},
				{Ifindex: 2, VLAN: 100, VRF: 3, Mode: maps.ModeRoute},
				{Ifindex: 10, VRF: 3, Mode: maps.ModeRoute},
			},
			VRFs: []maps.VRF{{ID: 1, TableID: 254}, {ID: 3, TableID: 1_000_000_100, VNI: 100}},
			SBR: []maps.SBR{{Prefix: netip.MustParsePrefix("10.50.0.0/24"), VRF: 3},
				{Prefix: netip.MustParsePrefix("fd00:50::/64"), VRF: 3}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			if tc.edit != nil {
				tc.edit(s)
			}
			got, err := FromSpec(s, tc.devs).Resolve(lookup)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("tables\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTablesErrors(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(s *v1.NodeNetworkConfigSpec)
		want    []string
		missing bool
	}{
		{"missing link", func(s *v1.NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].Name = "nosuch" },
			[]string{`dataplane.interfaces[0].name: Invalid value: "nosuch": does not exist on the node`}, true},
		{"unknown VRF and bad mode", func(s *v1.NodeNetworkConfigSpec) {
			s.DataPlane.Interfaces[1].VRF = "blue"
			s.DataPlane.Interfaces[2].Mode = "bounce"
		}, []string{`dataplane.interfaces[1].vrf: Invalid value: "blue": not in vrfs`, `dataplane.interfaces[2].mode: Unsupported value: "bounce"`}, false},
		{"route without VRF", func(s *v1.NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].VRF = "" },
			[]string{"dataplane.interfaces[0].vrf"}, false},
		{"fib names a VRF", func(s *v1.NodeNetworkConfigSpec) { s.DataPlane.Interfaces[0].Mode = v1.ModeFIB },
			[]string{`dataplane.interfaces[0].vrf: Invalid value: "red": mode fib routes by the table of the interface's own VRF device`}, false},
		{"redirect without target", func(s *v1.NodeNetworkConfigSpec) {
			s.DataPlane.Interfaces[0].Mode = v1.ModeRedirect
		}, []string{"dataplane.interfaces[0].redirectTarget"}, false},
		{"VRF id out of range", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[0].ID = 4096 }, []string{"vrfs[0].id: Invalid value: 4096: must be within 1..4095"}, false},
		{"VRF id negative", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[0].ID = -1 }, []string{"vrfs[0].id: Invalid value: -1: must be within 1..4095"}, false},
		{"interface of a VRF that is not in vrfs", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[1].Name = "gone" },
			[]string{`dataplane.interfaces[2].vrf: Invalid value: "cluster": not in vrfs`}, false},
		{"table rules in the spec's terms", func(s *v1.NodeNetworkConfigSpec) {
			s.VRFs[1].TableID = 0
			s.VRFs[0].VNI = -5
			s.DataPlane.Interfaces[1].VLAN = 4095
			s.DataPlane.Interfaces[2].VLAN = 100
		}, []string{
			"vrfs[1].tableID: Invalid value: 0: reserved",
			"vrfs[0].vni: Invalid value: -5: must be within 0..16777215",
			"dataplane.interfaces[1].vlan: Invalid value: 4095: must be within 0..4094",
		}, false},
		{"sbr prefix not a CIDR", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[0].SBRPrefixes = []string{"10.50.0.0/24", "10.60.0.1"} },
			[]string{`vrfs[0].sbrPrefixes[1]: Invalid value: "10.60.0.1": not a CIDR prefix`}, false},
		{"sbr prefix with host bits", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[0].SBRPrefixes = []string{"10.50.0.1/24"} },
			[]string{`vrfs[0].sbrPrefixes[0]: Invalid value: "10.50.0.1/24": not a network address (the prefix is 10.50.0.0/24)`}, false},
		{"sbr prefixes of two VRFs overlap", func(s *v1.NodeNetworkConfigSpec) {
			s.VRFs = append(s.VRFs, v1.NodeVRF{Name: "blue", ID: 4, TableID: 400, SBRPrefixes: []string{"10.50.7.0/24"}})
			s.VRFs[0].SBRPrefixes = []string{"10.50.0.0/16"}
		}, []string{`vrfs[2].sbrPrefixes[0]: Invalid value: "10.50.7.0/24": overlaps 10.50.0.0/16 of vrfs[0].sbrPrefixes[0], another VRF`}, false},
		{"two entries of one device and VLAN", func(s *v1.NodeNetworkConfigSpec) { s.DataPlane.Interfaces[2].VLAN = 100 },
			[]string{`dataplane.interfaces[2]: Invalid value: "eth0 vlan 100": duplicate of dataplane.interfaces[1]`}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			tc.edit(s)
			_, err := FromSpec(s, nil).Resolve(lookup)
			if !errors.Is(err, fielderr.ErrInvalid) {
				t.Fatalf("error %v, want fielderr.ErrInvalid", err)
			}
			if errors.Is(err, ErrMissingLink) != tc.missing {
				t.Errorf("errors.Is(ErrMissingLink) = %t, want %t", !tc.missing, tc.missing)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestRevision(t *testing.T) {
	s := spec()
	rev, err := Revision(s)
	if err != nil || rev != s.MapVersion() || len(rev) != 64 {
		t.Fatalf("revision of a spec without expectedMapVersion: %q %v", rev, err)
	}
	s.ExpectedMapVersion = s.MapVersion()
	if rev, err := Revision(s); err != nil || rev != s.ExpectedMapVersion {
		t.Fatalf("revision %q %v", rev, err)
	}
	s.ExpectedMapVersion = strings.Repeat("0", 64)
	if _, err := Revision(s); !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), "expectedMapVersion") {
		t.Fatalf("mismatching expectedMapVersion: %v", err)
	}
}

// TestCopiesThatDisagreed: the spec translator, the tables file and maps.Tables.Validate each had rules of their
// own; these are the cases where they disagreed, with the behaviour kept.
func TestCopiesThatDisagreed(t *testing.T) {
	redirects := func(targets ...string) *v1.NodeNetworkConfigSpec {
		s := spec()
		s.DataPlane.Interfaces = nil
		for i, target := range targets {
			s.DataPlane.Interfaces = append(s.DataPlane.Interfaces,
				v1.DataPlaneInterface{Name: "eth1", VLAN: int32(i * 10), Mode: v1.ModeRedirect, RedirectTarget: target})
		}
		return s
	}
	cases := []struct {
		name string
		spec *v1.NodeNetworkConfigSpec
		want string // "" = valid
	}{
		// The spec translator kept the first target and dropped the other silently; now it is an error.
		{"VLANs of one device, different targets", redirects("veth9", "eth0"),
			`dataplane.interfaces[1].redirectTarget: Invalid value: "eth0": differs from dataplane.interfaces[0].redirectTarget "veth9"`},
		{"VLANs of one device, one target", redirects("veth9", "veth9"), ""},
		// The tables file refused a redirect to the ingress interface, maps.Tables accepted it: a redirect does
		// not decrement the TTL, so the table rule refuses it now, for every source.
		{"redirect to itself", redirects("eth1"),
			`dataplane.interfaces[0].redirectTarget: Invalid value: "eth1": the same interface as the ingress interface`},
		// The spec translator refused a negative VNI as "must be within 0..", the file too, maps cannot see it:
		// the number that does not fit is refused by the table rule, reported with the spec's value.
		{"VNI that does not fit 32 bits", func() *v1.NodeNetworkConfigSpec { s := spec(); s.VRFs[0].VNI = -1; return s }(),
			"vrfs[0].vni: Invalid value: -1: must be within 0..16777215"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromSpec(tc.spec, nil).Resolve(lookup)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, fielderr.ErrInvalid):
				t.Fatalf("error %v does not match fielderr.ErrInvalid", err)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	var p Placeholders
	a, b := p.Ifindex("a"), p.Ifindex("b")
	if a != placeholderBase || b != placeholderBase+1 || p.Ifindex("a") != a || len(p.Names) != 2 {
		t.Fatalf("placeholders a=%d b=%d names %v", a, b, p.Names)
	}
	// A missing link is reported once per field and does not hide the table rules.
	s := spec()
	s.DataPlane.Interfaces[0].Name = "nosuch"
	s.VRFs[1].TableID = 0
	_, err := FromSpec(s, nil).Resolve(lookup)
	if !errors.Is(err, ErrMissingLink) || !strings.Contains(err.Error(), "vrfs[1].tableID") ||
		strings.Count(err.Error(), "nosuch") != 1 {
		t.Fatalf("error %v", err)
	}
}

// TestPeerLink: only a veth whose other end is in another namespace, with the veth's own root qdisc, takes the
// peer path.
func TestPeerLink(t *testing.T) {
	cases := []struct {
		kind      string
		elsewhere bool
		qdisc     string
		want      bool
	}{
		{"veth", true, "noqueue", true},
		{"veth", true, "", true},
		{"veth", false, "noqueue", false}, // both ends here: no peer namespace to enter
		{"veth", true, "tbf", false},      // shaped: redirect_peer would skip the qdisc
		{"bridge", true, "noqueue", false},
		{"vxlan", false, "noqueue", false},
	}
	for _, tc := range cases {
		if got := PeerLink(tc.kind, tc.elsewhere, func() (string, error) { return tc.qdisc, nil }); got != tc.want {
			t.Errorf("PeerLink(%q, %v, %q) = %v, want %v", tc.kind, tc.elsewhere, tc.qdisc, got, tc.want)
		}
	}
}

// TestLinkOf: the kernel link's kind and IFLA_LINK_NETNSID decide, and the root qdisc is asked about only for a
// veth whose peer is elsewhere; a failed qdisc query leaves the ordinary path.
func TestLinkOf(t *testing.T) {
	root := func(kind string) []netlink.Qdisc {
		return []netlink.Qdisc{&netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{Parent: netlink.HANDLE_ROOT}, QdiscType: kind}}
	}
	veth := func(nsid int) netlink.Link {
		return &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "np1", Index: 7, NetNsID: nsid}}
	}
	cases := []struct {
		name   string
		link   netlink.Link
		qdiscs []netlink.Qdisc
		err    error
		want   Link
		asked  bool
	}{
		{"veth to a pod", veth(3), root("noqueue"), nil, Link{Ifindex: 7, Peer: true}, true},
		{"veth shaped by tbf", veth(3), root("tbf"), nil, Link{Ifindex: 7}, true},
		{"qdisc query fails", veth(3), nil, errors.New("boom"), Link{Ifindex: 7}, true},
		{"veth pair in this namespace", veth(-1), root("noqueue"), nil, Link{Ifindex: 7}, false},
		{"bridge", &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Index: 9, NetNsID: -1}}, nil, nil, Link{Ifindex: 9}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			got := LinkOf(tc.link, func(netlink.Link) ([]netlink.Qdisc, error) { asked = true; return tc.qdiscs, tc.err })
			if got != tc.want || asked != tc.asked {
				t.Errorf("LinkOf = %+v (qdiscs asked: %v), want %+v (%v)", got, asked, tc.want, tc.asked)
			}
		})
	}
}

// TestTablesPeer: a link with Peer gives every entry of its interface Peer; others stay without.
func TestTablesPeer(t *testing.T) {
	peers := func(name string) (Link, bool) {
		l, ok := lookup(name)
		l.Peer = name == "eth0"
		return l, ok
	}
	got, err := FromSpec(spec(), nil).Resolve(peers)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range got.Interfaces {
		if in.Peer != (in.Ifindex == 2) {
			t.Errorf("interface %d vlan %d: peer %v", in.Ifindex, in.VLAN, in.Peer)
		}
	}
}
