package bpf_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/maps"
)

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func ip4(dst netip.Addr, proto uint8) packet {
	return packet{DstMAC: macIn, SrcMAC: macClient, Src: addrClient, Dst: dst, TTL: 64, TOS: 0x10,
		Proto: proto, SrcPort: 40000, DstPort: 80, ICMPType: 8, Payload: payload(32)}
}

func ip6(dst netip.Addr, proto uint8) packet {
	return packet{DstMAC: macIn, SrcMAC: macClient, Src: client6, Dst: dst, TTL: 64,
		Proto: proto, SrcPort: 40000, DstPort: 443, ICMPType: 128, Payload: payload(32)}
}

func with(p packet, f func(*packet)) packet { f(&p); return p }

func from(p packet, src netip.Addr) packet { p.Src = src; return p }

func tagged(p packet, vlan uint16) packet {
	p.Tagged, p.VLAN = true, vlan
	return p
}

// Expected output frames.
type expect int

const (
	unchanged   expect = iota // passed or dropped: the frame is not touched
	routed                    // fib SUCCESS: untagged, MACs from the fib, TTL - 1
	neighRouted               // bpf_redirect_neigh: untagged, TTL - 1, MACs untouched
	rewritten                 // redirect with MAC rewrite: untagged, MACs from the table
	untagged                  // redirect without rewrite: only the tag removed
)

func (e expect) frame(p packet) []byte {
	if e == unchanged {
		return p.bytes()
	}
	p.Tagged = false
	switch e {
	case routed:
		p.DstMAC, p.SrcMAC = macNeigh, macOut
		p.TTL--
	case neighRouted:
		p.TTL--
	case rewritten:
		p.DstMAC, p.SrcMAC = macRedDst, macRedSrc
	}
	return p.bytes()
}

type routerCase struct {
	name    string
	ingress string // rin (default), rred, rpeer, rnof
	pkt     packet
	raw     func([]byte) []byte // mutates the built frame (for malformed headers)
	vrf     uint32
	reason  maps.Reason
	xdp     *maps.Reason // when XDP differs
	out     expect       // for forwarded reasons
	xdpOut  *expect
}

func r(x maps.Reason) *maps.Reason { return &x }
func e(x expect) *expect           { return &x }

