package netnstest

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// The IPv6 underlay of the tunnel test: each node's VTEP on its loopback, the nodes' L3VNI bridge MACs (EVPN's
// router MACs).
var (
	vtepR, vtepR2   = netip.MustParseAddr("2001:db8:ff::1"), netip.MustParseAddr("2001:db8:ff::2")
	rmacR, rmacR2   = net.HardwareAddr{0x02, 0, 0, 0, 0x11, 0x01}, net.HardwareAddr{0x02, 0, 0, 0, 0x11, 0x02}
	tunnelPrefixA   = []string{"10.0.1.0/24", "fd00:1::/64"}
	tunnelPrefixB   = []string{"10.0.2.0/24", "fd00:2::/64"}
	tunnelL3VNI     = 1100
	tunnelL3Devices = []string{"br.red", "vx.red"}
)

// tunnelTopology is a -- r ==(IPv6 only)== r2 -- b: r is the node with the eBPF router (kernel forwarding off), r2 a
// plain kernel router. Their only link has IPv6 addresses alone; each reaches the other's VTEP (on its loopback) by
// an IPv6 route over a link-local next hop, as BGP unnumbered installs them.
func tunnelTopology() lab.Topology {
	return lab.Topology{
		Namespaces: []lab.Namespace{
			{Name: "a", Sysctls: hostSysctls},
			{Name: "r", Sysctls: routerSysctls("ra", "up"), Loopback: []string{vtepR.String() + "/128"}},
			{Name: "r2", Loopback: []string{vtepR2.String() + "/128"}, Sysctls: append([]lab.Sysctl{
				{Key: "net.ipv4.conf.all.forwarding", Value: "1"}, {Key: "net.ipv4.conf.default.forwarding", Value: "1"},
				{Key: "net.ipv6.conf.all.forwarding", Value: "1"}, {Key: "net.ipv6.conf.default.forwarding", Value: "1"},
			}, hostSysctls...)},
			{Name: "b", Sysctls: hostSysctls},
		},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "a", Name: "eth0", Addrs: []string{"10.0.1.2/24", "fd00:1::2/64"}},
				B: lab.Port{NS: "r", Name: "ra", Addrs: []string{"10.0.1.1/24", "fd00:1::1/64"}, NoPrefixRoute: true}},
			{A: lab.Port{NS: "r", Name: "up", Addrs: []string{"2001:db8:50::1/64", "fe80::1/64"}},
				B: lab.Port{NS: "r2", Name: "up", Addrs: []string{"2001:db8:50::2/64", "fe80::2/64"}}},
			{A: lab.Port{NS: "b", Name: "eth0", Addrs: []string{"10.0.2.2/24", "fd00:2::2/64"}},
				B: lab.Port{NS: "r2", Name: "rb", Addrs: []string{"10.0.2.1/24", "fd00:2::1/64"}}},
		},
		Devices: []lab.Device{{Port: lab.Port{NS: "r", Name: standInDev}}},
		Routes: []lab.Route{
			{NS: "a", Dst: "default", Via: "10.0.1.1", Dev: "eth0"},
			{NS: "a", Dst: "default6", Via: "fd00:1::1", Dev: "eth0"},
			{NS: "b", Dst: "default", Via: "10.0.2.1", Dev: "eth0"},
			{NS: "b", Dst: "default6", Via: "fd00:2::1", Dev: "eth0"},
			{NS: "r", Table: tableMain, Dst: "10.0.1.0/24", Dev: "ra"},
			{NS: "r", Table: tableMain, Dst: "fd00:1::/64", Dev: "ra"},
			{NS: "r", Table: tableMain, Dst: "10.0.1.1/32", Dev: "ra", Type: lab.Local},
			{NS: "r", Table: tableMain, Dst: "fd00:1::1/128", Dev: "ra", Type: lab.Local},
			// The other VTEP by the default route, not a /128: without VRF devices the L3VNI bridge is in no VRF,
			// and the kernel checks an onlink IPv6 next hop against the main table, refusing one routed there over
			// another device ("Nexthop has invalid gateway or device mismatch"). With a VRF device (a real L3VNI) the
			// check looks at the VRF's table, where the VTEP is not routed.
			{NS: "r", Dst: "default6", Via: "fe80::2", Dev: "up"},
			{NS: "r2", Dst: "default6", Via: "fe80::1", Dev: "up"},
		},
		Neighbours: []lab.Neighbour{
			{NS: "a", Dev: "eth0", IP: "10.0.1.1", MACOf: "r/ra"},
			{NS: "a", Dev: "eth0", IP: "fd00:1::1", MACOf: "r/ra"},
			{NS: "r", Dev: "ra", IP: "10.0.1.2", MACOf: "a/eth0"},
			{NS: "r", Dev: "ra", IP: "fd00:1::2", MACOf: "a/eth0"},
			{NS: "b", Dev: "eth0", IP: "10.0.2.1", MACOf: "r2/rb"},
			{NS: "b", Dev: "eth0", IP: "fd00:2::1", MACOf: "r2/rb"},
			{NS: "r2", Dev: "rb", IP: "10.0.2.2", MACOf: "b/eth0"},
			{NS: "r2", Dev: "rb", IP: "fd00:2::2", MACOf: "b/eth0"},
			{NS: "r", Dev: "up", IP: "fe80::2", MACOf: "r2/up"},
			{NS: "r2", Dev: "up", IP: "fe80::1", MACOf: "r/up"},
		},
	}
}

