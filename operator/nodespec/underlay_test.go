package nodespec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// TestBuildUnderlayFamilies: the underlay of IPv4, IPv6-only and dual-stack fabrics as the operator builds it
// from its options and the Node (annotations, InternalIPs), and the Node problems it refuses (ErrNodeIncomplete,
// naming the annotation or field and the value).
func TestBuildUnderlayFamilies(t *testing.T) {
	v6only := Underlay{ASN: 65001, Interfaces: []string{"eth1"}, Families: []v1.IPFamily{v1.IPv6}, VTEPFamily: v1.IPv6}
	dual := Underlay{ASN: 65001, Interfaces: []string{"eth1"}, Families: []v1.IPFamily{v1.IPv4, v1.IPv6}, VTEPFamily: v1.IPv4}
	tests := []struct {
		name      string
		u         Underlay
		ann       map[string]string
		addrs     []string // the Node's InternalIPs; nil: node()'s fd00::1 and 192.0.2.10
		vtep      string
		neighbors []string // interface/address
		err       string
	}{
		{name: "IPv4 as before: VTEP = router id, unnumbered uplinks", u: opts().Underlay,
			vtep: "192.0.2.10", neighbors: []string{"eth1/", "eth2/"}},
		{name: "IPv6 VTEPs from the Node's IPv6 InternalIP", u: v6only, addrs: []string{"192.0.2.10", "fe80::1", "2001:db8::10"},
			vtep: "2001:db8::10", neighbors: []string{"eth1/"}},
		{name: "IPv6 VTEP annotation, numbered and link-local neighbours by annotation", u: v6only,
			ann:  map[string]string{AnnotationVTEPAddress: "2001:db8:ff::10", AnnotationUnderlayNeighbors: "2001:db8:0:1::1, fe80::1%eth2"},
			vtep: "2001:db8:ff::10", neighbors: []string{"eth1/", "/2001:db8:0:1::1", "eth2/fe80::1"}},
		{name: "a link-local neighbour replaces the unnumbered session on its uplink", u: v6only,
			ann:  map[string]string{AnnotationVTEPAddress: "2001:db8:ff::10", AnnotationUnderlayNeighbors: "fe80::1%eth1"},
			vtep: "2001:db8:ff::10", neighbors: []string{"eth1/fe80::1"}},
		{name: "dual-stack: the operator's route reflectors of both families", u: func() Underlay {
			u := dual
			u.Neighbors = []string{"10.255.0.1", "2001:db8:255::1"}
			return u
		}(), vtep: "192.0.2.10", neighbors: []string{"eth1/", "/10.255.0.1", "/2001:db8:255::1"}},

		{name: "IPv6 fabric, Node without an IPv6 InternalIP", u: v6only, addrs: []string{"192.0.2.10", "fe80::1"},
			err: `metadata.annotations[network.network-operator.io/vtep-address]: Required value: the fabric's VTEPs are IPv6`},
		{name: "IPv4 VTEP annotation in an IPv6 fabric", u: v6only, ann: map[string]string{AnnotationVTEPAddress: "192.0.2.99"},
			err: `metadata.annotations[network.network-operator.io/vtep-address]: Invalid value: "192.0.2.99": an IPv4 address, but the fabric's VTEPs are IPv6`},
		{name: "VTEP of a family the underlay does not carry", u: Underlay{ASN: 65001, Families: []v1.IPFamily{v1.IPv6}},
			err: `vtep-address]: Invalid value: "192.0.2.10": an IPv4 address, but the underlay carries [IPv6] only`},
		{name: "link-local VTEP annotation", u: v6only, ann: map[string]string{AnnotationVTEPAddress: "fe80::10"},
			err: `vtep-address]: Invalid value: "fe80::10": not a VTEP address the fabric can route`},
		{name: "IPv6 neighbour in an IPv4 underlay", u: opts().Underlay, ann: map[string]string{AnnotationUnderlayNeighbors: "2001:db8::1"},
			err: `metadata.annotations[network.network-operator.io/underlay-neighbors][0].address: Invalid value: "2001:db8::1": an IPv6 session, but the underlay carries IPv4 only`},
		{name: "link-local neighbour without interface", u: v6only, ann: map[string]string{AnnotationUnderlayNeighbors: "fe80::1"},
			err: `underlay-neighbors][0].interface: Required value: IPv6 link-local address fe80::1`},
		{name: "neighbour twice", u: func() Underlay { u := v6only; u.Neighbors = []string{"2001:db8::1", "2001:DB8::1"}; return u }(),
			err: `underlay.neighbors[1]: Duplicate value: "2001:DB8::1"`},
		{name: "not an address", u: opts().Underlay, ann: map[string]string{AnnotationUnderlayNeighbors: "spine-1"},
			err: `underlay-neighbors][0].address: Invalid value: "spine-1": not an IP address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := node("n", nil, tt.ann)
			if tt.addrs != nil {
				n.Status.Addresses = nil
				for _, a := range tt.addrs {
					n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a})
				}
			}
			o := opts()
			o.Underlay = tt.u
			spec, err := Build(&v1.NetworkConfigRevisionSpec{Revision: "r"}, n, nil, o)
			if tt.err != "" {
				if !errors.Is(err, ErrNodeIncomplete) || errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want a Node problem containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			u := spec.Underlay
			var got []string
			for _, nb := range u.Neighbors {
				got = append(got, nb.Interface+"/"+nb.Address)
				if nb.RemoteASN != "external" {
					t.Errorf("neighbour %+v: remote AS %q, want external", nb, nb.RemoteASN)
				}
			}
			if u.VTEPAddress != tt.vtep || !slices.Equal(got, tt.neighbors) || !slices.Equal(u.AddressFamilies, tt.u.Families) {
				t.Errorf("underlay VTEP %s, neighbours %v, families %v; want %s, %v, %v", u.VTEPAddress, got, u.AddressFamilies,
					tt.vtep, tt.neighbors, tt.u.Families)
			}
		})
	}
}
