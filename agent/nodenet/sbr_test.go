package nodenet_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/lab"
)

func withSBR(s *v1alpha1.NodeNetworkConfigSpec, vrf int, prefixes ...string) *v1alpha1.NodeNetworkConfigSpec {
	s.VRFs[vrf].SBRPrefixes = prefixes
	return s
}

// TestSBRPlan: one rule per prefix and family after the interface rules, removed with the prefix, in both VRF
// modes (a VRF device's l3mdev rule does not cover sources outside its interfaces).
func TestSBRPlan(t *testing.T) {
	for _, f := range []nodenet.Features{noVRFKernel, fullKernel} {
		without := observedAfter(mustDesired(t, twoVRFsOneL2(), testSettings(), f))
		d := mustDesired(t, withSBR(twoVRFsOneL2(), 0, "fd00:50::/64", "10.50.0.0/24"), testSettings(), f)
		diffLines(t, lines(nodenet.ComputePlan(d, without).Actions), []string{
			"vrfs: add rule 1101: from 10.50.0.0/24 lookup 100 (ipv4)",
			"vrfs: add rule 1101: from fd00:50::/64 lookup 100 (ipv6)",
		})
		if p := nodenet.ComputePlan(d, observedAfter(d)); !p.Empty() {
			t.Errorf("plan after apply not empty:\n%s", p)
		}
		// The prefix goes: its rule goes; the other stays.
		less := mustDesired(t, withSBR(twoVRFsOneL2(), 0, "10.50.0.0/24"), testSettings(), f)
		diffLines(t, lines(nodenet.ComputePlan(less, observedAfter(d)).Actions), []string{
			"removals: delete rule 1101: from fd00:50::/64 lookup 100 (ipv6) (no longer desired)",
		})
	}
}