// l3vniOverIPv6 builds what nodenet and zebra make of an L3VNI whose VTEPs are IPv6 (symmetric IRB, EVPN type-5
// routes): the bridge (router MAC rmac) with its VXLAN port sending from vtep, and, in table, the remote prefixes
// via the remote VTEP on the bridge (onlink; an IPv4 prefix gets the IPv6 next hop, RFC 8950), the remote VTEP as
// a neighbour with its router MAC, and that MAC in the VXLAN's FDB towards the remote VTEP.
func l3vniOverIPv6(t *testing.T, ns *lab.Netns, table int, vtep, remote netip.Addr, rmac, remoteMAC net.HardwareAddr, prefixes []string) {
	t.Helper()
	h := ns.Handle()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: tunnelL3Devices[0], HardwareAddr: rmac, MTU: 1430}}
	if err := h.LinkAdd(br); err != nil {
		t.Fatalf("%s: add %s: %v", ns.Logical, br.Name, err)
	}
	vx := &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: tunnelL3Devices[1], MasterIndex: br.Index, MTU: 1430},
		VxlanId: tunnelL3VNI, SrcAddr: net.IP(vtep.AsSlice()), Port: 4789, Learning: false}
	if err := h.LinkAdd(vx); err != nil {
		t.Fatalf("%s: add %s: %v", ns.Logical, vx.Name, err)
	}
	for _, l := range []netlink.Link{br, vx} {
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	gw := net.IP(remote.AsSlice())
	for _, p := range prefixes {
		dst := netip.MustParsePrefix(p)
		r := &netlink.Route{LinkIndex: br.Index, Dst: &net.IPNet{IP: dst.Addr().AsSlice(), Mask: net.CIDRMask(dst.Bits(), dst.Addr().BitLen())},
			Table: table, Flags: int(netlink.FLAG_ONLINK)}
		if dst.Addr().Is4() {
			r.Via = &netlink.Via{AddrFamily: netlink.FAMILY_V6, Addr: gw}
		} else {
			r.Gw = gw
		}
		if err := h.RouteAdd(r); err != nil {
			t.Fatalf("%s: route %s via %s dev %s onlink table %d: %v", ns.Logical, p, remote, br.Name, table, err)
		}
	}
	if err := h.NeighAdd(&netlink.Neigh{LinkIndex: br.Index, Family: netlink.FAMILY_V6, State: netlink.NUD_PERMANENT,
		IP: gw, HardwareAddr: remoteMAC}); err != nil {
		t.Fatalf("%s: neighbour %s on %s: %v", ns.Logical, remote, br.Name, err)
	}
	if err := h.NeighAppend(&netlink.Neigh{LinkIndex: vx.Index, Family: unix.AF_BRIDGE, State: netlink.NUD_PERMANENT,
		Flags: netlink.NTF_SELF, IP: gw, HardwareAddr: remoteMAC}); err != nil {
		t.Fatalf("%s: fdb %s dst %s on %s: %v", ns.Logical, remoteMAC, remote, vx.Name, err)
	}
}

