package nodespec

import (
	"maps"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

var mir = LoopbackKey{VRF: "mirror", Loopback: "lo.mir"}

func pool(subnet string, nodes ...string) LoopbackPool {
	return LoopbackPool{LoopbackKey: mir, Subnet: subnet, Configs: []string{"mirror-vrf"}, Nodes: nodes}
}

func hold(node, addr string) LoopbackHolding {
	return LoopbackHolding{LoopbackKey: mir, Node: node, Address: addr}
}

func TestPlanLoopbackAddresses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pools []LoopbackPool
		held  []LoopbackHolding
		want  map[string]string // node -> address of mir
		// short: the shortage message must contain these (none: no shortage)
		short []string
	}{
		{name: "fill lowest in name order", pools: []LoopbackPool{pool("10.0.0.0/24", "c", "a", "b")},
			want: map[string]string{"a": "10.0.0.1/32", "b": "10.0.0.2/32", "c": "10.0.0.3/32"}},
		{name: "keep existing, fill the gaps", pools: []LoopbackPool{pool("10.0.0.0/24", "a", "b", "c", "d")},
			held: []LoopbackHolding{hold("c", "10.0.0.1/32"), hold("a", "10.0.0.7/32")},
			want: map[string]string{"a": "10.0.0.7/32", "b": "10.0.0.2/32", "c": "10.0.0.1/32", "d": "10.0.0.3/32"}},
		{name: "bare held address is kept with host length", pools: []LoopbackPool{pool("10.0.0.0/24", "a")},
			held: []LoopbackHolding{hold("a", "10.0.0.9")}, want: map[string]string{"a": "10.0.0.9/32"}},
		{name: "address outside a changed subnet is replaced", pools: []LoopbackPool{pool("10.1.0.0/24", "a", "b")},
			held: []LoopbackHolding{hold("a", "10.0.0.1/32"), hold("b", "10.1.0.5/32")},
			want: map[string]string{"a": "10.1.0.1/32", "b": "10.1.0.5/32"}},
		{name: "held network or broadcast address is replaced", pools: []LoopbackPool{pool("10.0.0.0/29", "a", "b")},
			held: []LoopbackHolding{hold("a", "10.0.0.0/32"), hold("b", "10.0.0.7/32")},
			want: map[string]string{"a": "10.0.0.1/32", "b": "10.0.0.2/32"}},
		{name: "two nodes holding one address: the first by name keeps it", pools: []LoopbackPool{pool("10.0.0.0/24", "b", "a")},
			held: []LoopbackHolding{hold("b", "10.0.0.4/32"), hold("a", "10.0.0.4/32")},
			want: map[string]string{"a": "10.0.0.4/32", "b": "10.0.0.1/32"}},
		{name: "a held address of another loopback is not this one's", pools: []LoopbackPool{pool("10.0.0.0/24", "a")},
			held: []LoopbackHolding{{LoopbackKey: LoopbackKey{"mirror", "lo.other"}, Node: "a", Address: "10.0.0.5/32"}},
			want: map[string]string{"a": "10.0.0.1/32"}},
		{name: "broadcast is skipped: /30 has 2 hosts", pools: []LoopbackPool{pool("10.0.0.0/30", "a", "b")},
			want: map[string]string{"a": "10.0.0.1/32", "b": "10.0.0.2/32"}},
		{name: "exhaustion: /30 and 3 nodes", pools: []LoopbackPool{pool("10.0.0.0/30", "a", "b", "c")},
			held:  []LoopbackHolding{hold("c", "10.0.0.2/32")},
			want:  map[string]string{"a": "10.0.0.1/32", "c": "10.0.0.2/32"},
			short: []string{`VRFRouteConfiguration "mirror-vrf"`, `loopback "lo.mir"`, "subnet 10.0.0.0/30", "has 2 host addresses", "3 nodes need one", "none left for b"}},
		{name: "/31 has two hosts (RFC 3021)", pools: []LoopbackPool{pool("10.0.0.0/31", "a", "b")},
			want: map[string]string{"a": "10.0.0.0/32", "b": "10.0.0.1/32"}},
		{name: "/31 exhausted by 3 nodes", pools: []LoopbackPool{pool("10.0.0.0/31", "a", "b", "c")},
			want:  map[string]string{"a": "10.0.0.0/32", "b": "10.0.0.1/32"},
			short: []string{"has 2 host addresses", "3 nodes need one", "none left for c"}},
		{name: "/32 has one host", pools: []LoopbackPool{pool("10.0.0.9/32", "a")},
			want: map[string]string{"a": "10.0.0.9/32"}},
		{name: "/32 exhausted by 2 nodes", pools: []LoopbackPool{pool("10.0.0.9/32", "a", "b")},
			held:  []LoopbackHolding{hold("b", "10.0.0.9/32")},
			want:  map[string]string{"b": "10.0.0.9/32"},
			short: []string{"has 1 host addresses", "2 nodes need one", "none left for a"}},
		{name: "IPv6 skips the subnet-router anycast address", pools: []LoopbackPool{pool("fd00:10::/64", "a", "b")},
			held: []LoopbackHolding{hold("b", "fd00:10::1/128")},
			want: map[string]string{"a": "fd00:10::2/128", "b": "fd00:10::1/128"}},
		{name: "IPv6 /127 has two hosts", pools: []LoopbackPool{pool("fd00::/127", "a", "b")},
			want: map[string]string{"a": "fd00::/128", "b": "fd00::1/128"}},
		{name: "IPv6 /128 has one host", pools: []LoopbackPool{pool("fd00::5/128", "a", "b")},
			want:  map[string]string{"a": "fd00::5/128"},
			short: []string{"has 1 host addresses", "none left for b"}},
		{name: "IPv6 /126 exhausted", pools: []LoopbackPool{pool("fd00::/126", "a", "b", "c", "d")},
			want:  map[string]string{"a": "fd00::1/128", "b": "fd00::2/128", "c": "fd00::3/128"},
			short: []string{"has 3 host addresses", "4 nodes need one", "none left for d"}},
		{name: "deselected node's address is free (taken after never-held ones)", pools: []LoopbackPool{pool("10.0.0.0/29", "a", "c", "d")},
			held: []LoopbackHolding{hold("a", "10.0.0.2/32"), hold("b", "10.0.0.1/32")},
			want: map[string]string{"a": "10.0.0.2/32", "c": "10.0.0.3/32", "d": "10.0.0.4/32"}},
		{name: "deselected node's address is reused when nothing else is left", pools: []LoopbackPool{pool("10.0.0.0/30", "a", "c")},
			held: []LoopbackHolding{hold("a", "10.0.0.2/32"), hold("b", "10.0.0.1/32")},
			want: map[string]string{"a": "10.0.0.2/32", "c": "10.0.0.1/32"}},
		{name: "gone node's address is free", pools: []LoopbackPool{pool("10.0.0.0/30", "b", "c")},
			held: []LoopbackHolding{hold("a", "10.0.0.1/32"), hold("b", "10.0.0.2/32")},
			want: map[string]string{"b": "10.0.0.2/32", "c": "10.0.0.1/32"}},
		{name: "no nodes", pools: []LoopbackPool{pool("10.0.0.0/30")}, want: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, short, err := PlanLoopbackAddresses(tc.pools, tc.held)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got[mir], tc.want) {
				t.Errorf("addresses %v, want %v", got[mir], tc.want)
			}
			if len(tc.short) == 0 {
				if len(short) != 0 {
					t.Errorf("unexpected shortage: %v", short[0])
				}
				return
			}
			if len(short) != 1 {
				t.Fatalf("shortages %v, want one", short)
			}
			for _, s := range tc.short {
				if !strings.Contains(short[0].Error(), s) {
					t.Errorf("shortage %q does not say %q", short[0].Error(), s)
				}
			}
		})
	}
}