func TestSBRErrorsAndNotes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    *v1alpha1.NodeNetworkConfigSpec
		mention string
	}{
		{"not a cidr", withSBR(twoVRFsOneL2(), 0, "10.50.0.0"), `vrfs[blue].sbrPrefixes[0]: Invalid value: "10.50.0.0": not a CIDR prefix`},
		{"host bits", withSBR(twoVRFsOneL2(), 0, "10.50.0.0/24", "10.60.0.1/16"),
			`vrfs[blue].sbrPrefixes[1]: Invalid value: "10.60.0.1/16": not a network address (the prefix is 10.60.0.0/16)`},
		{"ipv4-mapped", withSBR(twoVRFsOneL2(), 1, "::ffff:10.0.0.0/104"), `vrfs[red].sbrPrefixes[0]: Invalid value: "::ffff:10.0.0.0/104"`},
		{"overlap between vrfs", withSBR(withSBR(twoVRFsOneL2(), 0, "10.50.0.0/16"), 1, "10.50.7.0/24"),
			`vrfs[red].sbrPrefixes[0]: Invalid value: "10.50.7.0/24": overlaps 10.50.0.0/16 of vrfs[blue].sbrPrefixes[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nodenet.BuildDesired(tc.spec, testSettings(), noVRFKernel)
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("BuildDesired = %v, want ErrInvalid naming %q", err, tc.mention)
			}
		})
	}
	// Overlaps inside one VRF are harmless (same table).
	mustDesired(t, withSBR(twoVRFsOneL2(), 0, "10.50.0.0/16", "10.50.7.0/24"), testSettings(), noVRFKernel)

	// The eBPF router honours the prefixes (sbr_table, agent/bpftables): no note about it.
	s := withSBR(twoVRFsOneL2(), 0, "10.50.0.0/24")
	s.DataPlane.Interfaces = []v1alpha1.DataPlaneInterface{
		{Name: "eth0", VRF: "default"}, {Name: "eth1", VLAN: 100, VRF: "blue"}, {Name: "eth2", Mode: v1alpha1.ModePass},
	}
	d := mustDesired(t, s, testSettings(), noVRFKernel)
	for _, n := range d.Notes {
		if strings.Contains(n, "source-based routing") {
			t.Errorf("note %q: the router applies source-based routing", n)
		}
	}
}

// TestSBRRoutesByVRFTable sends packets from an sbr prefix through the namespace: they reach a destination only
// the VRF's table routes, and after the prefix is removed no rule is left and they do not.
func TestSBRRoutesByVRFTable(t *testing.T) {
	l := labWith(t, lab.Topology{
		// Link-local addresses usable at once: neighbour solicitations need one as their source.
		Namespaces: []lab.Namespace{{Name: "src", Sysctls: noDAD("s0")}, {Name: "dst", Sysctls: noDAD("d0")}},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "nc", Name: "in0", Addrs: []string{"10.50.0.1/24", "fd00:50::1/64"}},
				B: lab.Port{NS: "src", Name: "s0", Addrs: []string{"10.50.0.5/24", "fd00:50::5/64"}}},
			// The destination's subnet is only in table 100 (the VRF's), not in main.
			{A: lab.Port{NS: "nc", Name: "out0", Addrs: []string{"10.77.0.1/24", "fd00:77::1/64"}, NoPrefixRoute: true},
				B: lab.Port{NS: "dst", Name: "d0", Addrs: []string{"10.77.0.7/24", "fd00:77::7/64"}}},
		},
		Routes: []lab.Route{
			{NS: "src", Dst: "default", Via: "10.50.0.1", Dev: "s0"},
			{NS: "src", Dst: "default6", Via: "fd00:50::1", Dev: "s0"},
			{NS: "dst", Dst: "default", Via: "10.77.0.1", Dev: "d0"},
			{NS: "dst", Dst: "default6", Via: "fd00:77::1", Dev: "d0"},
			{NS: "nc", Table: 100, Dst: "10.77.0.0/24", Dev: "out0"},
			{NS: "nc", Table: 100, Dst: "fd00:77::/64", Dev: "out0"},
		},
	})
	ns, src := l.NS("nc"), l.NS("src")
	for _, kv := range [][2]string{{"net.ipv4.ip_forward", "1"}, {"net.ipv6.conf.all.forwarding", "1"}, {"net.ipv4.conf.all.rp_filter", "0"}} {
		if err := ns.Sysctl(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	spec := &v1alpha1.NodeNetworkConfigSpec{Revision: "r1", VRFs: []v1alpha1.NodeVRF{
		{Name: "blue", ID: 1, TableID: 100, SBRPrefixes: []string{"10.50.0.0/24", "fd00:50::/64"}},
	}}
	dsts := []netip.Addr{netip.MustParseAddr("10.77.0.7"), netip.MustParseAddr("fd00:77::7")}
	reach := func(want bool) {
		t.Helper()
		for _, dst := range dsts {
			r, err := src.Ping(testCtx(t), dst, lab.PingOptions{Count: 2, Wait: 500 * time.Millisecond})
			if err != nil {
				t.Fatalf("ping %s: %v", dst, err)
			}
			if got := r.Received > 0; got != want {
				t.Errorf("ping %s from the sbr prefix: %d/%d replies, want reachable=%v\n%s", dst, r.Received, r.Transmitted, want, r.Output)
			}
		}
	}
	reach(false) // main has no route to the destination

	m := newManager(t, ns, nodenet.Settings{})
	p := converge(t, m, spec)
	if s := p.String(); !strings.Contains(s, "add rule 1101: from 10.50.0.0/24 lookup 100 (ipv4)") ||
		!strings.Contains(s, "add rule 1101: from fd00:50::/64 lookup 100 (ipv6)") {
		t.Errorf("plan lacks the sbr rules:\n%s", s)
	}
	reach(true)
	if p := mustPlan(t, newManager(t, ns, nodenet.Settings{}), spec); !p.Empty() {
		t.Fatalf("restarted agent plans changes:\n%s", p)
	}

	spec.VRFs[0].SBRPrefixes = nil
	converge(t, m, spec)
	rules, err := ns.Handle().RuleList(netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.Protocol == nodenet.DefaultRouteProtocol && r.Src != nil {
			t.Errorf("source rule left after the prefixes were removed: %v", r)
		}
	}
	reach(false)
}

// labWith is nsWith for tests that need the other namespaces too.
func labWith(t *testing.T, topo lab.Topology) *lab.Lab {
	t.Helper()
	l := lab.New(t)
	topo.Namespaces = append([]lab.Namespace{{Name: "nc", Sysctls: noDAD(ncLinks(topo)...)}}, topo.Namespaces...)
	l.MustBuild(testCtx(t), topo)
	return l
}

// ncLinks are the veth ends the topology puts into "nc".
func ncLinks(topo lab.Topology) []string {
	var out []string
	for _, v := range topo.Veths {
		for _, p := range []lab.Port{v.A, v.B} {
			if p.NS == "nc" {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

func noDAD(links ...string) []lab.Sysctl {
	var out []lab.Sysctl
	for _, l := range links {
		out = append(out, lab.Sysctl{Key: "net.ipv6.conf." + l + ".accept_dad", Value: "0"})
	}
	return out
}
