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
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// A layer-2 network's flooding at admission: the mode, and peers only with static, unicast, one family, unique.
func TestValidateLayer2Flooding(t *testing.T) {
	flooding := func(mode v1.FloodingMode, peers ...string) *v1.Layer2NetworkConfiguration {
		return l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.Flooding = &v1.Flooding{Mode: mode, Peers: peers} })
	}
	many := make([]string, v1.MaxFloodPeers+1)
	for i := range many {
		many[i] = fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)
	}
	tests := []struct {
		name string
		obj  *v1.Layer2NetworkConfiguration
		want [][]string
	}{
		{name: "evpn", obj: flooding(v1.FloodingEVPN)},
		{name: "mode unset (the CRD defaults evpn)", obj: flooding("")},
		{name: "static to every node of the network", obj: flooding(v1.FloodingStatic)},
		{name: "static to listed peers", obj: flooding(v1.FloodingStatic, "192.0.2.1", "192.0.2.2")},
		{name: "static over IPv6", obj: flooding(v1.FloodingStatic, "2001:db8::1", "2001:db8::2")},
		{name: "peers with evpn", obj: flooding(v1.FloodingEVPN, "192.0.2.1"),
			want: [][]string{{`spec.flooding.peers: Forbidden`, "192.0.2.1", "only for mode static"}}},
		{name: "peers without mode", obj: flooding("", "192.0.2.1"),
			want: [][]string{{`spec.flooding.peers: Forbidden`, "only for mode static"}}},
		{name: "unknown mode", obj: flooding("multicast"),
			want: [][]string{{`spec.flooding.mode: Unsupported value: "multicast"`, `"evpn", "static"`}}},
		{name: "not addresses", obj: flooding(v1.FloodingStatic, "192.0.2.1/32", "node-a", "fe80::1%eth0"),
			want: [][]string{{`spec.flooding.peers[0]: Invalid value: "192.0.2.1/32"`, "not an IP address"},
				{`spec.flooding.peers[1]: Invalid value: "node-a"`}, {`spec.flooding.peers[2]: Invalid value: "fe80::1%eth0"`}}},
		{name: "not unicast", obj: flooding(v1.FloodingStatic, "0.0.0.0", "127.0.0.1", "239.1.1.1", "169.254.0.1"),
			want: [][]string{{`spec.flooding.peers[0]: Invalid value: "0.0.0.0"`, "not a unicast VTEP address"},
				{`spec.flooding.peers[1]: Invalid value: "127.0.0.1"`}, {`spec.flooding.peers[2]: Invalid value: "239.1.1.1"`},
				{`spec.flooding.peers[3]: Invalid value: "169.254.0.1"`}}},
		{name: "IPv4-mapped", obj: flooding(v1.FloodingStatic, "::ffff:192.0.2.1"),
			want: [][]string{{`spec.flooding.peers[0]: Invalid value: "::ffff:192.0.2.1"`, "write 192.0.2.1"}}},
		{name: "duplicate", obj: flooding(v1.FloodingStatic, "192.0.2.1", "192.0.2.2", "192.0.2.1"),
			want: [][]string{{`spec.flooding.peers[2]: Duplicate value: "192.0.2.1"`}}},
		{name: "duplicate in another spelling", obj: flooding(v1.FloodingStatic, "2001:db8::1", "2001:DB8:0::1"),
			want: [][]string{{`spec.flooding.peers[1]: Duplicate value: "2001:DB8:0::1"`}}},
		{name: "two families", obj: flooding(v1.FloodingStatic, "bogus", "192.0.2.1", "2001:db8::1"),
			want: [][]string{{`spec.flooding.peers[0]: Invalid value: "bogus"`},
				{`spec.flooding.peers[2]: Invalid value: "2001:db8::1"`, "another address family than spec.flooding.peers[1] (192.0.2.1)"}}},
		{name: "too many", obj: flooding(v1.FloodingStatic, many...),
			want: [][]string{{`spec.flooding.peers: Too many: 257: must have at most 256 items`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ValidateLayer2NetworkConfiguration(tt.obj, nil), tt.want)
		})
	}
}

// parseFloodPeers with the node's own VTEP address (operator and agent): its family only, itself left out.
func TestFloodPeersOfNode(t *testing.T) {
	path := field.NewPath("flooding", "peers")
	addrs := func(s ...string) []netip.Addr {
		out := []netip.Addr{}
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	tests := []struct {
		name  string
		peers []string
		local string
		want  []netip.Addr
		errs  [][]string
	}{
		{name: "in their order", peers: []string{"192.0.2.2", "192.0.2.1"}, want: addrs("192.0.2.2", "192.0.2.1")},
		{name: "without the node itself", peers: []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}, local: "192.0.2.2",
			want: addrs("192.0.2.1", "192.0.2.3")},
		{name: "only the node itself", peers: []string{"192.0.2.2"}, local: "192.0.2.2", want: addrs()},
		{name: "family of the node", peers: []string{"2001:db8::1", "192.0.2.1"}, local: "192.0.2.2", want: addrs("192.0.2.1"),
			errs: [][]string{{`flooding.peers[0]: Invalid value: "2001:db8::1"`, "this node's VTEP address 192.0.2.2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var local netip.Addr
			if tt.local != "" {
				local = netip.MustParseAddr(tt.local)
			}
			got, errs := parseFloodPeers(path, tt.peers, local)
			checkErrs(t, errs, tt.errs)
			if !slices.Equal(got, tt.want) {
				t.Errorf("peers %v, want %v", got, tt.want)
			}
		})
	}
}