func routerCases() []routerCase {
	arp := packet{DstMAC: macIn, SrcMAC: macClient, EtherType: etherTypeARP, Payload: payload(28)}
	return []routerCase{
		// Forwarded by the fib.
		{name: "ipv4 tcp", pkt: ip4(addrRoute, protoTCP), vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv4 udp", pkt: ip4(addrRoute, protoUDP), vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv4 icmp", pkt: ip4(addrRoute, protoICMP), vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv6 tcp", pkt: ip6(route6, protoTCP), vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv6 udp", pkt: ip6(route6, protoUDP), vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv6 icmp echo", pkt: ip6(route6, protoICMPv6), vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv4 ttl 2", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.TTL = 2 }),
			vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv4 ttl 255 checksum carry", pkt: with(ip4(addrRoute, protoUDP), func(p *packet) { p.TTL = 255; p.TOS = 0xff }),
			vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv6 hop limit 2", pkt: with(ip6(route6, protoUDP), func(p *packet) { p.TTL = 2 }),
			vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv4 dont fragment", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.FragField = 0x4000 }),
			vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "vlan tagged ipv4", pkt: tagged(ip4(addrRoute, protoTCP), vlanRoute), vrf: 1,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "vlan tagged ipv6", pkt: tagged(ip6(route6, protoUDP), vlanRoute), vrf: 1,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "vlan tagged priority bits", pkt: tagged(ip4(addrRoute, protoTCP), 0xe000|vlanRoute), vrf: 1,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "other host mac", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.DstMAC = macOther }),
			vrf: 1, reason: maps.ReasonPassedNotUnicast, xdp: r(maps.ReasonForwardedFib), xdpOut: e(routed)},

		// Next hop without neighbour: tc hands it to the neighbour subsystem.
		{name: "ipv4 no neighbour", pkt: ip4(addrNoNbr, protoTCP), vrf: 1,
			reason: maps.ReasonForwardedNeigh, out: neighRouted, xdp: r(maps.ReasonPassedNoNeigh)},
		{name: "ipv6 no neighbour", pkt: ip6(noNbr6, protoTCP), vrf: 1,
			reason: maps.ReasonForwardedNeigh, out: neighRouted, xdp: r(maps.ReasonPassedNoNeigh)},
		{name: "vlan tagged no neighbour", pkt: tagged(ip4(addrNoNbr, protoUDP), vlanRoute), vrf: 1,
			reason: maps.ReasonForwardedNeigh, out: neighRouted, xdp: r(maps.ReasonPassedNoNeigh)},

		// MTU: tc leaves tot_len 0 (GSO), XDP checks it.
		{name: "ipv4 above route mtu", pkt: with(ip4(addrMTU, protoUDP), func(p *packet) { p.Payload = payload(1200) }),
			vrf: 1, reason: maps.ReasonForwardedFib, out: routed, xdp: r(maps.ReasonPassedFragNeeded)},
		{name: "ipv6 above route mtu", pkt: with(ip6(mtu6, protoUDP), func(p *packet) { p.Payload = payload(1400) }),
			vrf: 1, reason: maps.ReasonForwardedFib, out: routed, xdp: r(maps.ReasonPassedFragNeeded)},
		{name: "ipv4 below route mtu", pkt: with(ip4(addrMTU, protoUDP), func(p *packet) { p.Payload = payload(900) }),
			vrf: 1, reason: maps.ReasonForwardedFib, out: routed},

		// fib results other than success.
		{name: "ipv4 local address", pkt: ip4(addrLocal, protoTCP), vrf: 1, reason: maps.ReasonPassedNotFwded},
		{name: "ipv6 local address", pkt: ip6(local6, protoTCP), vrf: 1, reason: maps.ReasonPassedNotFwded},
		{name: "ipv4 no route", pkt: ip4(addrNoRt, protoTCP), vrf: 1, reason: maps.ReasonPassedNotFwded},
		{name: "missing kernel table", pkt: tagged(ip4(addrRoute, protoTCP), vlanNoTable), vrf: 3,
			reason: maps.ReasonPassedNotFwded},
		{name: "ipv4 blackhole", pkt: ip4(addrBlack, protoTCP), vrf: 1, reason: maps.ReasonPassedFibOther},
		{name: "ipv6 blackhole", pkt: ip6(black6, protoTCP), vrf: 1, reason: maps.ReasonPassedFibOther},
		{name: "strict blackhole", pkt: tagged(ip4(addrBlack, protoTCP), vlanStrict), vrf: 1,
			reason: maps.ReasonDroppedFib},
		{name: "strict ipv6 blackhole", pkt: tagged(ip6(black6, protoUDP), vlanStrict), vrf: 1,
			reason: maps.ReasonDroppedFib},
		{name: "strict local address passes", pkt: tagged(ip4(addrLocal, protoTCP), vlanStrict), vrf: 1,
			reason: maps.ReasonPassedNotFwded},
		{name: "forwarding disabled", pkt: tagged(ip4(addrRoute, protoTCP), vlanFwdOff), vrf: 2,
			reason: maps.ReasonPassedFwdDisabled},
		{name: "ipv6 forwarding disabled", pkt: tagged(ip6(route6, protoTCP), vlanFwdOff), vrf: 2,
			reason: maps.ReasonPassedFwdDisabled},
		{name: "strict forwarding disabled", pkt: tagged(ip4(addrRoute, protoTCP), vlanFwdOffStrict), vrf: 2,
			reason: maps.ReasonDroppedFwdDisabled},
		{name: "vrf missing", pkt: tagged(ip4(addrRoute, protoTCP), vlanNoVRF), vrf: vrfNoVRF,
			reason: maps.ReasonPassedNoVRF},
		{name: "strict vrf missing", pkt: tagged(ip4(addrRoute, protoTCP), vlanNoVRFStrict), vrf: vrfNoVRF,
			reason: maps.ReasonDroppedNoVRF},

		// Interfaces.
		{name: "unknown vlan", pkt: tagged(ip4(addrRoute, protoTCP), vlanUnknown), vrf: 0,
			reason: maps.ReasonPassedNoIface},
		{name: "unknown interface", ingress: "rnof", pkt: ip4(addrRoute, protoTCP), vrf: 0,
			reason: maps.ReasonPassedNoIface},
		{name: "mode pass", pkt: tagged(ip4(addrRoute, protoTCP), vlanPass), vrf: 1, reason: maps.ReasonPassedMode},

		// Left to the kernel by classification.
		{name: "ipv4 ttl 1", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.TTL = 1 }), vrf: 1,
			reason: maps.ReasonPassedTTL},
		{name: "ipv4 ttl 0", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.TTL = 0 }), vrf: 1,
			reason: maps.ReasonPassedTTL},
		{name: "ipv6 hop limit 1", pkt: with(ip6(route6, protoTCP), func(p *packet) { p.TTL = 1 }), vrf: 1,
			reason: maps.ReasonPassedTTL},
		{name: "ipv4 options", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.Options = []byte{1, 1, 1, 0} }),
			vrf: 1, reason: maps.ReasonPassedOptions},
		{name: "ipv4 first fragment", pkt: with(ip4(addrRoute, protoUDP), func(p *packet) { p.FragField = 0x2000 }),
			vrf: 1, reason: maps.ReasonPassedFragment},
		{name: "ipv4 later fragment", pkt: with(ip4(addrRoute, protoUDP), func(p *packet) { p.FragField = 0x00b9 }),
			vrf: 1, reason: maps.ReasonPassedFragment},
		{name: "ipv4 last fragment with DF", pkt: with(ip4(addrRoute, protoUDP), func(p *packet) { p.FragField = 0x4001 }),
			vrf: 1, reason: maps.ReasonPassedFragment},
		{name: "ipv6 fragment header", pkt: with(ip6(route6, protoUDP), func(p *packet) { p.ExtHdrs = []uint8{protoFrag6} }),
			vrf: 1, reason: maps.ReasonPassedFragment},
		{name: "ipv6 hop-by-hop", pkt: with(ip6(route6, protoUDP), func(p *packet) { p.ExtHdrs = []uint8{protoHopOpt} }),
			vrf: 1, reason: maps.ReasonPassedExtHeader},
		{name: "ipv6 routing header", pkt: with(ip6(route6, protoTCP), func(p *packet) { p.ExtHdrs = []uint8{43} }),
			vrf: 1, reason: maps.ReasonPassedExtHeader},
		{name: "arp request", pkt: with(arp, func(p *packet) { p.DstMAC = macBcast }), vrf: 1,
			reason: maps.ReasonPassedNotUnicast},
		{name: "arp reply", pkt: arp, vrf: 1, reason: maps.ReasonPassedNotIP},
		{name: "unknown ethertype", pkt: with(arp, func(p *packet) { p.EtherType = 0x88b5 }), vrf: 1,
			reason: maps.ReasonPassedNotIP},
		{name: "stacked vlan tags", pkt: tagged(with(arp, func(p *packet) { p.EtherType = etherTypeVLAN }), vlanRoute),
			vrf: 1, reason: maps.ReasonPassedNotIP},
		{name: "nd neighbour solicitation", pkt: with(ip6(route6, protoICMPv6), func(p *packet) { p.ICMPType = 135; p.TTL = 255 }),
			vrf: 1, reason: maps.ReasonPassedND},
		{name: "nd redirect", pkt: with(ip6(route6, protoICMPv6), func(p *packet) { p.ICMPType = 137 }),
			vrf: 1, reason: maps.ReasonPassedND},
		{name: "nd router solicitation link-local", pkt: with(ip6(netip.MustParseAddr("ff02::2"), protoICMPv6), func(p *packet) {
			p.ICMPType = 133
			p.Src = netip.MustParseAddr("fe80::1")
			p.DstMAC = [6]byte{0x33, 0x33, 0, 0, 0, 2}
		}), vrf: 1, reason: maps.ReasonPassedNotUnicast},
		{name: "broadcast mac", pkt: with(ip4(addrRoute, protoUDP), func(p *packet) { p.DstMAC = macBcast }), vrf: 1,
			reason: maps.ReasonPassedNotUnicast},
		{name: "multicast mac", pkt: with(ip4(netip.MustParseAddr("224.0.0.5"), protoUDP), func(p *packet) { p.DstMAC = macMcast4 }),
			vrf: 1, reason: maps.ReasonPassedNotUnicast},
		{name: "ipv4 multicast to unicast mac", pkt: ip4(netip.MustParseAddr("239.1.1.1"), protoUDP), vrf: 1,
			reason: maps.ReasonPassedNotUnicast},
		{name: "ipv4 limited broadcast", pkt: ip4(netip.MustParseAddr("255.255.255.255"), protoUDP), vrf: 1,
			reason: maps.ReasonPassedNotUnicast},
		{name: "ipv6 multicast to unicast mac", pkt: ip6(netip.MustParseAddr("ff0e::1"), protoUDP), vrf: 1,
			reason: maps.ReasonPassedNotUnicast},
		{name: "ipv6 link-local destination", pkt: ip6(netip.MustParseAddr("fe80::2"), protoTCP), vrf: 1,
			reason: maps.ReasonPassedLinkLocal},
		{name: "ipv6 link-local source", pkt: with(ip6(route6, protoTCP), func(p *packet) { p.Src = netip.MustParseAddr("fe80::9") }),
			vrf: 1, reason: maps.ReasonPassedLinkLocal},
		{name: "ipv4 loopback destination", pkt: ip4(netip.MustParseAddr("127.0.0.1"), protoTCP), vrf: 1,
			reason: maps.ReasonPassedMartian},
		{name: "ipv4 zero source", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.Src = netip.MustParseAddr("0.0.0.0") }),
			vrf: 1, reason: maps.ReasonPassedMartian},
		{name: "ipv6 loopback destination", pkt: ip6(netip.MustParseAddr("::1"), protoTCP), vrf: 1,
			reason: maps.ReasonPassedMartian},

		// Malformed.
		{name: "ipv4 bad checksum", pkt: ip4(addrRoute, protoTCP), raw: func(b []byte) []byte { b[24] ^= 0xff; return b },
			vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "strict ipv4 bad checksum", pkt: tagged(ip4(addrRoute, protoTCP), vlanStrict),
			raw: func(b []byte) []byte { b[28] ^= 0xff; return b }, vrf: 1, reason: maps.ReasonDroppedMalformed},
		{name: "ipv4 version 5", pkt: ip4(addrRoute, protoTCP), raw: func(b []byte) []byte { b[14] = 0x55; return b },
			vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "ipv4 ihl 4", pkt: ip4(addrRoute, protoTCP), raw: func(b []byte) []byte { b[14] = 0x44; return b },
			vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "ipv4 total length beyond frame", pkt: ip4(addrRoute, protoTCP),
			raw: func(b []byte) []byte { return b[:len(b)-1] }, vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "ipv4 total length below header", pkt: ip4(addrRoute, protoTCP), raw: func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[16:], 19)
			fixIPv4Checksum(b[14:34])
			return b
		}, vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "ipv4 trailing padding is fine", pkt: ip4(addrRoute, protoTCP),
			raw: func(b []byte) []byte { return append(b, 0, 0, 0, 0) }, vrf: 1, reason: maps.ReasonForwardedFib, out: routed},
		{name: "ipv6 version 4", pkt: ip6(route6, protoTCP), raw: func(b []byte) []byte { b[14] = 0x40; return b },
			vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "ipv6 payload length beyond frame", pkt: ip6(route6, protoTCP),
			raw: func(b []byte) []byte { return b[:len(b)-1] }, vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "icmpv6 header cut", pkt: with(ip6(route6, protoICMPv6), func(p *packet) { p.ICMPType = 135 }),
			raw: func(b []byte) []byte {
				b = b[:14+40+2]
				binary.BigEndian.PutUint16(b[18:], 2)
				return b
			}, vrf: 1, reason: maps.ReasonPassedMalformed},
		{name: "short vlan tag", pkt: tagged(ip4(addrRoute, protoTCP), vlanStrict),
			raw: func(b []byte) []byte { return b[:16] }, vrf: 1, reason: maps.ReasonPassedMalformed},

		// Source-based routing: on an interface of the VRF routing by main (4), traffic from VRF 1's sbr
		// prefixes is looked up in VRF 1's table (100) and counted under VRF 1, as the kernel's
		// "from <prefix> lookup 100" rule would; other sources stay in main, which has no route there.
		{name: "sbr ipv4 source in main vrf", pkt: tagged(from(ip4(addrRoute, protoTCP), addrSBR), vlanMain), vrf: 1,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "sbr ipv6 source in main vrf", pkt: tagged(from(ip6(route6, protoUDP), sbr6), vlanMain), vrf: 1,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "sbr ipv4 no neighbour", pkt: tagged(from(ip4(addrNoNbr, protoUDP), addrSBR), vlanMain), vrf: 1,
			reason: maps.ReasonForwardedNeigh, out: neighRouted, xdp: r(maps.ReasonPassedNoNeigh)},
		{name: "sbr source to a local address of table 100", pkt: tagged(from(ip4(addrLocal, protoTCP), addrSBR), vlanMain),
			vrf: 1, reason: maps.ReasonPassedNotFwded},
		{name: "other ipv4 source in main vrf", pkt: tagged(ip4(addrRoute, protoTCP), vlanMain), vrf: 4,
			reason: maps.ReasonPassedNotFwded},
		{name: "other ipv6 source in main vrf", pkt: tagged(ip6(route6, protoTCP), vlanMain), vrf: 4,
			reason: maps.ReasonPassedNotFwded},
		// The VRF routing by main looks up as the kernel routes, through its rules: the local table first, so the
		// node's own addresses go up the stack (main alone routes fd00:1::1 out of rout, its /64's device).
		{name: "main vrf: local ipv4 address", pkt: tagged(ip4(addrLocal, protoUDP), vlanMain), vrf: 4,
			reason: maps.ReasonPassedNotFwded},
		{name: "main vrf: local ipv6 address", pkt: tagged(ip6(local6, protoUDP), vlanMain), vrf: 4,
			reason: maps.ReasonPassedNotFwded},
		{name: "main vrf routes by main", pkt: tagged(ip4(addrMain, protoTCP), vlanMain), vrf: 4,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "main vrf routes by main ipv6", pkt: tagged(ip6(main6, protoUDP), vlanMain), vrf: 4,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "sbr source next to the prefix", pkt: tagged(from(ip4(addrRoute, protoTCP), netip.MustParseAddr("10.0.6.1")), vlanMain),
			vrf: 4, reason: maps.ReasonPassedNotFwded},
		{name: "sbr source ttl 1 stays in the interface vrf", pkt: tagged(from(with(ip4(addrRoute, protoTCP), func(p *packet) { p.TTL = 1 }), addrSBR), vlanMain),
			vrf: 4, reason: maps.ReasonPassedTTL},
		// The interfaces of other VRFs route by their own table whatever the source (the kernel's l3mdev and
		// interface rules come first).
		{name: "sbr source in its own vrf", pkt: tagged(from(ip4(addrRoute, protoTCP), addrSBR), vlanRoute), vrf: 1,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "sbr source in a vrf with its own table", pkt: tagged(from(ip4(addrRoute, protoTCP), addrSBR), vlanNoTable), vrf: 3,
			reason: maps.ReasonPassedNotFwded},

		// Mode fib: the table of the interface's own VRF device; rin has none, so main. No vrf_table entry,
		// no source-based routing, counted under VRF 0.
		{name: "fib ipv4 by main", pkt: tagged(ip4(addrMain, protoTCP), vlanFIB), vrf: 0, reason: maps.ReasonForwardedFib, out: routed},
		{name: "fib ipv6 by main", pkt: tagged(ip6(main6, protoUDP), vlanFIB), vrf: 0, reason: maps.ReasonForwardedFib, out: routed},
		{name: "fib: a route of the vrf table only", pkt: tagged(ip4(addrRoute, protoTCP), vlanFIB), vrf: 0, reason: maps.ReasonPassedNotFwded},
		{name: "fib: sbr prefixes do not apply", pkt: tagged(from(ip4(addrMain, protoTCP), addrSBR), vlanFIB), vrf: 0,
			reason: maps.ReasonForwardedFib, out: routed},
		{name: "fib ttl 1", pkt: tagged(with(ip4(addrMain, protoTCP), func(p *packet) { p.TTL = 1 }), vlanFIB), vrf: 0, reason: maps.ReasonPassedTTL},

		// Redirect mode.
		{name: "redirect ipv4", ingress: "rred", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.DstMAC = macRed }),
			vrf: 1, reason: maps.ReasonRedirected, out: rewritten},
		{name: "redirect ipv6", ingress: "rred", pkt: with(ip6(route6, protoUDP), func(p *packet) { p.DstMAC = macRed }),
			vrf: 1, reason: maps.ReasonRedirected, out: rewritten},
		{name: "redirect ignores ttl", ingress: "rred", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.DstMAC = macRed; p.TTL = 1 }),
			vrf: 1, reason: maps.ReasonRedirected, out: rewritten},
		{name: "redirect passes arp", ingress: "rred", pkt: with(arp, func(p *packet) { p.DstMAC = macRed }),
			vrf: 1, reason: maps.ReasonPassedNotIP},
		{name: "redirect peer", ingress: "rpeer", pkt: with(ip4(addrRoute, protoTCP), func(p *packet) { p.DstMAC = macPeer }),
			vrf: 1, reason: maps.ReasonRedirectedPeer, out: untagged, xdp: r(maps.ReasonRedirected)},
		{name: "redirect vlan tagged", ingress: "rred", pkt: tagged(with(ip4(addrRoute, protoUDP), func(p *packet) { p.DstMAC = macRed }), vlanRoute),
			vrf: 1, reason: maps.ReasonRedirected, out: rewritten},
		{name: "redirect peer vlan tagged", ingress: "rpeer", pkt: tagged(with(ip6(route6, protoUDP), func(p *packet) { p.DstMAC = macPeer }), vlanRoute),
			vrf: 1, reason: maps.ReasonRedirectedPeer, out: untagged, xdp: r(maps.ReasonRedirected)},
		{name: "redirect unknown vlan", ingress: "rred", pkt: tagged(with(ip4(addrRoute, protoUDP), func(p *packet) { p.DstMAC = macRed }), vlanStrict),
			vrf: 0, reason: maps.ReasonPassedNoIface},
		{name: "redirect without entry", ingress: "rnof", pkt: tagged(with(ip4(addrRoute, protoUDP), func(p *packet) { p.DstMAC = macOther }), vlanRoute),
			vrf: 1, reason: maps.ReasonPassedNoRedirect},
		{name: "strict redirect without entry", ingress: "rnof", pkt: tagged(with(ip6(route6, protoUDP), func(p *packet) { p.DstMAC = macOther }), vlanStrict),
			vrf: 1, reason: maps.ReasonDroppedNoRedirect},
		{name: "redirect peer ipv6", ingress: "rpeer", pkt: with(ip6(route6, protoTCP), func(p *packet) { p.DstMAC = macPeer }),
			vrf: 1, reason: maps.ReasonRedirectedPeer, out: untagged, xdp: r(maps.ReasonRedirected)},
	}
}

