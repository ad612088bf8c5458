package bpf_test

import (
	"encoding/binary"
	"net/netip"
)

// A tiny packet builder: enough Ethernet/802.1Q/IPv4/IPv6/L4 to exercise the
// router. Checksums of the IPv4 header are correct; L4 checksums are zero (the
// router does not look at them).

const (
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86dd
	etherTypeARP  = 0x0806
	etherTypeVLAN = 0x8100

	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
	protoHopOpt = 0
	protoFrag6  = 44
)

type packet struct {
	DstMAC, SrcMAC [6]byte
	Tagged         bool
	TPID           uint16 // tag protocol, 0 = 802.1Q
	VLAN           uint16
	EtherType      uint16 // for non-IP frames; derived from Src otherwise

	Src, Dst  netip.Addr // IPv4 or IPv6; invalid = no IP header
	TTL       uint8      // TTL / hop limit
	TOS       uint8
	Proto     uint8  // L4 protocol (after extension headers)
	Options   []byte // IPv4 options, multiple of 4 bytes
	FragField uint16 // IPv4 flags + fragment offset, host order
	ExtHdrs   []uint8
	// ICMPType is the first byte of ICMP/ICMPv6 headers.
	ICMPType uint8
	SrcPort  uint16
	DstPort  uint16
	Payload  []byte
}

func (p packet) l4() []byte {
	var h []byte
	switch p.Proto {
	case protoTCP:
		h = make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], p.SrcPort)
		binary.BigEndian.PutUint16(h[2:], p.DstPort)
		h[12] = 5 << 4
		h[13] = 0x10 // ACK
		binary.BigEndian.PutUint16(h[14:], 65535)
	case protoUDP:
		h = make([]byte, 8)
		binary.BigEndian.PutUint16(h[0:], p.SrcPort)
		binary.BigEndian.PutUint16(h[2:], p.DstPort)
		binary.BigEndian.PutUint16(h[4:], uint16(8+len(p.Payload)))
	case protoICMP, protoICMPv6:
		h = make([]byte, 8)
		h[0] = p.ICMPType
	}
	return append(h, p.Payload...)
}

func (p packet) bytes() []byte {
	b := append([]byte{}, p.DstMAC[:]...)
	b = append(b, p.SrcMAC[:]...)
	if p.Tagged {
		tpid := p.TPID
		if tpid == 0 {
			tpid = etherTypeVLAN
		}
		b = binary.BigEndian.AppendUint16(b, tpid)
		b = binary.BigEndian.AppendUint16(b, p.VLAN)
	}
	switch {
	case !p.Src.IsValid():
		b = binary.BigEndian.AppendUint16(b, p.EtherType)
		return append(b, p.Payload...)
	case p.Src.Is4():
		b = binary.BigEndian.AppendUint16(b, etherTypeIPv4)
		return append(b, p.ipv4()...)
	default:
		b = binary.BigEndian.AppendUint16(b, etherTypeIPv6)
		return append(b, p.ipv6()...)
	}
}

func (p packet) ipv4() []byte {
	l4 := p.l4()
	hl := 20 + len(p.Options)
	h := make([]byte, hl, hl+len(l4))
	h[0] = 4<<4 | byte(hl/4)
	h[1] = p.TOS
	binary.BigEndian.PutUint16(h[2:], uint16(hl+len(l4)))
	binary.BigEndian.PutUint16(h[4:], 0x1234)
	binary.BigEndian.PutUint16(h[6:], p.FragField)
	h[8] = p.TTL
	h[9] = p.Proto
	s, d := p.Src.As4(), p.Dst.As4()
	copy(h[12:], s[:])
	copy(h[16:], d[:])
	copy(h[20:], p.Options)
	binary.BigEndian.PutUint16(h[10:], ^onesSum(h))
	return append(h, l4...)
}

func (p packet) ipv6() []byte {
	next := p.Proto
	var ext []byte
	// Extension headers, innermost last: each 8 bytes, next header first.
	for i := len(p.ExtHdrs) - 1; i >= 0; i-- {
		e := make([]byte, 8)
		e[0] = next
		next = p.ExtHdrs[i]
		ext = append(e, ext...)
	}
	payload := append(ext, p.l4()...)
	h := make([]byte, 40, 40+len(payload))
	binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(p.TOS)<<20|0x12345)
	binary.BigEndian.PutUint16(h[4:], uint16(len(payload)))
	h[6] = next
	h[7] = p.TTL
	s, d := p.Src.As16(), p.Dst.As16()
	copy(h[8:], s[:])
	copy(h[24:], d[:])
	return append(h, payload...)
}

// onesSum is the folded one's complement sum of b (RFC 1071).
func onesSum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