// TestRouterOverIPv6Tunnel: the eBPF router forwards a tenant's traffic into and out of an L3VNI whose VXLAN runs
// over IPv6: IPv4 and IPv6 pings from a (behind r) reach b (behind r2), the underlay between r and r2 carrying no
// IPv4 at all. Outbound, the VRF table's route has the remote VTEP as an IPv6 next hop on the L3VNI bridge (for the
// IPv4 prefix too): the router's FIB lookup resolves it to the remote router MAC and redirects into the bridge,
// whose VXLAN port encapsulates in IPv6. Inbound, the decapsulated packets are routed from the VXLAN/bridge to a.
// Every packet through r is the router's (forwarded-fib counts both directions; the kernel forwarded none).
func TestRouterOverIPv6Tunnel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := lab.New(t)
	l.MustBuild(ctx, tunnelTopology())
	r, r2 := l.NS("r"), l.NS("r2")
	l3vniOverIPv6(t, r, tableMain, vtepR, vtepR2, rmacR, rmacR2, tunnelPrefixB)
	l3vniOverIPv6(t, r2, unix.RT_TABLE_MAIN, vtepR2, vtepR, rmacR2, rmacR, tunnelPrefixA)
	for _, ns := range []*lab.Netns{r, r2} {
		up, err := ns.Link("up")
		if err != nil {
			t.Fatal(err)
		}
		if addrs, err := ns.Handle().AddrList(up, netlink.FAMILY_V4); err != nil || len(addrs) > 0 {
			t.Fatalf("%s: IPv4 addresses on the underlay: %v (%v), want none", ns.Logical, addrs, err)
		}
	}
	// The bridge and the VXLAN were made after the sysctls: they inherit "default" (forwarding off), as nodenet's do.
	assertKernelForwardingOff(t, r, append([]string{"ra", "up"}, tunnelL3Devices...)...)

	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	rt.attach(t, loader.ModeAuto, append([]string{"ra"}, tunnelL3Devices...)...)
	rt.apply(t, lineTables(t, r, tableMain, append([]string{"ra"}, tunnelL3Devices...)...), "ipv6-tunnel")

	const n = 10
	for _, dst := range []netip.Addr{hostB4, hostB6} {
		fwd0, kernel0 := rt.counter(t, vrfID, maps.ReasonForwardedFib).Packets, kernelForwarded(t, r)
		ip6, err := r2.SNMP("Ip6")
		if err != nil {
			t.Fatal(err)
		}
		pingOK(ctx, t, l.NS("a"), dst, n)
		if got := rt.counter(t, vrfID, maps.ReasonForwardedFib).Packets - fwd0; got != 2*n {
			t.Errorf("a -> %s: forwarded-fib grew by %d, want %d (each request out through the tunnel, each reply back)", dst, got, 2*n)
		}
		if got := kernelForwarded(t, r) - kernel0; got != 0 {
			t.Errorf("a -> %s: the kernel of r forwarded %d packets, want 0", dst, got)
		}
		after, err := r2.SNMP("Ip6")
		if err != nil {
			t.Fatal(err)
		}
		if got := after["InDelivers"] - ip6["InDelivers"]; got < n {
			t.Errorf("a -> %s: r2 delivered %d IPv6 packets (the encapsulated requests), want at least %d", dst, got, n)
		}
	}
	if c := rt.counter(t, vrfID, maps.ReasonPassedNoNeigh); c.Packets != 0 {
		t.Errorf("passed for lack of a neighbour: %s (the remote VTEP's entry on the bridge is permanent)", fmtCounter(c))
	}
}
