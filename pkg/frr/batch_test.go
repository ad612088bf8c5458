package frr

import (
	"strings"
	"testing"
)

func TestVtyshFile(t *testing.T) {
	lines := func(l ...string) string { return strings.Join(l, "\n") + "\n" }
	for _, tc := range []struct {
		name, in, want string
	}{{
		name: "route-maps before the BGP instances, one transaction",
		in: lines("vrf vr.a", " vni 1", "exit-vrf", "!", "router bgp 1", " import vrf route-map rm_a", "exit", "!",
			"ip prefix-list pl_a seq 1 permit 10.0.0.0/8", "!",
			"route-map rm_a permit 10", " match ip address prefix-list pl_a", "exit", "!", "route-map rm_a deny 20", "exit", "!"),
		want: lines("vrf vr.a", " vni 1", "exit-vrf", "!",
			"ip prefix-list pl_a seq 1 permit 10.0.0.0/8", "!",
			"route-map rm_a permit 10", " match ip address prefix-list pl_a", "!", "route-map rm_a deny 20", "exit", "!",
			"router bgp 1", " import vrf route-map rm_a", "exit", "!"),
	}, {
		name: "a script deleting a route-map keeps its order",
		in: lines("router bgp 1", " no import vrf route-map rm_a", "exit", "no route-map rm_a permit 10",
			"route-map rm_b permit 10", " set community 1:1", "exit", "route-map rm_b deny 20", "exit"),
		want: lines("router bgp 1", " no import vrf route-map rm_a", "exit", "no route-map rm_a permit 10",
			"route-map rm_b permit 10", " set community 1:1", "route-map rm_b deny 20", "exit"),
	}, {
		name: "the last route-map keeps its exit before other blocks",
		in:   lines("route-map rm_a permit 10", " set community 1:1", "exit", "line vty", "exit"),
		want: lines("route-map rm_a permit 10", " set community 1:1", "exit", "line vty", "exit"),
	}, {
		name: "no route-maps: unchanged, without a final newline too",
		in:   "router bgp 1\n bgp router-id 1.1.1.1\nexit",
		want: "router bgp 1\n bgp router-id 1.1.1.1\nexit",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(vtyshFile([]byte(tc.in))); got != tc.want {
				t.Errorf("vtyshFile:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