// TestPlanLoopbackAddressesDeterministic: the plan does not depend on the order of the inputs, and planning
// again from its own result changes nothing.
func TestPlanLoopbackAddressesDeterministic(t *testing.T) {
	nodes := []string{"n-05", "n-01", "n-09", "n-03", "n-07", "n-02", "n-08", "n-04", "n-06"}
	held := []LoopbackHolding{hold("n-07", "10.0.0.3/32"), hold("n-02", "10.0.0.9/32"), hold("gone", "10.0.0.1/32"), hold("n-04", "192.0.2.1/32")}
	want, _, err := PlanLoopbackAddresses([]LoopbackPool{pool("10.0.0.0/28", nodes...)}, held)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
		got, _, _ := PlanLoopbackAddresses([]LoopbackPool{pool("10.0.0.0/28", nodes...)}, held)
		if !maps.Equal(got[mir], want[mir]) {
			t.Fatalf("order %v %v: %v, want %v", nodes, held, got[mir], want[mir])
		}
	}
	seen := map[string]string{}
	var again []LoopbackHolding
	for n, a := range want[mir] {
		if other, ok := seen[a]; ok {
			t.Fatalf("%s given to %s and %s", a, other, n)
		}
		seen[a] = n
		again = append(again, hold(n, a))
	}
	if len(seen) != len(nodes) {
		t.Fatalf("%d addresses for %d nodes: %v", len(seen), len(nodes), want[mir])
	}
	got, _, _ := PlanLoopbackAddresses([]LoopbackPool{pool("10.0.0.0/28", nodes...)}, again)
	if !maps.Equal(got[mir], want[mir]) {
		t.Fatalf("planned again: %v, want %v", got[mir], want[mir])
	}
}

