package bpftables

import (
	"errors"
	"strings"
	"testing"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/pkg/maps"
)

var links = map[string]int{"eth0": 2, "eth1": 3, "br.red": 10, "vr.red": 11, "veth9": 20}

func lookup(name string) (int, bool) {
	i, ok := links[name]
	return i, ok
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
		in   Input
		want maps.Tables
	}{
		{"route and pass, VLANs of one device, no VRF device", nil, Input{},
			maps.Tables{
				Interfaces: []maps.Interface{
					{Ifindex: 2, VRF: 1, Mode: maps.ModePass},
					{Ifindex: 2, VLAN: 100, VRF: 3, Mode: maps.ModeRoute},
					{Ifindex: 10, VRF: 3, Mode: maps.ModeRoute},
				},
				VRFs: []maps.VRF{{ID: 1, TableID: 254}, {ID: 3, TableID: 1_000_000_100, VNI: 100}},
			}},
		{"VRF device as lookup interface", nil, Input{LookupDevices: map[string]string{"red": "vr.red"}},
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
		}, Input{}, maps.Tables{
			Interfaces: []maps.Interface{{Ifindex: 3, Mode: maps.ModeRedirect, Strict: true}},
			VRFs:       []maps.VRF{{ID: 1, TableID: 254}, {ID: 3, TableID: 1_000_000_100, VNI: 100}},
			Redirects:  []maps.Redirect{{Ifindex: 3, EgressIfindex: 20}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			if tc.edit != nil {
				tc.edit(s)
			}
			tc.in.Links = lookup
			got, err := Tables(s, tc.in)
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
		{"redirect without target", func(s *v1.NodeNetworkConfigSpec) {
			s.DataPlane.Interfaces[0].Mode = v1.ModeRedirect
		}, []string{"dataplane.interfaces[0].redirectTarget"}, false},
		{"VRF id out of range", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[0].ID = 4096 }, []string{"vrfs[0].id: Invalid value: 4096: BPF VRF id must be within 1..4095"}, false},
		{"VRF id negative", func(s *v1.NodeNetworkConfigSpec) { s.VRFs[0].ID = -1 }, []string{"vrfs[0].id: Invalid value: -1"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			tc.edit(s)
			_, err := Tables(s, Input{Links: lookup})
			if !errors.Is(err, validation.ErrInvalid) {
				t.Fatalf("error %v, want validation.ErrInvalid", err)
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
	if _, err := Revision(s); !errors.Is(err, validation.ErrInvalid) || !strings.Contains(err.Error(), "expectedMapVersion") {
		t.Fatalf("mismatching expectedMapVersion: %v", err)
	}
}
