/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package validation

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// TestValidateUnderlay: the address families of an underlay (IPv4-only, IPv6-only, dual-stack) and what does not
// fit them, each error naming the field and value.
func TestValidateUnderlay(t *testing.T) {
	under := func(vtep string, fams []v1.IPFamily, ns ...v1.UnderlayNeighbor) *v1.UnderlaySpec {
		return &v1.UnderlaySpec{ASN: 65001, RouterID: "10.0.0.1", VTEPAddress: vtep, AddressFamilies: fams, Neighbors: ns}
	}
	nb := func(iface, address string) v1.UnderlayNeighbor {
		return v1.UnderlayNeighbor{Interface: iface, Address: address, RemoteASN: "external"}
	}
	dual := []v1.IPFamily{v1.IPv4, v1.IPv6}
	tests := []struct {
		name string
		u    *v1.UnderlaySpec
		want [][]string
	}{
		{name: "IPv4 as before", u: under("10.0.0.1", nil, nb("eth0", ""), nb("", "192.168.0.1"))},
		{name: "IPv6-only: numbered, unnumbered and link-local neighbours", u: under("2001:db8:ff::1", nil,
			nb("eth0", ""), nb("", "2001:db8::1"), nb("eth1", "fe80::1"))},
		{name: "IPv6-only, said so", u: under("2001:db8:ff::1", []v1.IPFamily{v1.IPv6}, nb("", "2001:db8::1"))},
		{name: "dual-stack with an IPv4 VTEP: a session per family", u: under("10.0.0.1", dual,
			nb("", "192.168.0.1"), nb("", "2001:db8::1"), nb("eth0", ""))},
		{name: "dual-stack with an IPv6 VTEP", u: under("2001:db8:ff::1", dual, nb("", "192.168.0.1"))},
		{name: "no VTEP address: IPv4", u: under("", nil, nb("", "192.168.0.1"))},

		{name: "IPv6 VTEP in an IPv4-only underlay", u: under("2001:db8:ff::1", []v1.IPFamily{v1.IPv4}),
			want: [][]string{{`underlay.vtepAddress: Invalid value: "2001:db8:ff::1"`, "an IPv6 VTEP address, but the underlay carries IPv4 only", "add IPv6"}}},
		{name: "IPv4 VTEP in an IPv6-only underlay", u: under("10.0.0.1", []v1.IPFamily{v1.IPv6}),
			want: [][]string{{`underlay.vtepAddress: Invalid value: "10.0.0.1"`, "carries IPv6 only"}}},
		{name: "IPv6 neighbour in an IPv4-only underlay", u: under("10.0.0.1", nil, nb("", "2001:db8::1")),
			want: [][]string{{`underlay.neighbors[0].address: Invalid value: "2001:db8::1"`, "an IPv6 session, but the underlay carries IPv4 only",
				"unnumbered session"}}},
		{name: "IPv4 neighbour in an IPv6-only underlay", u: under("2001:db8:ff::1", nil, nb("", "192.168.0.1")),
			want: [][]string{{`underlay.neighbors[0].address: Invalid value: "192.168.0.1"`, "an IPv4 session, but the underlay carries IPv6 only", "add IPv4"}}},
		{name: "link-local without interface", u: under("2001:db8:ff::1", nil, nb("", "fe80::1")),
			want: [][]string{{`underlay.neighbors[0].interface: Required value`, "IPv6 link-local address fe80::1", "name the interface"}}},
		{name: "link-local in an IPv4-only underlay", u: under("10.0.0.1", nil, nb("eth0", "fe80::1")),
			want: [][]string{{`underlay.neighbors[0].address: Invalid value: "fe80::1"`, "an IPv6 session"}}},
		{name: "zoned address", u: under("2001:db8:ff::1", nil, nb("", "fe80::1%eth0")),
			want: [][]string{{`underlay.neighbors[0].address: Invalid value: "fe80::1%eth0"`, "write fe80::1 and put eth0 into interface"}}},
		{name: "interface with a routed address", u: under("10.0.0.1", nil, nb("eth0", "192.168.0.1")),
			want: [][]string{{`underlay.neighbors[0].interface: Invalid value: "eth0"`, "with an IPv6 link-local address only; 192.168.0.1 is routed"}}},
		{name: "neither interface nor address", u: under("10.0.0.1", nil, nb("", "")),
			want: [][]string{{`underlay.neighbors[0]: Required value`}}},
		{name: "not an address", u: under("10.0.0.1", nil, nb("", "spine-1")),
			want: [][]string{{`underlay.neighbors[0].address: Invalid value: "spine-1": not an IP address`}}},
		{name: "IPv4-mapped neighbour", u: under("10.0.0.1", nil, nb("", "::ffff:192.168.0.1")),
			want: [][]string{{`underlay.neighbors[0].address: Invalid value: "::ffff:192.168.0.1"`, "write 192.168.0.1"}}},
		{name: "bad interface name", u: under("10.0.0.1", nil, nb("uplink-to-spine-1", "")),
			want: [][]string{{`underlay.neighbors[0].interface: Invalid value: "uplink-to-spine-1"`, "at most 15"}}},
		{name: "duplicate neighbour in another spelling", u: under("2001:db8:ff::1", nil, nb("", "2001:db8::1"), nb("", "2001:DB8:0::1")),
			want: [][]string{{`underlay.neighbors[1]: Duplicate value: "2001:db8::1"`}}},
		{name: "unknown and repeated family", u: under("10.0.0.1", []v1.IPFamily{v1.IPv4, "IPv5", v1.IPv4}),
			want: [][]string{{`underlay.addressFamilies[1]: Unsupported value: "IPv5"`}, {`underlay.addressFamilies[2]: Duplicate value: "IPv4"`}}},
		{name: "link-local VTEP", u: under("fe80::1", nil),
			want: [][]string{{`underlay.vtepAddress: Invalid value: "fe80::1"`, "not a VTEP address the fabric can route"}}},
		{name: "IPv4-mapped VTEP", u: under("::ffff:10.0.0.1", nil),
			want: [][]string{{`underlay.vtepAddress: Invalid value: "::ffff:10.0.0.1"`, "write 10.0.0.1"}}},
		{name: "VTEP not an address", u: under("vtep-1", nil),
			want: [][]string{{`underlay.vtepAddress: Invalid value: "vtep-1": not an IP address`}}},
		{name: "bad uplink", u: &v1.UnderlaySpec{VTEPAddress: "10.0.0.1", Interfaces: []string{"eth0", "a/b"}},
			want: [][]string{{`underlay.interfaces[1]: Invalid value: "a/b"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ValidateUnderlay(field.NewPath("underlay"), tt.u), tt.want)
		})
	}
}

func TestUnderlayFamilies(t *testing.T) {
	for _, tt := range []struct {
		u    v1.UnderlaySpec
		want []v1.IPFamily
	}{
		{v1.UnderlaySpec{VTEPAddress: "10.0.0.1"}, []v1.IPFamily{v1.IPv4}},
		{v1.UnderlaySpec{VTEPAddress: "2001:db8::1"}, []v1.IPFamily{v1.IPv6}},
		{v1.UnderlaySpec{}, []v1.IPFamily{v1.IPv4}},
		{v1.UnderlaySpec{VTEPAddress: "10.0.0.1", AddressFamilies: []v1.IPFamily{v1.IPv6, v1.IPv4}}, []v1.IPFamily{v1.IPv4, v1.IPv6}},
		{v1.UnderlaySpec{VTEPAddress: "10.0.0.1", AddressFamilies: []v1.IPFamily{"IPv5"}}, []v1.IPFamily{v1.IPv4}},
	} {
		if got := UnderlayFamilies(&tt.u); !slices.Equal(got, tt.want) {
			t.Errorf("UnderlayFamilies(%+v) = %v, want %v", tt.u, got, tt.want)
		}
	}
}

// At admission (with a snapshot that knows the fabric's VTEP family) static flooding peers of the other family are
// refused, for layer-2 networks and Links alike; without the family (or a snapshot) only one family per list.
func TestFloodingPeersOfTheFabricFamily(t *testing.T) {
	static := func(peers ...string) *v1.Flooding { return &v1.Flooding{Mode: v1.FloodingStatic, Peers: peers} }
	l2With := func(f *v1.Flooding) *v1.Layer2NetworkConfiguration {
		return l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.Flooding = f })
	}
	linkWith := func(f *v1.Flooding) *v1.Link {
		l := vxlanLink("x", "vxx", 4242, "", "")
		l.Spec.VXLAN.Flooding = f
		return l
	}
	tests := []struct {
		name   string
		family v1.IPFamily
		f      *v1.Flooding
		want   string // the error of the layer-2 network; the Link's is the same under spec.vxlan
	}{
		{name: "IPv6 peers, IPv6 fabric", family: v1.IPv6, f: static("2001:db8::1", "2001:db8::2")},
		{name: "IPv4 peers, IPv4 fabric", family: v1.IPv4, f: static("192.0.2.1")},
		{name: "family not known", f: static("2001:db8::1")},
		{name: "every node of the network", family: v1.IPv6, f: static()},
		{name: "evpn", family: v1.IPv6, f: &v1.Flooding{Mode: v1.FloodingEVPN}},
		{name: "IPv4 peer, IPv6 fabric", family: v1.IPv6, f: static("192.0.2.1"),
			want: `flooding.peers[0]: Invalid value: "192.0.2.1": an IPv4 address, but the fabric's VTEPs are IPv6`},
		{name: "IPv6 peer, IPv4 fabric", family: v1.IPv4, f: static("2001:db8::1"),
			want: `flooding.peers[0]: Invalid value: "2001:db8::1": an IPv6 address, but the fabric's VTEPs are IPv4`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Snapshot{VTEPFamily: tt.family}
			var want [][]string
			if tt.want != "" {
				want = [][]string{{"spec." + tt.want}}
			}
			checkErrs(t, ValidateLayer2NetworkConfiguration(l2With(tt.f), s), want)
			if tt.want != "" {
				want = [][]string{{"spec.vxlan." + tt.want}}
			}
			link := linkWith(tt.f)
			if tt.f.Mode != v1.FloodingStatic {
				link.Spec.VXLAN.Master = &v1.LinkReference{Name: "br"} // EVPN needs a bridge
			}
			checkErrs(t, ValidateLink(link, s), want)
		})
	}
}
