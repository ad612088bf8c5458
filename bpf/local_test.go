package bpf_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// The node's own addresses of TestRouterMainVRFDeliversLocal: on lo, as a node's router id, so that main has no
// route of them and its default route covers them.
var (
	addrNode  = netip.MustParseAddr("10.77.7.7")
	node6     = netip.MustParseAddr("fd00:77::7")
	localPort = uint16(7777)
)

// TestRouterMainVRFDeliversLocal: on an interface of the VRF routing by main (the cluster VRF), packets to the
// node's own addresses go up the stack, counted as not-fwded, even where main alone would route them out: the
// addresses live in table local, which main does not include once the namespace has a rule (as every node
// with VRFs has; IPv6 never merges the two). The test runs the program on the node's addresses, on rout's own
// (main routes its /24 and /64 out of rout) and on addresses main routes by its default route, then attaches
// it to rin and shows UDP datagrams to the node's addresses reach sockets bound to them.
func TestRouterMainVRFDeliversLocal(t *testing.T) {
	l := newLab(t)
	if err := l.nodeAddresses(); err != nil {
		t.Fatal(err)
	}
	tables := l.tables
	tables.Interfaces = append([]maps.Interface(nil), l.tables.Interfaces...)
	for i, in := range tables.Interfaces {
		if in.Ifindex == uint32(l.in) && in.VLAN == vlanUntagged {
			tables.Interfaces[i].VRF = 4 // routes by main
		}
	}
	if _, err := l.set.Apply(context.Background(), tables, "bpf-test-main-vrf"); err != nil {
		t.Fatal(err)
	}
	l.tables = tables

	for _, tc := range []struct {
		name   string
		pkt    packet
		reason maps.Reason
		out    expect
	}{
		{"node address ipv4", ip4(addrNode, protoUDP), maps.ReasonPassedNotFwded, unchanged},
		{"node address ipv6", ip6(node6, protoUDP), maps.ReasonPassedNotFwded, unchanged},
		{"address of rout ipv4", ip4(addrLocal, protoTCP), maps.ReasonPassedNotFwded, unchanged},
		{"address of rout ipv6", ip6(local6, protoTCP), maps.ReasonPassedNotFwded, unchanged},
		// Everything else still routes by main: here by its default routes.
		{"default route ipv4", ip4(addrRoute, protoUDP), maps.ReasonForwardedFib, routed},
		{"default route ipv6", ip6(route6, protoTCP), maps.ReasonForwardedFib, routed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, h := range []hook{hookTC, hookXDP} {
				want := h.passCode()
				if tc.reason.Action() == maps.ActionForwarded {
					want = h.redirectCode()
				}
				var out []byte
				vrf, reason, _, err := l.delta(func() error {
					return runInNS(l.ns, func() error {
						code, o, err := l.run(h, l.in, tc.pkt.bytes())
						if err == nil && code != want {
							err = fmt.Errorf("return code %d, want %d", code, want)
						}
						out = o
						return err
					})
				})
				if err != nil {
					t.Fatalf("%s: %v", h, err)
				}
				if vrf != 4 || reason != tc.reason {
					t.Errorf("%s: counted vrf %d %s, want vrf 4 %s", h, vrf, reason, tc.reason)
				}
				if w := tc.out.frame(tc.pkt); !bytes.Equal(out, w) {
					t.Errorf("%s: frame\n got %x\nwant %x", h, out, w)
				}
			}
		})
	}

	t.Run("delivered to sockets", func(t *testing.T) { l.deliverLocal(t) })
}

// nodeAddresses gives the lab what a node has: a rule (IPv4 then keeps table local apart from main), the node's
// addresses on lo, default routes in main (via rout's neighbours) and rin's link to the test client (its
// routes and neighbours: the reverse path check passes, and the kernel can answer).
func (l *lab) nodeAddresses() error {
	h, err := netlink.NewHandleAt(l.ns)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", l.name, err)
	}
	defer h.Close()
	for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
		r := netlink.NewRule()
		r.Family, r.Priority, r.Table = fam, 30000, 999
		r.Src = ipNet(netip.MustParsePrefix("192.0.2.99/32"))
		if fam == unix.AF_INET6 {
			r.Src = ipNet(netip.MustParsePrefix("2001:db8::99/128"))
		}
		if err := h.RuleAdd(r); err != nil {
			return fmt.Errorf("add rule %v: %w", r, err)
		}
	}
	lo, err := h.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	for _, a := range []netip.Addr{addrNode, node6} {
		addr := &netlink.Addr{IPNet: ipNet(netip.PrefixFrom(a, a.BitLen())), Flags: unix.IFA_F_NODAD}
		if err := h.AddrAdd(lo, addr); err != nil {
			return fmt.Errorf("add %s to lo: %w", a, err)
		}
	}
	for _, r := range []*netlink.Route{
		{Dst: ipNet(netip.MustParsePrefix("0.0.0.0/0")), Gw: gwRoute.AsSlice(), LinkIndex: l.out},
		{Dst: ipNet(netip.MustParsePrefix("::/0")), Gw: gw6Route.AsSlice(), LinkIndex: l.out},
		{Dst: ipNet(netip.PrefixFrom(addrClient, 24)), LinkIndex: l.in, Scope: netlink.SCOPE_LINK},
		{Dst: ipNet(netip.PrefixFrom(client6, 64)), LinkIndex: l.in},
	} {
		if err := h.RouteAdd(r); err != nil {
			return fmt.Errorf("add route %s: %w", r.Dst, err)
		}
	}
	for _, a := range []netip.Addr{addrClient, client6} {
		n := &netlink.Neigh{LinkIndex: l.in, State: netlink.NUD_PERMANENT, IP: a.AsSlice(), HardwareAddr: macClient[:]}
		if err := h.NeighAdd(n); err != nil {
			return fmt.Errorf("add neighbour %s: %w", a, err)
		}
	}
	return nil
}