func TestHostRange(t *testing.T) {
	for _, tc := range []struct {
		subnet, first, last string
		count               int
	}{
		{"10.0.0.0/24", "10.0.0.1", "10.0.0.254", 254},
		{"10.0.0.0/30", "10.0.0.1", "10.0.0.2", 2},
		{"10.0.0.0/31", "10.0.0.0", "10.0.0.1", 2},
		{"10.0.0.1/32", "10.0.0.1", "10.0.0.1", 1},
		{"0.0.0.0/0", "0.0.0.1", "255.255.255.254", 1<<32 - 2},
		{"fd00::/64", "fd00::1", "fd00::ffff:ffff:ffff:ffff", math.MaxInt},
		{"fd00::/126", "fd00::1", "fd00::3", 3},
		{"fd00::/127", "fd00::", "fd00::1", 2},
		{"fd00::1/128", "fd00::1", "fd00::1", 1},
	} {
		p := netip.MustParsePrefix(tc.subnet)
		first, last := hostRange(p)
		if first.String() != tc.first || last.String() != tc.last || hostCount(p) != tc.count {
			t.Errorf("%s: %s..%s (%d), want %s..%s (%d)", tc.subnet, first, last, hostCount(p), tc.first, tc.last, tc.count)
		}
	}
}

// TestPlanLoopbackAddressesEndOfSpace: allocation stops at the last address of the address space.
func TestPlanLoopbackAddressesEndOfSpace(t *testing.T) {
	got, short, err := PlanLoopbackAddresses([]LoopbackPool{pool("255.255.255.254/31", "a", "b", "c")}, nil)
	if err != nil || len(short) != 1 || len(got[mir]) != 2 || got[mir]["b"] != "255.255.255.255/32" {
		t.Fatalf("got %v, shortages %v, err %v", got[mir], short, err)
	}
}

// TestAssignLoopbackAddresses: addresses land in the built specs; nodes keep theirs from the current specs;
// a shortage names the VRFRouteConfiguration and leaves the address empty.
func TestAssignLoopbackAddresses(t *testing.T) {
	rev := &v1.NetworkConfigRevisionSpec{Revision: "r1"}
	for _, c := range []struct{ name, vrf, subnet string }{{"mirror-a", "mirror", "10.9.0.0/30"}, {"blue", "blue", "fd00:9::/64"}} {
		it := v1.VRFRevision{Name: c.name}
		it.VRF, it.VNI, it.Seq = c.vrf, new(int32(100+len(rev.VRF))), int32(10+len(rev.VRF))
		it.Loopbacks = []v1.VRFLoopback{{Name: "lo." + c.vrf, Subnet: c.subnet}}
		rev.VRF = append(rev.VRF, it)
	}
	// node-b does not get blue.
	rev.VRF[1].NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"blue": "yes"}}
	opts := Options{Underlay: Underlay{ASN: 65000}}
	specs := map[string]*v1.NodeNetworkConfigSpec{}
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		lbls := map[string]string{"blue": "yes"}
		if n == "node-b" {
			lbls = nil
		}
		s, err := Build(rev, node(n, lbls, nil), nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		specs[n] = &s
	}
	current := map[string]*v1.NodeNetworkConfigSpec{
		"node-c": {VRFs: []v1.NodeVRF{{Name: "mirror", Loopbacks: []v1.NodeLoopback{{Name: "lo.mirror", Subnet: "10.9.0.0/30", Address: "10.9.0.1/32"}}}}},
		"node-a": nil,
	}
	short, err := AssignLoopbackAddresses(rev, specs, current)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(node, vrf string) string {
		for _, v := range specs[node].VRFs {
			if v.Name == vrf {
				return v.Loopbacks[0].Address
			}
		}
		return "-"
	}
	for _, c := range []struct{ node, vrf, want string }{
		{"node-a", "mirror", "10.9.0.2/32"}, {"node-b", "mirror", ""}, {"node-c", "mirror", "10.9.0.1/32"},
		{"node-a", "blue", "fd00:9::1/128"}, {"node-b", "blue", "-"}, {"node-c", "blue", "fd00:9::2/128"},
	} {
		if got := addr(c.node, c.vrf); got != c.want {
			t.Errorf("%s %s: address %q, want %q", c.node, c.vrf, got, c.want)
		}
	}
	if len(short) != 1 || !strings.Contains(short[0].Error(), `VRFRouteConfiguration "mirror-a", VRF "mirror", loopback "lo.mirror": subnet 10.9.0.0/30 has 2 host addresses, 3 nodes need one (none left for node-b)`) {
		t.Fatalf("shortages %v", short)
	}
	for n, s := range specs {
		if s.ExpectedMapVersion != s.MapVersion() {
			t.Errorf("%s: expectedMapVersion not updated", n)
		}
	}
}

func TestBuildRejectsLoopbackSubnet(t *testing.T) {
	rev := &v1.NetworkConfigRevisionSpec{Revision: "r1"}
	it := v1.VRFRevision{Name: "m"}
	it.VRF, it.VNI = "mirror", new(int32(100))
	it.Loopbacks = []v1.VRFLoopback{{Name: "lo.mir", Subnet: "10.0.0.1/24"}}
	rev.VRF = append(rev.VRF, it)
	_, err := Build(rev, node("n", nil, nil), nil, Options{Underlay: Underlay{ASN: 65000}})
	if err == nil || !strings.Contains(err.Error(), "vrf[m].loopbacks[0].subnet") {
		t.Fatalf("err %v", err)
	}
}
