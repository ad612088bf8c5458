package perpacket

import (
	"encoding/binary"
	"net"
	"net/netip"
)

// udpFrame builds an Ethernet frame with a UDP datagram of payload bytes from src to dst, hop limit / TTL 255 so
// that a router decrementing it forwards the same buffer for ~250 BPF_PROG_TEST_RUN repeats.
func udpFrame(dstMAC, srcMAC net.HardwareAddr, src, dst netip.Addr, payload int) []byte {
	var l3 []byte
	udp := make([]byte, 8+payload)
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 5201)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	// UDP checksum 0: allowed for IPv4; the router never checks it, and for IPv6 nothing on the test path does.
	var ethType uint16
	if src.Is4() {
		ethType = 0x0800
		ip := make([]byte, 20)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(udp)))
		ip[6] = 0x40 // DF
		ip[8] = 255  // TTL
		ip[9] = 17   // UDP
		s, d := src.As4(), dst.As4()
		copy(ip[12:], s[:])
		copy(ip[16:], d[:])
		binary.BigEndian.PutUint16(ip[10:], ipv4Checksum(ip))
		l3 = append(ip, udp...)
	} else {
		ethType = 0x86dd
		ip := make([]byte, 40)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)))
		ip[6] = 17  // next header UDP
		ip[7] = 255 // hop limit
		s, d := src.As16(), dst.As16()
		copy(ip[8:], s[:])
		copy(ip[24:], d[:])
		l3 = append(ip, udp...)
	}
	frame := make([]byte, 14, 14+len(l3))
	copy(frame[0:], dstMAC)
	copy(frame[6:], srcMAC)
	binary.BigEndian.PutUint16(frame[12:], ethType)
	return append(frame, l3...)
}

func ipv4Checksum(h []byte) uint16 {
	var s uint32
	for i := 0; i < len(h); i += 2 {
		s += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
