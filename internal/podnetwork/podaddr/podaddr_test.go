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

package podaddr

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func network(gateways ...string) *Network {
	return NetworkOf(&v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "net"},
		Spec: v1.Layer2NetworkConfigurationSpec{AnycastGateways: gateways}})
}

var path = field.NewPath("spec", "interfaces").Index(0).Child("addresses")

func TestParse(t *testing.T) {
	gw := network("10.40.0.1/24", "fd00:40::1/64", "10.41.0.1/16", "10.41.7.1/24")
	tests := []struct {
		name   string
		net    *Network
		ranges []string
		static []string
		// want: one substring per error, in order; none: the pool parses.
		want []string
	}{
		{name: "range and statics in the subnets", net: gw, ranges: []string{"10.40.0.64/27", "fd00:40::100/120"}, static: []string{"10.40.0.10", "fd00:40::10"}},
		{name: "whole IPv6 subnet but its network address", net: gw, ranges: []string{"fd00:40::8000/113"}},
		{name: "statics only", net: gw, static: []string{"10.40.0.10"}},
		{name: "range outside", net: gw, ranges: []string{"10.50.0.0/27"}, want: []string{`ranges[0]: Invalid value: "10.50.0.0/27": outside the subnets of network "net" (subnets 10.40.0.0/24, fd00:40::/64, 10.41.0.0/16, 10.41.7.0/24)`}},
		{name: "range larger than the subnet", net: gw, ranges: []string{"10.40.0.0/23"}, want: []string{`"10.40.0.0/23": outside the subnets`}},
		{name: "range holds the gateway", net: gw, ranges: []string{"10.40.0.0/30"}, want: []string{`"10.40.0.0/30": contains the gateway 10.40.0.1 of network "net"`, `contains the network address 10.40.0.0`}},
		{name: "range holds the broadcast", net: gw, ranges: []string{"10.40.0.128/25"}, want: []string{`contains the broadcast address 10.40.0.255`}},
		{name: "range holds the IPv6 subnet-router address", net: gw, ranges: []string{"fd00:40::/120"}, want: []string{`contains the gateway fd00:40::1`, `contains the network address fd00:40::`}},
		{name: "range in the more specific subnet", net: gw, ranges: []string{"10.41.7.0/25"}, want: []string{`contains the gateway 10.41.7.1`, `network address 10.41.7.0`}},
		{name: "two ranges of a family", net: gw, ranges: []string{"10.40.0.64/27", "10.40.0.128/27"}, want: []string{`ranges[1]: Invalid value: "10.40.0.128/27": a second IPv4 range: at most one range per IP family (the first is 10.40.0.64/27)`}},
		{name: "host bits", net: gw, ranges: []string{"10.40.0.65/27"}, want: []string{`not a network address (did you mean 10.40.0.64/27?)`}},
		{name: "not a CIDR", net: gw, ranges: []string{"10.40.0.64"}, want: []string{`ranges[0]: Invalid value: "10.40.0.64": not a CIDR`}},
		{name: "static is the gateway", net: gw, static: []string{"10.40.0.1"}, want: []string{`static[0]: Invalid value: "10.40.0.1": is the gateway 10.40.0.1 of network "net"`}},
		{name: "static is the broadcast", net: gw, static: []string{"10.40.0.255"}, want: []string{`is the broadcast address 10.40.0.255`}},
		{name: "static outside", net: gw, static: []string{"192.0.2.1"}, want: []string{`static[0]: Invalid value: "192.0.2.1": outside the subnets`}},
		{name: "static with length", net: gw, static: []string{"10.40.0.10/24"}, want: []string{`not an IP address (write the address alone`}},
		{name: "static twice", net: gw, static: []string{"10.40.0.10", "10.40.0.10"}, want: []string{`static[1]: Duplicate value: "10.40.0.10"`}},
		{name: "multicast", net: gw, static: []string{"224.0.0.1"}, ranges: []string{"fe80::/64"}, want: []string{`ranges[0]: Invalid value: "fe80::/64": not a unicast address`, `static[0]: Invalid value: "224.0.0.1": not a unicast`}},
		{name: "mapped", ranges: []string{"::ffff:10.0.0.0/104"}, want: []string{`IPv4-mapped IPv6 address: write the IPv4 form`}},
		{name: "empty", net: gw, want: []string{`ranges: Required value: a range or a static address (or leave addresses out)`}},
		{name: "free-form", ranges: []string{"192.168.10.0/24"}, static: []string{"192.168.10.5"}},
		{name: "free-form network without gateways", net: network(), ranges: []string{"192.168.10.0/24"}},
		{name: "free-form static outside the range", ranges: []string{"192.168.10.0/24"}, static: []string{"192.168.11.5", "fd00::1"},
			want: []string{`static[0]: Invalid value: "192.168.11.5": outside the IPv4 range of the interface: without a network subnet`, `static[1]: Invalid value: "fd00::1": outside the IPv6 range`}},
		{name: "free-form static is the range's broadcast", ranges: []string{"192.168.10.0/24"}, static: []string{"192.168.10.255"}, want: []string{`is the network or broadcast address of the range 192.168.10.0/24`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := Parse(path, &v1.PodAddresses{Ranges: tt.ranges, Static: tt.static}, tt.net)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n  %s", len(got), len(tt.want), strings.Join(got, "\n  "))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("error %d: %s\nwant it to contain %s", i, got[i], w)
				}
				if !strings.HasPrefix(got[i], "spec.interfaces[0].addresses.") {
					t.Errorf("error %d does not name the field: %s", i, got[i])
				}
			}
			if (p == nil) != (len(tt.want) > 0) {
				t.Errorf("pool %v with %d errors", p, len(errs))
			}
		})
	}
	if p, errs := Parse(path, nil, gw); p != nil || errs != nil {
		t.Errorf("no addresses: %v %v", p, errs)
	}
}