func fixIPv4Checksum(h []byte) {
	h[10], h[11] = 0, 0
	binary.BigEndian.PutUint16(h[10:], ^onesSum(h))
}

func (l *lab) ifindex(name string) int {
	switch name {
	case "", "rin":
		return l.in
	case "rred":
		return l.red
	case "rpeer":
		return l.peer
	case "rnof":
		return l.nof
	}
	panic("unknown ingress " + name)
}

func TestRouter(t *testing.T) { runRouterCases(t, newLab(t)) }

// TestRouterHashPath runs every case with iface_cache emptied: the program then finds every interface in
// iface_table and its VRF in vrf_table, and must decide exactly as with the cache.
func TestRouterHashPath(t *testing.T) {
	l := newLab(t)
	for i := range uint32(limits.IfaceCacheSize) {
		if err := l.objs.IfaceCache.Put(i, maps.IfaceCacheValue{}); err != nil {
			t.Fatal(err)
		}
	}
	runRouterCases(t, l)
}

// TestRouterIfaceCache shows which iface_cache entries the program trusts: one for the live tables (its stamp)
// and the packet's {ifindex, vlan}. The entries written here say something else than the tables (pass, another
// VRF): a packet counted as they say took the entry, one forwarded in VRF 1 ignored it. Untagged unicast packets
// take fast_path(), so the route entries show that it applies strict mode and source-based routing as decide().
func TestRouterIfaceCache(t *testing.T) {
	l := newLab(t)
	v, err := l.set.Version()
	if err != nil {
		t.Fatal(err)
	}
	stamp := binary.NativeEndian.Uint64(v.TablesHash[:8])
	in := uint32(l.in)
	route := bpf.RouterIfaceModeIFACE_MODE_ROUTE
	fromSBR := from(ip4(addrRoute, protoUDP), addrSBR)
	tests := []struct {
		name  string
		entry maps.IfaceCacheValue
		pkt   packet
		vrf   uint32
		want  maps.Reason
	}{
		{"live entry", maps.IfaceCacheValue{Stamp: stamp, Ifindex: in, VrfId: 1}, ip4(addrRoute, protoUDP), 1,
			maps.ReasonPassedMode},
		{"live entry ipv6", maps.IfaceCacheValue{Stamp: stamp, Ifindex: in, VrfId: 1}, ip6(route6, protoUDP), 1,
			maps.ReasonPassedMode},
		{"live route entry, strict, forwarding off", maps.IfaceCacheValue{Stamp: stamp, Ifindex: in, Mode: route,
			Flags: bpf.RouterIfaceFlagsIFACE_F_STRICT, VrfId: 2, TableId: tableID, LookupIfindex: uint32(l.nof)},
			ip4(addrRoute, protoUDP), 2, maps.ReasonDroppedFwdDisabled},
		{"live route entry, source-based routing", maps.IfaceCacheValue{Stamp: stamp, Ifindex: in, Mode: route, VrfId: 4,
			TableId: limits.MainTableID, VrfFlags: bpf.RouterVrfFlagsVRF_F_SBR}, fromSBR, 1, maps.ReasonForwardedFib},
		{"live route entry, main table", maps.IfaceCacheValue{Stamp: stamp, Ifindex: in, Mode: route, VrfId: 4,
			TableId: limits.MainTableID}, fromSBR, 4, maps.ReasonPassedNotFwded},
		{"other tables' stamp", maps.IfaceCacheValue{Stamp: stamp + 1, Ifindex: in, VrfId: 1}, ip4(addrRoute, protoUDP), 1,
			maps.ReasonForwardedFib},
		{"other vlan", maps.IfaceCacheValue{Stamp: stamp, Ifindex: in, Vlan: vlanRoute, VrfId: 1}, ip4(addrRoute, protoUDP), 1,
			maps.ReasonForwardedFib},
		{"other ifindex", maps.IfaceCacheValue{Stamp: stamp, Ifindex: in + limits.IfaceCacheBuckets, VrfId: 1},
			ip4(addrRoute, protoUDP), 1, maps.ReasonForwardedFib},
	}
	// The bucket of {rin, untagged} in the live slot, as iface_cache_bucket() computes it.
	bucket := v.Slot*limits.IfaceCacheBuckets + in&(limits.IfaceCacheBuckets-1)
	var live maps.IfaceCacheValue
	if err := l.objs.IfaceCache.Lookup(bucket, &live); err != nil {
		t.Fatal(err)
	}
	if live.Ifindex != in || live.Vlan != 0 || live.Stamp != stamp || live.TableId != tableID {
		t.Fatalf("bucket %d holds %+v, want rin's untagged route entry for table %d", bucket, live, tableID)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := l.objs.IfaceCache.Put(bucket, tt.entry); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := l.objs.IfaceCache.Put(bucket, live); err != nil {
					t.Error(err)
				}
			})
			frame := tt.pkt.bytes()
			for _, h := range []hook{hookTC, hookXDP} {
				l.inNS(t, func() error {
					vrf, reason, _, err := l.delta(func() error {
						_, _, err := l.run(h, l.in, frame)
						return err
					})
					if err != nil {
						return err
					}
					if vrf != tt.vrf || reason != tt.want {
						return fmt.Errorf("%s: counted vrf %d %s, want vrf %d %s", h, vrf, reason, tt.vrf, tt.want)
					}
					return nil
				})
			}
		})
	}
}