// deliverLocal attaches tc_router to rin and sends UDP datagrams to the node's addresses from rin's peer: each
// must be counted once as not-fwded in VRF 4 and reach the socket bound to its address.
func (l *lab) deliverLocal(t *testing.T) {
	var (
		tx    *packetSocket
		lnk   link.Link
		socks = map[netip.Addr]int{}
	)
	defer func() {
		for _, fd := range socks {
			unix.Close(fd)
		}
	}()
	err := runInNS(l.ns, func() error {
		var err error
		lnk, err = link.AttachTCX(link.TCXOptions{Interface: l.in, Program: l.objs.TcRouter, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			return fmt.Errorf("attach tcx to rin: %w", err)
		}
		peerIn, err := net.InterfaceByName("rinp")
		if err != nil {
			return err
		}
		if tx, err = openPacketSocket(peerIn.Index); err != nil {
			return err
		}
		for _, a := range []netip.Addr{addrNode, node6} {
			fd, err := udpSocket(a)
			if err != nil {
				return err
			}
			socks[a] = fd
		}
		return nil
	})
	if tx != nil {
		defer tx.close()
	}
	if lnk != nil {
		defer lnk.Close()
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		testreq.KernelLacks(t, "tcx", err)
	}
	if err != nil {
		t.Fatal(err)
	}

	for i, p := range []packet{ip4(addrNode, protoUDP), ip6(node6, protoUDP)} {
		p.SrcPort, p.DstPort = uint16(51000+i), localPort
		before, err := l.counters(4)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.send(withUDPChecksum(p)); err != nil {
			t.Fatal(err)
		}
		got, err := recvUDP(socks[p.Dst], 5*time.Second)
		if err != nil {
			after, _ := l.counters(4)
			t.Errorf("%s: no datagram on the socket: %v (vrf 4: forwarded-fib +%d, forwarded-neigh +%d, not-fwded +%d)",
				p.Dst, err, after[4][maps.ReasonForwardedFib].Packets-before[4][maps.ReasonForwardedFib].Packets,
				after[4][maps.ReasonForwardedNeigh].Packets-before[4][maps.ReasonForwardedNeigh].Packets,
				after[4][maps.ReasonPassedNotFwded].Packets-before[4][maps.ReasonPassedNotFwded].Packets)
			continue
		}
		if !bytes.Equal(got, p.Payload) {
			t.Errorf("%s: socket got %x, want %x", p.Dst, got, p.Payload)
		}
		// The program counted before the kernel delivered the datagram.
		after, err := l.counters(4)
		if err != nil {
			t.Fatal(err)
		}
		if d := after[4][maps.ReasonPassedNotFwded].Packets - before[4][maps.ReasonPassedNotFwded].Packets; d != 1 {
			t.Errorf("%s: vrf 4 not-fwded counted %d times, want 1", p.Dst, d)
		}
	}
}

// ipNet is p's network (host bits cleared) as net.IPNet.
func ipNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// udpSocket is a UDP socket bound to a:localPort in the calling thread's namespace, with a receive timeout.
func udpSocket(a netip.Addr) (int, error) {
	fam, sa := unix.AF_INET6, unix.Sockaddr(&unix.SockaddrInet6{Port: int(localPort), Addr: a.As16()})
	if a.Is4() {
		fam, sa = unix.AF_INET, &unix.SockaddrInet4{Port: int(localPort), Addr: a.As4()}
	}
	fd, err := unix.Socket(fam, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("udp socket: %w", err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind %s:%d: %w", a, localPort, err)
	}
	tv := unix.Timeval{Usec: 100_000}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// recvUDP returns the first datagram on fd within d.
func recvUDP(fd int, d time.Duration) ([]byte, error) {
	buf := make([]byte, 2048)
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
	return nil, fmt.Errorf("nothing within %v", d)
}

// withUDPChecksum is p's frame with its UDP checksum set: IPv6 requires one (IPv4's 0 means none, set it anyway).
func withUDPChecksum(p packet) []byte {
	b := p.bytes()
	l3 := b[14:]
	var pseudo, udp []byte
	if p.Dst.Is4() {
		udp = l3[20:]
		pseudo = append(append(pseudo, l3[12:20]...), 0, protoUDP)
		pseudo = binary.BigEndian.AppendUint16(pseudo, uint16(len(udp)))
	} else {
		udp = l3[40:]
		pseudo = append(pseudo, l3[8:40]...)
		pseudo = binary.BigEndian.AppendUint32(pseudo, uint32(len(udp)))
		pseudo = append(pseudo, 0, 0, 0, protoUDP)
	}
	udp[6], udp[7] = 0, 0
	sum := ^onesSum(append(append([]byte{}, pseudo...), udp...))
	if sum == 0 {
		sum = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], sum)
	return b
}