func mustParse(t *testing.T, n *Network, ranges []string, static ...string) *Pool {
	t.Helper()
	p, errs := Parse(path, &v1.PodAddresses{Ranges: ranges, Static: static}, n)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return p
}

// take hands out every address of family f, in order.
func take(p *Pool, f Family) []string {
	used := map[netip.Addr]bool{}
	var out []string
	for {
		a, ok := p.Next(f, func(a netip.Addr) bool { return used[a] })
		if !ok {
			return out
		}
		used[a.Addr()] = true
		out = append(out, a.String())
	}
}

func TestHandOut(t *testing.T) {
	gw := network("10.40.0.1/24", "fd00:40::1/64")
	tests := []struct {
		name   string
		net    *Network
		ranges []string
		static []string
		v4, v6 []string
	}{
		{name: "statics first, then the range without them", net: gw, ranges: []string{"10.40.0.64/30"}, static: []string{"10.40.0.70", "10.40.0.65"},
			v4: []string{"10.40.0.70/24", "10.40.0.65/24", "10.40.0.64/24", "10.40.0.66/24", "10.40.0.67/24"}},
		{name: "IPv6 alone", net: gw, ranges: []string{"fd00:40::10/126"}, v6: []string{"fd00:40::10/64", "fd00:40::11/64", "fd00:40::12/64", "fd00:40::13/64"}},
		{name: "free-form: the range is the subnet", ranges: []string{"192.168.10.0/29", "fd00:1::/126"}, static: []string{"192.168.10.6"},
			v4: []string{"192.168.10.6/29", "192.168.10.1/29", "192.168.10.2/29", "192.168.10.3/29", "192.168.10.4/29", "192.168.10.5/29"},
			v6: []string{"fd00:1::1/126", "fd00:1::2/126", "fd00:1::3/126"}},
		{name: "free-form /31 has only hosts", ranges: []string{"192.168.10.0/31"}, v4: []string{"192.168.10.0/31", "192.168.10.1/31"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.net, tt.ranges, tt.static...)
			if got := take(p, IPv4); !slices.Equal(got, tt.v4) {
				t.Errorf("IPv4 %v, want %v", got, tt.v4)
			}
			if got := take(p, IPv6); !slices.Equal(got, tt.v6) {
				t.Errorf("IPv6 %v, want %v", got, tt.v6)
			}
			if p.Has(IPv4) != (len(tt.v4) > 0) || p.Has(IPv6) != (len(tt.v6) > 0) {
				t.Errorf("Has: IPv4 %t IPv6 %t", p.Has(IPv4), p.Has(IPv6))
			}
			for _, a := range append(slices.Clone(tt.v4), tt.v6...) {
				pfx := netip.MustParsePrefix(a)
				if got, ok := p.Contains(pfx.Addr()); !ok || got != pfx {
					t.Errorf("Contains(%s) = %s %t, want %s", pfx.Addr(), got, ok, pfx)
				}
			}
		})
	}
	p := mustParse(t, network("10.40.0.1/24"), []string{"10.40.0.64/30"})
	for _, a := range []string{"10.40.0.63", "10.40.0.68", "10.40.0.1", "fd00::1"} {
		if got, ok := p.Contains(netip.MustParseAddr(a)); ok {
			t.Errorf("Contains(%s) = %s: not in the pool", a, got)
		}
	}
}

