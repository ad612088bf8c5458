package netnstest

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// tenantTopology: two tenants with the same addresses (a 10.0.1.2, b 10.0.2.2), each on its own pair of router
// interfaces, routed in its own table (tenant 1: 101, tenant 2: 102). Tenant 2's b also has 10.0.3.2, which only
// tenant 2's table routes: the cross-tenant target.
func tenantTopology() lab.Topology {
	t := lab.Topology{Devices: []lab.Device{{Port: lab.Port{NS: "r", Name: standInDev}}}}
	var rDevs []string
	for _, n := range []int{1, 2} {
		a, b := fmt.Sprintf("a%d", n), fmt.Sprintf("b%d", n)
		ra, rb := fmt.Sprintf("ra%d", n), fmt.Sprintf("rb%d", n)
		table := 100 + n
		rDevs = append(rDevs, ra, rb)
		bAddrs := []string{"10.0.2.2/24"}
		if n == 2 {
			bAddrs = append(bAddrs, "10.0.3.2/24")
		}
		t.Namespaces = append(t.Namespaces, lab.Namespace{Name: a}, lab.Namespace{Name: b})
		t.Veths = append(t.Veths,
			lab.Veth{A: lab.Port{NS: a, Name: "eth0", Addrs: []string{"10.0.1.2/24"}},
				B: lab.Port{NS: "r", Name: ra, Addrs: []string{"10.0.1.1/24"}, NoPrefixRoute: true}},
			lab.Veth{A: lab.Port{NS: b, Name: "eth0", Addrs: bAddrs},
				B: lab.Port{NS: "r", Name: rb, Addrs: []string{"10.0.2.1/24"}, NoPrefixRoute: true}})
		t.Routes = append(t.Routes,
			lab.Route{NS: a, Dst: "default", Via: "10.0.1.1", Dev: "eth0"},
			lab.Route{NS: b, Dst: "default", Via: "10.0.2.1", Dev: "eth0"},
			lab.Route{NS: "r", Table: table, Dst: "10.0.1.0/24", Dev: ra},
			lab.Route{NS: "r", Table: table, Dst: "10.0.2.0/24", Dev: rb},
			lab.Route{NS: "r", Table: table, Dst: "10.0.1.1/32", Dev: ra, Type: lab.Local},
			lab.Route{NS: "r", Table: table, Dst: "10.0.2.1/32", Dev: rb, Type: lab.Local})
		if n == 2 {
			t.Routes = append(t.Routes, lab.Route{NS: "r", Table: table, Dst: "10.0.3.0/24", Via: "10.0.2.2", Dev: rb})
		}
		t.Neighbours = append(t.Neighbours,
			lab.Neighbour{NS: a, Dev: "eth0", IP: "10.0.1.1", MACOf: "r/" + ra},
			lab.Neighbour{NS: b, Dev: "eth0", IP: "10.0.2.1", MACOf: "r/" + rb},
			lab.Neighbour{NS: "r", Dev: ra, IP: "10.0.1.2", MACOf: a + "/eth0"},
			lab.Neighbour{NS: "r", Dev: rb, IP: "10.0.2.2", MACOf: b + "/eth0"})
	}
	t.Namespaces = append(t.Namespaces, lab.Namespace{Name: "r", Sysctls: routerSysctls(rDevs...)})
	return t
}

// TestTenantIsolation: with overlapping addresses in two VRF tables, each tenant reaches only its own peer, a
// destination only the other tenant routes is unreachable, and each VRF's counters hold only its own traffic.
func TestTenantIsolation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := lab.New(t)
	l.MustBuild(ctx, tenantTopology())
	r := l.NS("r")
	assertKernelForwardingOff(t, r, "ra1", "rb1", "ra2", "rb2")

	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	rt.attach(t, loader.ModeAuto, "ra1", "rb1", "ra2", "rb2")
	fwd, err := r.Ifindex(standInDev)
	if err != nil {
		t.Fatal(err)
	}
	tables := maps.Tables{}
	for _, n := range []uint32{1, 2} {
		tables.VRFs = append(tables.VRFs, maps.VRF{ID: n, TableID: 100 + n, LookupIfindex: uint32(fwd)})
		for _, ifn := range []string{fmt.Sprintf("ra%d", n), fmt.Sprintf("rb%d", n)} {
			idx, err := r.Ifindex(ifn)
			if err != nil {
				t.Fatal(err)
			}
			tables.Interfaces = append(tables.Interfaces, maps.Interface{Ifindex: uint32(idx), VRF: n, Mode: maps.ModeRoute})
		}
	}
	rt.apply(t, tables, "tenants")

	echoes := func(ns string) uint64 {
		st, err := l.NS(ns).SNMP("Icmp")
		if err != nil {
			t.Fatal(err)
		}
		return st["InEchos"]
	}
	fwdOf := func(vrf uint32) uint64 { return rt.counter(t, vrf, maps.ReasonForwardedFib).Packets }

	const n = 10
	dst := netip.MustParseAddr("10.0.2.2") // both tenants' b
	for _, tc := range []struct {
		from, peer, other string
		vrf, otherVRF     uint32
	}{
		{"a1", "b1", "b2", 1, 2},
		{"a2", "b2", "b1", 2, 1},
	} {
		peer0, other0, fwd0, otherFwd0 := echoes(tc.peer), echoes(tc.other), fwdOf(tc.vrf), fwdOf(tc.otherVRF)
		pingOK(ctx, t, l.NS(tc.from), dst, n)
		if got := echoes(tc.peer) - peer0; got != n {
			t.Errorf("%s -> %s: %s answered %d echo requests, want %d", tc.from, dst, tc.peer, got, n)
		}
		if got := echoes(tc.other) - other0; got != 0 {
			t.Errorf("%s -> %s: the other tenant's %s got %d echo requests, want 0", tc.from, dst, tc.other, got)
		}
		if got := fwdOf(tc.vrf) - fwd0; got != 2*n {
			t.Errorf("%s -> %s: VRF %d forwarded-fib grew by %d, want %d", tc.from, dst, tc.vrf, got, 2*n)
		}
		if got := fwdOf(tc.otherVRF) - otherFwd0; got != 0 {
			t.Errorf("%s -> %s: VRF %d (other tenant) forwarded-fib grew by %d, want 0", tc.from, dst, tc.otherVRF, got)
		}
	}

	// 10.0.3.2 exists only in tenant 2: tenant 2 reaches it, tenant 1 must not (no route in table 101: the
	// program passes to the kernel, which does not forward).
	only2 := netip.MustParseAddr("10.0.3.2")
	pingOK(ctx, t, l.NS("a2"), only2, 3)
	b2Echoes, notFwd0 := echoes("b2"), rt.counter(t, 1, maps.ReasonPassedNotFwded).Packets
	pingFails(ctx, t, l.NS("a1"), only2)
	if got := echoes("b2") - b2Echoes; got != 0 {
		t.Errorf("tenant 1 reached tenant 2's %s: %d echo requests arrived", only2, got)
	}
	if got := rt.counter(t, 1, maps.ReasonPassedNotFwded).Packets - notFwd0; got != 3 {
		t.Errorf("VRF 1 passed-not-forwarded grew by %d for 3 cross-tenant pings, want 3", got)
	}
}