// TestRouterFibPeer: with rout (the fib's egress) marked Peer, the tc router hands every packet it routes by a
// VRF's table out of rout to rout's peer (forwarded-peer, the frame as forwarded-fib leaves it); XDP ignores the
// flag, and so does mode fib (its interfaces have no VRF entry). The hash path (iface_cache emptied) decides the
// same.
func TestRouterFibPeer(t *testing.T) {
	peer := func(l *lab) func(h hook, tc routerCase, reason maps.Reason) maps.Reason {
		return func(h hook, tc routerCase, reason maps.Reason) maps.Reason {
			in, _ := l.lookupIface(uint32(l.ifindex(tc.ingress)), vlanOf(tc.pkt.bytes()))
			if h == hookTC && reason == maps.ReasonForwardedFib && in.mode == maps.ModeRoute {
				return maps.ReasonForwardedPeer
			}
			return reason
		}
	}
	t.Run("cache", func(t *testing.T) {
		l := newLabWith(t, true)
		runRouterCasesAs(t, l, peer(l))
	})
	t.Run("hash", func(t *testing.T) {
		l := newLabWith(t, true)
		for i := range uint32(limits.IfaceCacheSize) {
			if err := l.objs.IfaceCache.Put(i, maps.IfaceCacheValue{}); err != nil {
				t.Fatal(err)
			}
		}
		runRouterCasesAs(t, l, peer(l))
	})
}

