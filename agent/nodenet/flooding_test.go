package nodenet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/golden"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// staticL2 is a spec with one unrouted layer-2 network flooding statically to peers (VTEP 192.0.2.1: testSettings).
func staticL2(peers ...string) *v1alpha1.NodeNetworkConfigSpec {
	return &v1alpha1.NodeNetworkConfigSpec{
		Revision: "r1",
		Underlay: v1alpha1.UnderlaySpec{ASN: 65001, RouterID: "192.0.2.1", VTEPAddress: "192.0.2.1"},
		Layer2s: []v1alpha1.NodeLayer2{{Name: "gw", VLAN: 300, VNI: 3000, MTU: 1450,
			Flooding: &v1alpha1.Flooding{Mode: v1alpha1.FloodingStatic, Peers: peers}}},
	}
}

func evpnL2() *v1alpha1.NodeNetworkConfigSpec {
	s := staticL2()
	s.Layer2s[0].Flooding = nil
	return s
}

// TestPlanStaticFlooding: the plan of a static-flooding network creates a learning VXLAN with one flood entry per
// peer (not to itself), a resync plans nothing, changed peers add and delete exactly the difference, and a mode
// change recreates the VXLAN (learning is the device's; EVPN's flood entries are zebra's and never planned). A new
// bridge port learns (the kernel's default): only EVPN's turns it off.
func TestPlanStaticFlooding(t *testing.T) {
	d := mustDesired(t, staticL2("192.0.2.3", "192.0.2.1", "192.0.2.2"), testSettings(), fullKernel)
	golden.Assert(t, filepath.Join("testdata", "scratch-static-flooding.golden"), []byte(nodenet.ComputePlan(d, &nodenet.Observed{}).String()))
	applied := observedAfter(d)

	for _, tc := range []struct {
		name string
		spec *v1alpha1.NodeNetworkConfigSpec
		obs  *nodenet.Observed
		want []string
	}{
		{name: "resync of the applied state", spec: staticL2("192.0.2.2", "192.0.2.3"), obs: applied},
		{name: "a peer leaves, another joins", spec: staticL2("192.0.2.3", "192.0.2.4"), obs: applied, want: []string{
			"interfaces: add flood entry 00:00:00:00:00:00 dst 192.0.2.4 to l2vx.300 (static flooding)",
			"removals: delete flood entry 00:00:00:00:00:00 dst 192.0.2.2 from l2vx.300 (no longer a peer)",
		}},
		{name: "no peers left", spec: staticL2(), obs: applied, want: []string{
			"removals: delete flood entry 00:00:00:00:00:00 dst 192.0.2.2 from l2vx.300 (no longer a peer)",
			"removals: delete flood entry 00:00:00:00:00:00 dst 192.0.2.3 from l2vx.300 (no longer a peer)",
		}},
		{name: "evpn to static", spec: staticL2("192.0.2.2"), obs: observedAfter(mustDesired(t, evpnL2(), testSettings(), fullKernel)), want: []string{
			"interfaces: delete vxlan l2vx.300 (recreate: vni 3000, local 192.0.2.1, dstport 4789, nolearning -> vni 3000, local 192.0.2.1, dstport 4789)",
			"interfaces: create vxlan l2vx.300 (layer2 gw, vni 3000, local 192.0.2.1, dstport 4789, mtu 1450, master l2br.300)",
			"interfaces: add flood entry 00:00:00:00:00:00 dst 192.0.2.2 to l2vx.300 (static flooding)",
			"interfaces: set l2vx.300 up",
		}},
		{name: "static to evpn: the device goes with its entries", spec: evpnL2(), obs: applied, want: []string{
			"interfaces: delete vxlan l2vx.300 (recreate: vni 3000, local 192.0.2.1, dstport 4789 -> vni 3000, local 192.0.2.1, dstport 4789, nolearning)",
			"interfaces: create vxlan l2vx.300 (layer2 gw, vni 3000, local 192.0.2.1, dstport 4789, nolearning, mtu 1450, master l2br.300)",
			"interfaces: set bridge port flags of l2vx.300: learning off, neigh_suppress off",
			"interfaces: set l2vx.300 up",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := nodenet.ComputePlan(mustDesired(t, tc.spec, testSettings(), fullKernel), tc.obs)
			diffLines(t, lines(p.Actions), tc.want)
		})
	}
}

func TestStaticFloodingRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *v1alpha1.NodeNetworkConfigSpec
		want string
	}{
		{"peer of the other family", staticL2("192.0.2.2", "2001:db8::3"),
			`layer2s[gw].flooding.peers[1]: Invalid value: "2001:db8::3": of another address family than this node's VTEP address 192.0.2.1`},
		{"not an address", staticL2("vtep-2"), `layer2s[gw].flooding.peers[0]: Invalid value: "vtep-2"`},
		{"peers with evpn", func() *v1alpha1.NodeNetworkConfigSpec {
			s := staticL2("192.0.2.2")
			s.Layer2s[0].Flooding.Mode = v1alpha1.FloodingEVPN
			return s
		}(), `layer2s[gw].flooding.peers: Forbidden`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nodenet.BuildDesired(tc.spec, testSettings(), fullKernel)
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("BuildDesired = %v, want an invalid-input error containing %q", err, tc.want)
			}
		})
	}
}

// floodOf lists the peers of a link's all-zero-MAC FDB entries, sorted.
func floodOf(t *testing.T, ns *lab.Netns, name string) []string {
	t.Helper()
	l := link(t, ns, name)
	neighs, err := ns.Handle().NeighList(l.Attrs().Index, unix.AF_BRIDGE)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range neighs {
		if n.LinkIndex == l.Attrs().Index && bytes.Equal(n.HardwareAddr, make([]byte, 6)) {
			if n.Flags&unix.NTF_SELF == 0 || n.State&netlink.NUD_PERMANENT == 0 {
				t.Errorf("%s: flood entry to %s has flags %#x state %#x, want self permanent", name, n.IP, n.Flags, n.State)
			}
			out = append(out, n.IP.String())
		}
	}
	slices.Sort(out)
	return out
}

// staticNode is one "node" of the flooding lab: its namespace, nodenet manager and VTEP address.
type staticNode struct {
	ns   *lab.Netns
	m    *nodenet.Manager
	vtep string
}

func (n *staticNode) spec(peers ...string) *v1alpha1.NodeNetworkConfigSpec {
	s := staticL2(peers...)
	s.Underlay.RouterID, s.Underlay.VTEPAddress = n.vtep, n.vtep
	return s
}

// TestStaticFloodingNamespaces: three "nodes" on one underlay segment (a bridge in a fabric namespace), no BGP, a
// layer-2 network with static flooding to every node's VTEP (the same list on each: a node skips itself), a host
// behind each node's bridge. The hosts reach each other: their ARP broadcasts reach the other nodes by head-end
// replication. Each VXLAN has exactly its two flood entries; a resync plans nothing (also after the data path
// learnt the hosts' MACs); a peer dropped from one node's list loses exactly that entry; removing the network
// leaves no link, flood entry or bridge port of nodenet's (the hosts' foreign veth ends stay).
func TestStaticFloodingNamespaces(t *testing.T) {
	l, vteps := floodLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nodes := make([]*staticNode, 3)
	for i := range nodes {
		n := &staticNode{ns: l.NS(fmt.Sprintf("n%d", i+1)), vtep: vteps[i]}
		n.m = newManager(t, n.ns, nodenet.Settings{VTEPAddress: netip.MustParseAddr(n.vtep)})
		p := converge(t, n.m, n.spec(vteps...))
		if i == 0 {
			t.Logf("node 1 applied:\n%s", p)
		}
		enslave(t, n.ns, "host", "l2br.300") // the host's veth end is foreign: nodenet leaves it alone
		nodes[i] = n
	}
	for i, n := range nodes {
		others := slices.Delete(slices.Clone(vteps), i, i+1)
		if got := floodOf(t, n.ns, "l2vx.300"); !slices.Equal(got, others) {
			t.Errorf("node %d: flood entries to %v, want %v", i+1, got, others)
		}
		vx := link(t, n.ns, "l2vx.300").(*netlink.Vxlan)
		pi, err := n.ns.Handle().LinkGetProtinfo(vx)
		if err != nil {
			t.Fatal(err)
		}
		if !vx.Learning || !pi.Learning {
			t.Errorf("node %d: vxlan learning %t, bridge port learning %t; want both on", i+1, vx.Learning, pi.Learning)
		}
	}

	pingAll(t, ctx, l)
	for i, n := range nodes {
		if p := mustPlan(t, n.m, n.spec(vteps...)); !p.Empty() {
			t.Errorf("node %d: a resync after traffic (learnt MACs) plans:\n%s", i+1, p)
		}
	}

	// Node 1 drops node 3 from its peers: exactly that entry goes.
	p := mustPlan(t, nodes[0].m, nodes[0].spec(vteps[:2]...))
	diffLines(t, lines(p.Actions), []string{"removals: delete flood entry 00:00:00:00:00:00 dst 192.168.50.3 from l2vx.300 (no longer a peer)"})
	if err := applyAll(ctx, nodes[0].m, p); err != nil {
		t.Fatal(err)
	}
	if got := floodOf(t, nodes[0].ns, "l2vx.300"); !slices.Equal(got, vteps[1:2]) {
		t.Errorf("node 1 after dropping node 3: flood entries to %v, want %v", got, vteps[1:2])
	}

	// The network goes: nothing of nodenet's stays.
	for i, n := range nodes {
		empty := n.spec()
		empty.Layer2s = nil
		converge(t, n.m, empty)
		links, err := n.ns.Handle().LinkList()
		if err != nil {
			t.Fatal(err)
		}
		for _, lk := range links {
			if nodenet.OwnedAlias(lk.Attrs().Alias) || strings.HasPrefix(lk.Attrs().Name, "l2") {
				t.Errorf("node %d: %s (alias %q) left behind", i+1, lk.Attrs().Name, lk.Attrs().Alias)
			}
		}
		if h := link(t, n.ns, "host"); h.Attrs().MasterIndex != 0 {
			t.Errorf("node %d: the host's veth end still has master %d", i+1, h.Attrs().MasterIndex)
		}
	}
}