func TestOverlap(t *testing.T) {
	gw := network("10.40.0.1/24", "fd00:40::1/64")
	tests := []struct {
		name         string
		a, b         []string // ranges, then statics after "|"
		want, wantBA string   // field[index]=value: detail
	}{
		{name: "disjoint", a: []string{"10.40.0.64/27", "|", "10.40.0.10"}, b: []string{"10.40.0.96/27", "|", "10.40.0.11"}},
		{name: "ranges", a: []string{"10.40.0.64/27"}, b: []string{"10.40.0.80/28"},
			want: "ranges[0]=10.40.0.64/27: 10.40.0.64/27 overlaps 10.40.0.80/28", wantBA: "ranges[0]=10.40.0.80/28: 10.40.0.80/28 overlaps 10.40.0.64/27"},
		{name: "static in range", a: []string{"fd00:40::100/120", "|", "fd00:40::5", "10.40.0.70"}, b: []string{"10.40.0.64/27"},
			want: "static[1]=10.40.0.70: 10.40.0.70 lies in 10.40.0.64/27", wantBA: "ranges[0]=10.40.0.64/27: 10.40.0.64/27 contains 10.40.0.70"},
		{name: "same static", a: []string{"|", "fd00:40::5"}, b: []string{"|", "10.40.0.5", "fd00:40::5"},
			want: "static[0]=fd00:40::5: both have fd00:40::5", wantBA: "static[1]=fd00:40::5: both have fd00:40::5"},
		{name: "families do not meet", a: []string{"10.40.0.64/27"}, b: []string{"fd00:40::100/120"}},
	}
	str := func(o *Overlap) string {
		if o == nil {
			return ""
		}
		return fmt.Sprintf("%s[%d]=%s: %s", o.Field, o.Index, o.Value, o.Detail)
	}
	split := func(s []string) (r, st []string) {
		i := slices.Index(s, "|")
		if i < 0 {
			return s, nil
		}
		return s[:i], s[i+1:]
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ar, as := split(tt.a)
			br, bs := split(tt.b)
			a, b := mustParse(t, gw, ar, as...), mustParse(t, gw, br, bs...)
			if got := str(a.Overlap(b)); got != tt.want {
				t.Errorf("a.Overlap(b) = %q, want %q", got, tt.want)
			}
			if got := str(b.Overlap(a)); got != tt.wantBA {
				t.Errorf("b.Overlap(a) = %q, want %q", got, tt.wantBA)
			}
		})
	}
}