func runRouterCases(t *testing.T, l *lab) {
	runRouterCasesAs(t, l, func(_ hook, _ routerCase, r maps.Reason) maps.Reason { return r })
}

// runRouterCasesAs runs routerCases with each case's expected reason (after its XDP override) passed through as.
func runRouterCasesAs(t *testing.T, l *lab, as func(h hook, tc routerCase, reason maps.Reason) maps.Reason) {
	for _, h := range []hook{hookTC, hookXDP} {
		for _, tc := range routerCases() {
			t.Run(h.String()+"/"+tc.name, func(t *testing.T) {
				frame := tc.pkt.bytes()
				if tc.raw != nil {
					frame = tc.raw(frame)
				}
				reason, out := tc.reason, tc.out
				if h == hookXDP && tc.xdp != nil {
					reason = *tc.xdp
				}
				reason = as(h, tc, reason)
				if h == hookXDP && tc.xdpOut != nil {
					out = *tc.xdpOut
				}
				if reason.Action() != maps.ActionForwarded {
					out = unchanged
				}
				want := out.frame(tc.pkt)
				if tc.raw != nil {
					if out == unchanged {
						want = frame
					} else {
						want = tc.raw(want)
					}
				}
				l.checkRun(t, h, l.ifindex(tc.ingress), frame, tc.vrf, reason, want)
			})
		}
	}
}

