package perpacket

import (
	"net"
	"net/netip"
	"testing"
)

func TestUDPFrame(t *testing.T) {
	dmac, _ := net.ParseMAC("02:00:00:00:00:01")
	smac, _ := net.ParseMAC("02:00:00:00:00:02")
	tests := []struct {
		name     string
		src, dst netip.Addr
		wantLen  int
		ethType  [2]byte
	}{
		{"ipv4", netip.MustParseAddr("10.0.1.2"), netip.MustParseAddr("10.0.2.2"), 14 + 20 + 8 + 18, [2]byte{0x08, 0x00}},
		{"ipv6", netip.MustParseAddr("fd00:1::2"), netip.MustParseAddr("fd00:2::2"), 14 + 40 + 8 + 18, [2]byte{0x86, 0xdd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := udpFrame(dmac, smac, tt.src, tt.dst, 18)
			if len(f) != tt.wantLen {
				t.Fatalf("len %d, want %d", len(f), tt.wantLen)
			}
			if string(f[0:6]) != string(dmac) || string(f[6:12]) != string(smac) || [2]byte(f[12:14]) != tt.ethType {
				t.Fatalf("ethernet header % x", f[:14])
			}
			if tt.src.Is4() {
				if f[14+8] != 255 {
					t.Errorf("TTL %d, want 255", f[14+8])
				}
				// A valid header sums to 0xffff; the complement of the sum including the checksum is 0.
				if c := ipv4Checksum(f[14:34]); c != 0 {
					t.Errorf("header checksum does not verify: %#x", c)
				}
				if got := netip.AddrFrom4([4]byte(f[30:34])); got != tt.dst {
					t.Errorf("dst %v", got)
				}
			} else if f[14+7] != 255 {
				t.Errorf("hop limit %d, want 255", f[14+7])
			}
		})
	}
}
