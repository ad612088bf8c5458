package bpf_test

import (
	"encoding/binary"
	"net/netip"

	"github.com/network-operator/network-operator/bpf/limits"

	"github.com/network-operator/network-operator/pkg/maps"
)

// model is the router's classification written again in Go, from the rules in
// router.c: everything up to the table lookups. It says how the program must
// count a frame; final is false when the outcome depends on the fib or the
// redirect table (then lookupReasons holds the possible reasons).
//
// "Malformed" is defined here precisely: a frame is malformed when, for the
// interface it arrives on, the Ethernet header (14 bytes) or its 802.1Q tag
// (4 more) is cut short, or for IPv4: fewer than 20 header bytes, version != 4,
// ihl < 5, total length < ihl*4 or beyond the frame, or (ihl == 5) a wrong
// header checksum; for IPv6: fewer than 40 header bytes, version != 6, payload
// length beyond the frame, or an ICMPv6 header shorter than 4 bytes.
func (l *lab) model(h hook, ifindex int, frame []byte) (vrf uint32, reason maps.Reason, final bool) {
	var (
		vlan  uint16
		proto uint16
		l3off = 14
		l2ok  = len(frame) >= 14
	)
	if l2ok {
		proto = binary.BigEndian.Uint16(frame[12:])
		if proto == etherTypeVLAN {
			if len(frame) < 18 {
				l2ok = false
			} else {
				vlan = binary.BigEndian.Uint16(frame[14:]) & 0x0fff
				proto = binary.BigEndian.Uint16(frame[16:])
				l3off = 18
			}
		}
	}
	in, ok := l.lookupIface(uint32(ifindex), vlan)
	if !ok {
		return 0, maps.ReasonPassedNoIface, true
	}
	vrf = in.vrf
	route := in.mode == maps.ModeRoute || in.mode == maps.ModeFIB
	if !route && in.mode != maps.ModeRedirect {
		return vrf, maps.ReasonPassedMode, true
	}
	malformed := maps.ReasonPassedMalformed
	if in.strict {
		malformed = maps.ReasonDroppedMalformed
	}
	if !l2ok {
		return vrf, malformed, true
	}
	if frame[0]&1 != 0 {
		return vrf, maps.ReasonPassedNotUnicast, true
	}
	if h == hookTC && [6]byte(frame[:6]) != l.devMAC(ifindex) {
		return vrf, maps.ReasonPassedNotUnicast, true // PACKET_OTHERHOST
	}
	l3 := frame[l3off:]
	switch proto {
	case etherTypeIPv4:
		reason, final = modelIPv4(l3, route, malformed)
	case etherTypeIPv6:
		reason, final = modelIPv6(l3, route, malformed)
	default:
		return vrf, maps.ReasonPassedNotIP, true
	}
	if !final && route {
		vrf = l.sbrVRF(vrf, proto, l3)
	}
	return vrf, reason, final
}

// sbrVRF is the VRF a routed packet is counted under: the VRF of the source-based routing prefix that holds its
// source (longest match) when the interface's VRF routes by the main table, else the interface's.
func (l *lab) sbrVRF(vrf uint32, proto uint16, l3 []byte) uint32 {
	main := false
	for _, v := range l.tables.VRFs {
		main = main || (v.ID == vrf && v.TableID == limits.MainTableID)
	}
	if !main {
		return vrf
	}
	var src netip.Addr
	if proto == etherTypeIPv4 {
		src = netip.AddrFrom4([4]byte(l3[12:16]))
	} else {
		src = netip.AddrFrom16([16]byte(l3[8:24]))
	}
	best := -1
	for _, e := range l.tables.SBR {
		if e.Prefix.Contains(src) && e.Prefix.Bits() > best {
			best, vrf = e.Prefix.Bits(), e.VRF
		}
	}
	return vrf
}

func (l *lab) devMAC(ifindex int) [6]byte {
	switch ifindex {
	case l.in:
		return macIn
	case l.out:
		return macOut
	case l.red:
		return macRed
	case l.peer:
		return macPeer
	default:
		return macOther
	}
}

