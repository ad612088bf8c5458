package frrreload

import (
	"slices"
	"strings"
	"testing"
)

func TestVtyshFile(t *testing.T) {
	lines := func(l ...string) string { return strings.Join(l, "\n") + "\n" }
	for _, tc := range []struct {
		name, in, timer, want string
		origin                []int
	}{{
		name: "route-maps before the BGP instances, one transaction, their update run before the instances",
		in: lines("vrf vr.a", " vni 1", "exit-vrf", "!", "router bgp 1", " import vrf route-map rm_a", "exit", "!",
			"ip prefix-list pl_a seq 1 permit 10.0.0.0/8", "!",
			"route-map rm_a permit 10", " match ip address prefix-list pl_a", "exit", "!", "route-map rm_a deny 20", "exit", "!"),
		want: lines("vrf vr.a", " vni 1", "exit-vrf", "!",
			"ip prefix-list pl_a seq 1 permit 10.0.0.0/8", "!",
			"route-map rm_a permit 10", " match ip address prefix-list pl_a", "!", "route-map rm_a deny 20", "exit", "!",
			"bgp route-map delay-timer 0", "no bgp route-map delay-timer",
			"router bgp 1", " import vrf route-map rm_a", "exit", "!"),
		origin: []int{1, 2, 3, 4, 9, 10, 11, 12, 14, 15, 16, 17, 0, 0, 5, 6, 7, 8},
	}, {
		name:  "the config's own delay is restored",
		in:    lines("bgp route-map delay-timer 1", "router bgp 1", "exit", "route-map rm_a permit 10", "exit"),
		timer: "bgp route-map delay-timer 1",
		want: lines("bgp route-map delay-timer 1", "route-map rm_a permit 10", "exit",
			"bgp route-map delay-timer 0", "bgp route-map delay-timer 1", "router bgp 1", "exit"),
		origin: []int{1, 4, 5, 0, 0, 2, 3},
	}, {
		name: "a script deleting a route-map keeps its order",
		in: lines("router bgp 1", " no import vrf route-map rm_a", "exit", "no route-map rm_a permit 10",
			"route-map rm_b permit 10", " set community 1:1", "exit", "route-map rm_b deny 20", "exit"),
		want: lines("router bgp 1", " no import vrf route-map rm_a", "exit", "no route-map rm_a permit 10",
			"route-map rm_b permit 10", " set community 1:1", "route-map rm_b deny 20", "exit"),
		origin: []int{1, 2, 3, 4, 5, 6, 8, 9},
	}, {
		name:   "the last route-map keeps its exit before other blocks",
		in:     lines("route-map rm_a permit 10", " set community 1:1", "exit", "line vty", "exit"),
		want:   lines("route-map rm_a permit 10", " set community 1:1", "exit", "line vty", "exit"),
		origin: []int{1, 2, 3, 4, 5},
	}, {
		name:   "no route-maps: unchanged, without a final newline too",
		in:     "router bgp 1\n bgp router-id 1.1.1.1\nexit",
		want:   "router bgp 1\n bgp router-id 1.1.1.1\nexit",
		origin: []int{1, 2, 3},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, origin := vtyshFile([]byte(tc.in), tc.timer)
			if string(got) != tc.want {
				t.Errorf("vtyshFile:\n%s\nwant:\n%s", got, tc.want)
			}
			if !slices.Equal(origin, tc.origin) {
				t.Errorf("origin %v, want %v", origin, tc.origin)
			}
		})
	}
}

func TestRouteMapTimer(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"router bgp 1\nexit\n", ""},
		{"bgp route-map delay-timer 7\nrouter bgp 1\n", "bgp route-map delay-timer 7"},
		{"bgp route-map delay-timer 7\nbgp route-map delay-timer 0\n", "bgp route-map delay-timer 0"},
	} {
		if got := routeMapTimer(strings.Lines(tc.in)); got != tc.want {
			t.Errorf("routeMapTimer(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestValidationErrorRenumber: lines found in a prepared file are reported at their numbers in its source.
func TestValidationErrorRenumber(t *testing.T) {
	e := &ValidationError{Lines: []ConfigLine{{Number: 5, Text: "a"}, {Number: 1, Text: "b"}, {Number: 2, Text: "added"}, {Number: 9, Text: "beyond"}}}
	e.renumber([]int{7, 0, 3, 4, 1})
	want := []ConfigLine{{Number: 1, Text: "a"}, {Number: 2, Text: "added"}, {Number: 7, Text: "b"}, {Number: 9, Text: "beyond"}}
	if !slices.Equal(e.Lines, want) {
		t.Errorf("renumbered %v, want %v", e.Lines, want)
	}
}