// checkRun runs one frame and asserts verdict, counter and output bytes, and
// that the Go model agrees with the expectation.
func (l *lab) checkRun(t *testing.T, h hook, ifindex int, frame []byte, vrf uint32, reason maps.Reason, want []byte) {
	t.Helper()
	in := slices.Clone(frame)
	var (
		ret uint32
		out []byte
	)
	l.inNS(t, func() error {
		gotVRF, gotReason, nbytes, err := l.delta(func() error {
			var err error
			ret, out, err = l.run(h, ifindex, frame)
			return err
		})
		if err != nil {
			return err
		}
		if gotVRF != vrf || gotReason != reason {
			return fmt.Errorf("counted vrf %d %s, want vrf %d %s", gotVRF, gotReason, vrf, reason)
		}
		if nbytes != uint64(len(frame)) {
			return fmt.Errorf("counted %d bytes, want %d", nbytes, len(frame))
		}
		return nil
	})
	if w := verdict(h, reason); ret != w {
		t.Errorf("verdict %d, want %d (%s)", int32(ret), int32(w), reason)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("output frame\n got %x\nwant %x", out, want)
	}
	if reason.Action() == maps.ActionForwarded && len(out) >= 34 && binary.BigEndian.Uint16(out[12:]) == etherTypeIPv4 {
		if s := onesSum(out[14:34]); s != 0xffff {
			t.Errorf("IPv4 header checksum does not verify: sum %#x", s)
		}
	}
	if !bytes.Equal(frame, in) {
		t.Error("input buffer modified")
	}

	mvrf, mreason, final := l.model(h, ifindex, in)
	if final && (mvrf != vrf || mreason != reason) {
		t.Errorf("model says vrf %d %s", mvrf, mreason)
	}
	if !final {
		iface, _ := l.lookupIface(uint32(ifindex), vlanOf(in))
		if mvrf != vrf || !slices.Contains(lookupReasons[iface.mode], reason) {
			t.Errorf("model says vrf %d lookup (%v), got %s", mvrf, lookupReasons[iface.mode], reason)
		}
	}
}

