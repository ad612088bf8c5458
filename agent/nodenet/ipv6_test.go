package nodenet_test

import (
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

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/golden"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// ipv6Node is a node of an IPv6 fabric: VTEP vtep, an L3VNI VRF, a layer-2 network flooding statically to peers and
// a Link VXLAN over the uplink "up" in a bridge, flooding to the same peers.
func ipv6Node(vtep string, peers ...string) *v1alpha1.NodeNetworkConfigSpec {
	return &v1alpha1.NodeNetworkConfigSpec{
		Revision: "r1",
		Underlay: v1alpha1.UnderlaySpec{ASN: 65001, RouterID: "10.0.0.1", VTEPAddress: vtep, AddressFamilies: []v1alpha1.IPFamily{v1alpha1.IPv6}},
		Layer2s: []v1alpha1.NodeLayer2{{Name: "gw", VLAN: 300, VNI: 3000, MTU: 1430,
			Flooding: &v1alpha1.Flooding{Mode: v1alpha1.FloodingStatic, Peers: peers}}},
		Links: []v1alpha1.NodeLink{
			{Name: "uplink", InterfaceName: "up", Unmanaged: &v1alpha1.UnmanagedLink{}},
			{Name: "lb", InterfaceName: "brlb", Bridge: &v1alpha1.BridgeLink{MTU: 1430}},
			{Name: "lx", InterfaceName: "vxlb", VXLAN: &v1alpha1.NodeVXLANLink{VNI: 4242, Port: 4789, Device: "up", Master: "brlb",
				MTU: 1430, Flooding: &v1alpha1.Flooding{Mode: v1alpha1.FloodingStatic, Peers: peers}}},
		},
	}
}

// TestPlanIPv6VTEP: with an IPv6 VTEP every VXLAN device (L3VNI, layer-2 network, Link over its device) gets the
// IPv6 local address and the flood entries IPv6 peers; a resync plans nothing; moving the VTEP from IPv4 to IPv6
// recreates each VXLAN (the local address is immutable) and replaces its flood entries.
func TestPlanIPv6VTEP(t *testing.T) {
	spec := ipv6Node("2001:db8:ff::1", "2001:db8:ff::1", "2001:db8:ff::2", "2001:db8:ff::3")
	spec.VRFs = []v1alpha1.NodeVRF{{Name: "red", ID: 1, TableID: 1100, VNI: 1100}}
	settings := nodenet.Settings{} // the spec's VTEP address
	d := mustDesired(t, spec, settings, fullKernel)
	golden.Assert(t, filepath.Join("testdata", "scratch-ipv6-vtep.golden"), []byte(nodenet.ComputePlan(d, &nodenet.Observed{}).String()))
	if p := nodenet.ComputePlan(d, observedAfter(d)); !p.Empty() {
		t.Errorf("resync plans:\n%s", p)
	}

	v4 := ipv6Node("192.0.2.1", "192.0.2.2")
	v4.Underlay.AddressFamilies = nil
	v4.VRFs = spec.VRFs
	moved := lines(nodenet.ComputePlan(d, observedAfter(mustDesired(t, v4, settings, fullKernel))).Actions)
	for _, want := range []string{
		"interfaces: delete vxlan vx.red (recreate: vni 1100, local 192.0.2.1, dstport 4789, nolearning -> vni 1100, local 2001:db8:ff::1, dstport 4789, nolearning)",
		"interfaces: delete vxlan l2vx.300 (recreate: vni 3000, local 192.0.2.1, dstport 4789 -> vni 3000, local 2001:db8:ff::1, dstport 4789)",
		"interfaces: delete vxlan vxlb (recreate: vni 4242, local 192.0.2.1, dstport 4789, dev up -> vni 4242, local 2001:db8:ff::1, dstport 4789, dev up)",
		"interfaces: add flood entry 00:00:00:00:00:00 dst 2001:db8:ff::2 to vxlb (static flooding)",
		"interfaces: add flood entry 00:00:00:00:00:00 dst 2001:db8:ff::3 to l2vx.300 (static flooding)",
	} {
		if !slices.Contains(moved, want) {
			t.Errorf("IPv4 -> IPv6 VTEP: no action %q in\n  %s", want, strings.Join(moved, "\n  "))
		}
	}
}

// TestIPv6VTEPRefused: what a VXLAN device cannot send from, and peers of the other family, named with the value.
func TestIPv6VTEPRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     *v1alpha1.NodeNetworkConfigSpec
		settings nodenet.Settings
		want     string
	}{
		{"IPv4 peer of an IPv6 VTEP", ipv6Node("2001:db8:ff::1", "2001:db8:ff::2", "192.0.2.2"), nodenet.Settings{},
			`layer2s[gw].flooding.peers[1]: Invalid value: "192.0.2.2": of another address family than this node's VTEP address 2001:db8:ff::1`},
		{"link-local VTEP", ipv6Node("fe80::1"), nodenet.Settings{},
			`underlay.vtepAddress: Invalid value: "fe80::1": not a VTEP address the fabric can route`},
		{"multicast VTEP from the settings", ipv6Node("2001:db8:ff::1"), nodenet.Settings{VTEPAddress: netip.MustParseAddr("ff02::1")},
			`settings.vtepAddress: Invalid value: "ff02::1": not a VTEP address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nodenet.BuildDesired(tc.spec, tc.settings, fullKernel)
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("BuildDesired = %v, want an invalid-input error containing %q", err, tc.want)
			}
		})
	}
}

// TestVXLANOverIPv6Namespaces: two "nodes" joined by a veth with only IPv6 addresses (no IPv4 anywhere in the
// underlay), VTEPs on their loopbacks reached by IPv6 routes over link-local next hops (as BGP unnumbered installs
// them), nodenet building the VXLANs of a layer-2 network and of a Link over the uplink with static flooding over
// IPv6. A host behind each node reaches the other over each network, in IPv4 and IPv6; the devices have the IPv6
// local address and flood entries; the encapsulated packets are IPv6 UDP; a resync after traffic plans nothing.
func TestVXLANOverIPv6Namespaces(t *testing.T) {
	l := lab.New(t)
	vteps := []string{"2001:db8:ff::1", "2001:db8:ff::2"}
	topo := lab.Topology{}
	for i := 1; i <= 2; i++ {
		node := fmt.Sprintf("n%d", i)
		topo.Namespaces = append(topo.Namespaces, lab.Namespace{Name: node, Loopback: []string{vteps[i-1] + "/128"},
			Sysctls: []lab.Sysctl{{Key: "net.ipv4.conf.all.forwarding", Value: "0"}}})
		for _, net := range []string{"a", "b"} { // a: the layer-2 network, b: the Link
			host := fmt.Sprintf("h%d%s", i, net)
			sub := map[string]int{"a": 30, "b": 31}[net]
			topo.Namespaces = append(topo.Namespaces, lab.Namespace{Name: host})
			topo.Veths = append(topo.Veths, lab.Veth{
				A: lab.Port{NS: host, Name: "eth0", Addrs: []string{fmt.Sprintf("10.%d.0.%d/24", sub, i), fmt.Sprintf("fd00:%d::%d/64", sub, i)}},
				B: lab.Port{NS: node, Name: "host" + net}})
		}
	}
	// The underlay: one link, IPv6 only (a global and a fixed link-local address each).
	topo.Veths = append(topo.Veths, lab.Veth{
		A: lab.Port{NS: "n1", Name: "up", Addrs: []string{"2001:db8:50::1/64", "fe80::1/64"}, MTU: 1500},
		B: lab.Port{NS: "n2", Name: "up", Addrs: []string{"2001:db8:50::2/64", "fe80::2/64"}, MTU: 1500}})
	topo.Routes = []lab.Route{
		{NS: "n1", Dst: vteps[1] + "/128", Via: "fe80::2", Dev: "up"},
		{NS: "n2", Dst: vteps[0] + "/128", Via: "fe80::1", Dev: "up"},
	}
	topo.Neighbours = []lab.Neighbour{
		{NS: "n1", Dev: "up", IP: "fe80::2", MACOf: "n2/up"},
		{NS: "n2", Dev: "up", IP: "fe80::1", MACOf: "n1/up"},
	}
	l.MustBuild(testCtx(t), topo)
	for _, n := range []string{"n1", "n2"} {
		if addrs, err := l.NS(n).Handle().AddrList(link(t, l.NS(n), "up"), netlink.FAMILY_V4); err != nil || len(addrs) > 0 {
			t.Fatalf("%s: IPv4 addresses on the underlay %v (%v), want none", n, addrs, err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var managers []*nodenet.Manager
	for i, vtep := range vteps {
		ns := l.NS(fmt.Sprintf("n%d", i+1))
		m := newManager(t, ns, nodenet.Settings{}) // the spec's VTEP address
		p := converge(t, m, ipv6Node(vtep, vteps...))
		if i == 0 {
			t.Logf("node 1 applied:\n%s", p)
		}
		enslave(t, ns, "hosta", "l2br.300")
		enslave(t, ns, "hostb", "brlb")
		managers = append(managers, m)
		for _, name := range []string{"l2vx.300", "vxlb"} {
			vx := link(t, ns, name).(*netlink.Vxlan)
			if local, _ := netip.AddrFromSlice(vx.SrcAddr); local != netip.MustParseAddr(vtep) || !vx.Learning {
				t.Errorf("node %d %s: local %s learning %t, want %s learning", i+1, name, vx.SrcAddr, vx.Learning, vtep)
			}
			if got, want := floodOf(t, ns, name), []string{vteps[1-i]}; !slices.Equal(got, want) {
				t.Errorf("node %d %s: flood entries to %v, want %v", i+1, name, got, want)
			}
		}
		if vx := link(t, ns, "vxlb").(*netlink.Vxlan); vx.VtepDevIndex != link(t, ns, "up").Attrs().Index {
			t.Errorf("node %d vxlb: underlay device %d, want up (%d)", i+1, vx.VtepDevIndex, link(t, ns, "up").Attrs().Index)
		}
	}

	ip6Before, err := l.NS("n2").SNMP("Ip6")
	if err != nil {
		t.Fatal(err)
	}
	for _, net := range []string{"a", "b"} {
		sub := map[string]int{"a": 30, "b": 31}[net]
		for _, dst := range []netip.Addr{netip.MustParseAddr(fmt.Sprintf("10.%d.0.2", sub)), netip.MustParseAddr(fmt.Sprintf("fd00:%d::2", sub))} {
			res, err := l.NS("h1"+net).Ping(ctx, dst, lab.PingOptions{Count: 3, Deadline: 5 * time.Second})
			if err != nil || res.Received == 0 {
				t.Errorf("h1%s -> %s over VXLAN over IPv6: %+v, %v", net, dst, res, err)
			}
		}
	}
	ip6After, err := l.NS("n2").SNMP("Ip6")
	if err != nil {
		t.Fatal(err)
	}
	// The encapsulated echo requests (3 per network and family) are IPv6 packets node 2's stack delivers to its
	// VXLAN sockets; the hosts' own packets are bridged, never delivered to it.
	if in := ip6After["InDelivers"] - ip6Before["InDelivers"]; in < 12 {
		t.Errorf("node 2 delivered %d IPv6 packets during the pings, want at least 12 (the encapsulated echoes)", in)
	}
	for i, m := range managers {
		if p := mustPlan(t, m, ipv6Node(vteps[i], vteps...)); !p.Empty() {
			t.Errorf("node %d: a resync after traffic plans:\n%s", i+1, p)
		}
	}
}