// floodLab builds three "nodes" n1..n3 with an uplink "up" each on one underlay segment (a bridge in namespace
// "fab"), their VTEP addresses 192.168.50.1..3 (returned) on it, and a host h1..h3 per node whose "eth0"
// (10.30.0.N/24) is a veth to the node's "host".
func floodLab(t *testing.T) (*lab.Lab, []string) {
	t.Helper()
	l := lab.New(t)
	topo := lab.Topology{
		Namespaces: []lab.Namespace{{Name: "fab"}},
		Devices:    []lab.Device{{Port: lab.Port{NS: "fab", Name: "sw"}, Kind: lab.KindBridge}},
	}
	var vteps []string
	for i := 1; i <= 3; i++ {
		node, host := fmt.Sprintf("n%d", i), fmt.Sprintf("h%d", i)
		vteps = append(vteps, fmt.Sprintf("192.168.50.%d", i))
		topo.Namespaces = append(topo.Namespaces, lab.Namespace{Name: node}, lab.Namespace{Name: host})
		topo.Veths = append(topo.Veths,
			lab.Veth{A: lab.Port{NS: node, Name: "up", Addrs: []string{vteps[i-1] + "/24"}}, B: lab.Port{NS: "fab", Name: fmt.Sprintf("p%d", i)}},
			lab.Veth{A: lab.Port{NS: host, Name: "eth0", Addrs: []string{fmt.Sprintf("10.30.0.%d/24", i)}}, B: lab.Port{NS: node, Name: "host"}})
	}
	l.MustBuild(testCtx(t), topo)
	for i := 1; i <= 3; i++ {
		enslave(t, l.NS("fab"), fmt.Sprintf("p%d", i), "sw")
	}
	return l, vteps
}

// pingAll checks that every host reaches every other.
func pingAll(t *testing.T, ctx context.Context, l *lab.Lab) {
	t.Helper()
	for _, pair := range [][2]int{{1, 2}, {1, 3}, {2, 3}, {3, 1}} {
		from, dst := l.NS(fmt.Sprintf("h%d", pair[0])), netip.MustParseAddr(fmt.Sprintf("10.30.0.%d", pair[1]))
		res, err := from.Ping(ctx, dst, lab.PingOptions{Count: 3, Deadline: 5 * time.Second})
		if err != nil || res.Received == 0 {
			t.Errorf("h%d -> %s: %+v, %v", pair[0], dst, res, err)
		}
	}
}

// enslave puts a (foreign) link into a bridge and brings it up.
func enslave(t *testing.T, ns *lab.Netns, name, bridge string) {
	t.Helper()
	br := link(t, ns, bridge)
	l := link(t, ns, name)
	if err := ns.Handle().LinkSetMasterByIndex(l, br.Attrs().Index); err != nil {
		t.Fatalf("%s master %s: %v", name, bridge, err)
	}
	if err := ns.Handle().LinkSetUp(l); err != nil {
		t.Fatal(err)
	}
}