func vlanOf(frame []byte) uint16 {
	if len(frame) >= 18 && binary.BigEndian.Uint16(frame[12:]) == etherTypeVLAN {
		return binary.BigEndian.Uint16(frame[14:]) & 0x0fff
	}
	return 0
}

// Every frame cut short at any byte is malformed: counted as such, never
// forwarded, left unchanged. On a strict interface it is dropped once the
// VLAN tag that selects the interface is complete.
func TestRouterTruncated(t *testing.T) {
	l := newLab(t)
	bases := []struct {
		name   string
		pkt    packet
		strict bool
	}{
		{"ipv4 tcp", ip4(addrRoute, protoTCP), false},
		{"ipv4 udp", ip4(addrRoute, protoUDP), false},
		{"ipv4 icmp", ip4(addrRoute, protoICMP), false},
		{"ipv6 tcp", ip6(route6, protoTCP), false},
		{"ipv6 icmp", ip6(route6, protoICMPv6), false},
		{"ipv6 udp strict", tagged(ip6(route6, protoUDP), vlanStrict), true},
		{"ipv4 tcp strict", tagged(ip4(addrRoute, protoTCP), vlanStrict), true},
	}
	for _, h := range []hook{hookTC, hookXDP} {
		for _, b := range bases {
			t.Run(h.String()+"/"+b.name, func(t *testing.T) {
				full := b.pkt.bytes()
				// BPF_PROG_TEST_RUN needs at least an Ethernet header.
				skipped := 0
				for n := 14; n < len(full); n++ {
					frame := full[:n]
					if kernelRejects(h, frame) {
						skipped++
						continue
					}
					reason := maps.ReasonPassedMalformed
					if b.strict && n >= 18 {
						reason = maps.ReasonDroppedMalformed
					}
					l.checkRun(t, h, l.in, frame, 1, reason, frame)
					if t.Failed() {
						t.Fatalf("at length %d of %d", n, len(full))
					}
				}
				if skipped > 0 {
					t.Logf("%d lengths not run: BPF_PROG_TEST_RUN for tc refuses IP frames shorter than the IP header (XDP covers them)", skipped)
				}
			})
		}
	}
}
