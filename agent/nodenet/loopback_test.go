package nodenet_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/lab"
)

func withLoopbacks(s *v1alpha1.NodeNetworkConfigSpec, vrf int, lbs ...v1alpha1.NodeLoopback) *v1alpha1.NodeNetworkConfigSpec {
	s.VRFs[vrf].Loopbacks = lbs
	return s
}

var (
	lb4     = v1alpha1.NodeLoopback{Name: "lo.blue", Subnet: "10.123.0.0/24", Address: "10.123.0.5/32"}
	lbEmpty = v1alpha1.NodeLoopback{Name: "lo.empty", Subnet: "10.124.0.0/24"}
)

func TestLoopbackPlan(t *testing.T) {
	base := func(f nodenet.Features) *nodenet.Observed {
		return observedAfter(mustDesired(t, twoVRFsOneL2(), testSettings(), f))
	}
	spec := func() *v1alpha1.NodeNetworkConfigSpec { return withLoopbacks(twoVRFsOneL2(), 0, lb4, lbEmpty) }
	// Table-only, no dummies: an empty bridge, the address without prefix route, the VRF table's routes and rules.
	d := mustDesired(t, spec(), testSettings(), noVRFKernel)
	p := nodenet.ComputePlan(d, base(noVRFKernel))
	diffLines(t, lines(p.Actions), []string{
		"vrfs: add rule 1100: iif lo.blue lookup 100 (ipv4)",
		"vrfs: add rule 1100: oif lo.blue lookup 100 (ipv4)",
		"vrfs: add rule 1100: iif lo.blue lookup 100 (ipv6)",
		"vrfs: add rule 1100: oif lo.blue lookup 100 (ipv6)",
		"vrfs: add rule 1100: iif lo.empty lookup 100 (ipv4)",
		"vrfs: add rule 1100: oif lo.empty lookup 100 (ipv4)",
		"vrfs: add rule 1100: iif lo.empty lookup 100 (ipv6)",
		"vrfs: add rule 1100: oif lo.empty lookup 100 (ipv6)",
		"vrfs: add rule 1100: from 10.123.0.5/32 lookup 100 (ipv4)",
		"interfaces: create bridge lo.blue (vrf blue)",
		"interfaces: create bridge lo.empty (vrf blue)",
		"interfaces: add address 10.123.0.5/32 noprefixroute to lo.blue",
		"interfaces: set lo.blue up",
		"interfaces: set lo.empty up",
		"interfaces: add route local 10.123.0.5 dev lo.blue table 100 src 10.123.0.5",
	})
	for _, want := range []string{
		"vrfs[blue].loopbacks: empty bridges stand in for dummy devices (test kernel has no dummy devices)",
		"vrfs[blue].loopbacks[lo.empty].address: empty (no address given): lo.empty is created without one",
	} {
		if !slices.Contains(p.Notes, want) {
			t.Errorf("notes %q lack %q", p.Notes, want)
		}
	}
	if p := nodenet.ComputePlan(d, observedAfter(d)); !p.Empty() {
		t.Errorf("plan after apply not empty:\n%s", p)
	}
	// VRF devices and dummies: a dummy enslaved to the VRF device; the kernel routes the address.
	d = mustDesired(t, spec(), testSettings(), fullKernel)
	diffLines(t, lines(nodenet.ComputePlan(d, base(fullKernel)).Actions), []string{
		"interfaces: create dummy lo.blue (vrf blue, master vr.blue)",
		"interfaces: create dummy lo.empty (vrf blue, master vr.blue)",
		"interfaces: add address 10.123.0.5/32 to lo.blue",
		"interfaces: set lo.blue up",
		"interfaces: set lo.empty up",
	})
	// The loopback goes: its link goes (and with it, the kernel drops its address and routes).
	diffLines(t, lines(nodenet.ComputePlan(mustDesired(t, twoVRFsOneL2(), testSettings(), fullKernel), observedAfter(d)).Actions), []string{
		"removals: delete dummy lo.blue (no longer desired)",
		"removals: delete dummy lo.empty (no longer desired)",
	})
}

func TestLoopbackErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lb      v1alpha1.NodeLoopback
		mention string
	}{
		{"address outside subnet", v1alpha1.NodeLoopback{Name: "l1", Subnet: "10.1.0.0/24", Address: "10.2.0.5/32"},
			`vrfs[red].loopbacks[l1].address: Invalid value: "10.2.0.5/32": not inside subnet 10.1.0.0/24`},
		{"address without length", v1alpha1.NodeLoopback{Name: "l1", Subnet: "10.1.0.0/24", Address: "10.1.0.5"},
			`vrfs[red].loopbacks[l1].address: Invalid value: "10.1.0.5": not an address with prefix length`},
		{"subnet host bits", v1alpha1.NodeLoopback{Name: "l1", Subnet: "10.1.0.1/24"}, `vrfs[red].loopbacks[l1].subnet: Invalid value: "10.1.0.1/24"`},
		{"name taken", v1alpha1.NodeLoopback{Name: "br.blue", Subnet: "10.1.0.0/24"}, `vrfs[red].loopbacks[br.blue].name: Invalid value: "br.blue": link name is already used by vrfs[blue]`},
		{"lo", v1alpha1.NodeLoopback{Name: "lo", Subnet: "10.1.0.0/24"}, `vrfs[red].loopbacks[lo].name: Invalid value: "lo"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := withLoopbacks(twoVRFsOneL2(), 1, tc.lb)
			_, err := nodenet.BuildDesired(s, testSettings(), noVRFKernel)
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("BuildDesired = %v, want ErrInvalid naming %q", err, tc.mention)
			}
		})
	}
}

// TestLoopbackInNamespace: the loopback exists in the VRF with its address, which the VRF's table routes to the
// node; an address change, a restart and the removal converge without leftovers.
func TestLoopbackInNamespace(t *testing.T) {
	l := labWith(t, lab.Topology{
		Namespaces: []lab.Namespace{{Name: "peer", Sysctls: noDAD("p1")}},
		Veths: []lab.Veth{{A: lab.Port{NS: "nc", Name: "p0"},
			B: lab.Port{NS: "peer", Name: "p1", Addrs: []string{"10.9.0.2/24", "fd00:9::2/64"}}}},
		Routes: []lab.Route{
			{NS: "peer", Dst: "10.123.0.0/24", Via: "10.9.0.1", Dev: "p1"},
			{NS: "peer", Dst: "fd00:123::/64", Via: "fd00:9::1", Dev: "p1"},
		},
	})
	ns, peer := l.NS("nc"), l.NS("peer")
	m := newManager(t, ns, tableOnly(nodenet.Settings{}))
	f, err := m.Features(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	lb6 := v1alpha1.NodeLoopback{Name: "lo6.blue", Subnet: "fd00:123::/64", Address: "fd00:123::5/128"}
	spec := &v1alpha1.NodeNetworkConfigSpec{Revision: "r1", VRFs: []v1alpha1.NodeVRF{
		{Name: "blue", ID: 1, TableID: 100, Loopbacks: []v1alpha1.NodeLoopback{lb4, lb6, lbEmpty}},
	}}
	// p0 is in the VRF the way a workload link would be: its subnet routed by table 100 (a foreign route).
	converge(t, m, spec)
	if err := addVRFLink(testCtx(t), ns, "p0", 100); err != nil {
		t.Fatal(err)
	}
	wantKind := "dummy"
	if !f.Dummy {
		wantKind = "bridge"
	}
	for _, name := range []string{"lo.blue", "lo6.blue", "lo.empty"} {
		if lk := link(t, ns, name); lk.Type() != wantKind || !strings.HasPrefix(lk.Attrs().Alias, nodenet.AliasPrefix) {
			t.Errorf("%s: %s alias %q, want an owned %s", name, lk.Type(), lk.Attrs().Alias, wantKind)
		}
	}
	if f.VRF {
		t.Log("kernel has VRF devices: the table-only checks below still run in auto mode only without them")
	} else {
		got := routesOf(t, ns, 100)
		for _, want := range []string{"local 10.123.0.5/32 dev lo.blue src 10.123.0.5", "local fd00:123::5/128 dev lo6.blue"} {
			if !slices.Contains(got, want) {
				t.Errorf("table 100 = %q, lacks %q", got, want)
			}
		}
	}
	// The address answers from a peer in the VRF.
	for _, dst := range []string{"10.123.0.5", "fd00:123::5"} {
		r, err := peer.Ping(testCtx(t), netip.MustParseAddr(dst), lab.PingOptions{Count: 2})
		if err != nil || r.Received == 0 {
			t.Errorf("ping %s from the VRF: %+v %v", dst, r, err)
		}
	}
	if p := mustPlan(t, newManager(t, ns, tableOnly(nodenet.Settings{})), spec); !p.Empty() {
		t.Fatalf("restarted agent plans changes:\n%s", p)
	}
	before := linkIndexes(t, ns)
	spec.VRFs[0].Loopbacks[0].Address = "10.123.0.6/32"
	spec.VRFs[0].Loopbacks[2].Address = "10.124.0.9/32"
	converge(t, m, spec)
	if after := linkIndexes(t, ns); after["lo.blue"] != before["lo.blue"] || after["lo.empty"] != before["lo.empty"] {
		t.Errorf("an address change recreated the loopbacks: %v -> %v", before, after)
	}
	spec.VRFs[0].Loopbacks = nil
	converge(t, m, spec)
	for _, name := range []string{"lo.blue", "lo6.blue", "lo.empty"} {
		if _, err := ns.Link(name); err == nil {
			t.Errorf("%s left after its loopback was removed", name)
		}
	}
	for _, r := range routesOf(t, ns, 100) {
		if strings.Contains(r, "10.123.") || strings.Contains(r, "10.124.") || strings.Contains(r, "fd00:123") {
			t.Errorf("route left: %s", r)
		}
	}
	rules, err := ns.Handle().RuleList(netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.Protocol == nodenet.DefaultRouteProtocol && (r.Src != nil || strings.HasPrefix(r.IifName, "lo") || strings.HasPrefix(r.OifName, "lo")) {
			t.Errorf("rule left: %v", r)
		}
	}
}

// addVRFLink routes a foreign link's traffic by table (a table-only VRF's workload link): address, connected
// routes in the table, iif rules (foreign protocol, so nodenet leaves them alone; removed with the namespace).
func addVRFLink(ctx context.Context, ns *lab.Netns, name string, table int) error {
	for _, args := range [][]string{
		{"addr", "add", "10.9.0.1/24", "dev", name, "noprefixroute"},
		{"-6", "addr", "add", "fd00:9::1/64", "dev", name, "noprefixroute", "nodad"},
		{"route", "add", "10.9.0.0/24", "dev", name, "table", strconv.Itoa(table)},
		{"-6", "route", "add", "fd00:9::/64", "dev", name, "table", strconv.Itoa(table)},
		{"rule", "add", "iif", name, "lookup", strconv.Itoa(table), "pref", "1100"},
		{"-6", "rule", "add", "iif", name, "lookup", strconv.Itoa(table), "pref", "1100"},
	} {
		if out, err := ns.Output(ctx, "ip", args...); err != nil {
			return errors.New(strings.Join(args, " ") + ": " + out + err.Error())
		}
	}
	return nil
}