func modelIPv4(b []byte, route bool, malformed maps.Reason) (maps.Reason, bool) {
	if len(b) < 20 || b[0]>>4 != 4 || b[0]&0x0f < 5 {
		return malformed, true
	}
	ihl := int(b[0] & 0x0f)
	tot := int(binary.BigEndian.Uint16(b[2:]))
	if tot < ihl*4 || tot > len(b) {
		return malformed, true
	}
	if ihl != 5 {
		return maps.ReasonPassedOptions, true
	}
	if onesSum(b[:20]) != 0xffff {
		return malformed, true
	}
	s0, d0 := b[12], b[16]
	if d0 >= 224 {
		return maps.ReasonPassedNotUnicast, true
	}
	if d0 == 0 || d0 == 127 || s0 == 0 || s0 == 127 || s0 >= 224 {
		return maps.ReasonPassedMartian, true
	}
	if binary.BigEndian.Uint16(b[6:])&0x3fff != 0 {
		return maps.ReasonPassedFragment, true
	}
	if route && b[8] <= 1 {
		return maps.ReasonPassedTTL, true
	}
	return 0, false
}

func modelIPv6(b []byte, route bool, malformed maps.Reason) (maps.Reason, bool) {
	if len(b) < 40 || b[0]>>4 != 6 {
		return malformed, true
	}
	plen := int(binary.BigEndian.Uint16(b[4:]))
	if plen+40 > len(b) {
		return malformed, true
	}
	src, dst := [16]byte(b[8:24]), [16]byte(b[24:40])
	loopback := func(a [16]byte) bool { return a == [16]byte{15: 1} }
	linkLocal := func(a [16]byte) bool { return a[0] == 0xfe && a[1]&0xc0 == 0x80 }
	switch {
	case dst[0] == 0xff:
		return maps.ReasonPassedNotUnicast, true
	case loopback(dst) || dst == [16]byte{} || loopback(src) || src[0] == 0xff:
		return maps.ReasonPassedMartian, true
	case linkLocal(dst) || linkLocal(src):
		return maps.ReasonPassedLinkLocal, true
	}
	switch b[6] {
	case 0, 43, 60, 135, 139, 140, 253, 254:
		return maps.ReasonPassedExtHeader, true
	case protoFrag6:
		return maps.ReasonPassedFragment, true
	case protoICMPv6:
		if len(b) < 44 || plen < 4 {
			return malformed, true
		}
		if b[40] >= 133 && b[40] <= 137 {
			return maps.ReasonPassedND, true
		}
	}
	if route && b[7] <= 1 {
		return maps.ReasonPassedTTL, true
	}
	return 0, false
}

// lookupReasons are the reasons a frame that passed classification can end
// with, by interface mode. PassedError is not among them: no helper may fail.
var lookupReasons = map[maps.Mode][]maps.Reason{
	maps.ModeRoute: {maps.ReasonForwardedFib, maps.ReasonForwardedPeer, maps.ReasonForwardedNeigh, maps.ReasonPassedNoVRF,
		maps.ReasonDroppedNoVRF, maps.ReasonPassedNotFwded, maps.ReasonPassedFwdDisabled,
		maps.ReasonDroppedFwdDisabled, maps.ReasonPassedFibOther, maps.ReasonDroppedFib,
		maps.ReasonPassedFragNeeded, maps.ReasonPassedNoNeigh},
	maps.ModeFIB: {maps.ReasonForwardedFib, maps.ReasonForwardedNeigh, maps.ReasonPassedNotFwded,
		maps.ReasonPassedFwdDisabled, maps.ReasonDroppedFwdDisabled, maps.ReasonPassedFibOther, maps.ReasonDroppedFib,
		maps.ReasonPassedFragNeeded, maps.ReasonPassedNoNeigh},
	maps.ModeRedirect: {maps.ReasonRedirected, maps.ReasonRedirectedPeer, maps.ReasonPassedNoRedirect,
		maps.ReasonDroppedNoRedirect},
}

// verdict is the return code the program must give for a reason.
func verdict(h hook, r maps.Reason) uint32 {
	switch r.Action() {
	case maps.ActionForwarded:
		return h.redirectCode()
	case maps.ActionDropped:
		return h.dropCode()
	default:
		return h.passCode()
	}
}
