package bpf_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/network-operator/network-operator/pkg/maps"
)

// FuzzRouterMalformed feeds arbitrary frames to tc_router and xdp_router on
// every lab interface and checks them against the Go model (model_test.go):
//   - a frame the model calls malformed (or passes for any other reason before
//     the lookups) is never redirected, is counted under exactly that reason and
//     VRF, and leaves the program unchanged;
//   - any other frame ends with one of the lookup reasons of its interface mode,
//     with the matching verdict, and is unchanged unless forwarded;
//   - every frame is counted exactly once.
//
// Run: go test -run '^$' -fuzz '^FuzzRouterMalformed$' ./bpf/ (root).
func FuzzRouterMalformed(f *testing.F) {
	l := newLab(f)
	ports := []string{"rin", "rred", "rpeer", "rnof"}

	for _, tc := range routerCases() {
		frame := tc.pkt.bytes()
		if tc.raw != nil {
			frame = tc.raw(frame)
		}
		f.Add(uint8(slices.Index(ports, cmpOr(tc.ingress, "rin"))), frame)
	}
	seeds := [][]byte{
		ip4(addrRoute, protoTCP).bytes()[:20],
		ip6(route6, protoTCP).bytes()[:60],
		tagged(ip4(addrRoute, protoUDP), vlanStrict).bytes()[:17],
		append(macIn[:], bytes.Repeat([]byte{0xff}, 60)...),
		append(macIn[:], bytes.Repeat([]byte{0x00}, 60)...),
	}
	for _, s := range seeds {
		f.Add(uint8(0), s)
	}

	f.Fuzz(func(t *testing.T, port uint8, frame []byte) {
		if len(frame) < 14 || len(frame) > 1514 {
			return // BPF_PROG_TEST_RUN wants an Ethernet header and one page
		}
		ifindex := l.ifindex(ports[int(port)%len(ports)])
		for _, h := range []hook{hookTC, hookXDP} {
			if kernelRejects(h, frame) {
				continue
			}
			if err := l.checkFuzz(h, ifindex, frame); err != nil {
				t.Fatalf("%s on ifindex %d, frame %x: %v", h, ifindex, frame, err)
			}
		}
	})
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (l *lab) checkFuzz(h hook, ifindex int, frame []byte) error {
	in := slices.Clone(frame)
	var (
		ret uint32
		out []byte
	)
	var gotVRF uint32
	var got maps.Reason
	err := runInNS(l.ns, func() error {
		var err error
		gotVRF, got, _, err = l.delta(func() error {
			var err error
			ret, out, err = l.run(h, ifindex, frame)
			return err
		})
		return err
	})
	if err != nil {
		return err
	}

	vrf, want, final := l.model(h, ifindex, in)
	if gotVRF != vrf {
		return fmt.Errorf("counted under vrf %d (%s), model says vrf %d", gotVRF, got, vrf)
	}
	if final && got != want {
		return fmt.Errorf("counted %s, model says %s", got, want)
	}
	if !final {
		iface, _ := l.lookupIface(uint32(ifindex), vlanOf(in))
		if !slices.Contains(lookupReasons[iface.mode], got) {
			return fmt.Errorf("counted %s, model says one of the %s lookup reasons", got, iface.mode)
		}
	}
	if w := verdict(h, got); ret != w {
		return fmt.Errorf("verdict %d for %s, want %d", int32(ret), got, int32(w))
	}
	if (want == maps.ReasonPassedMalformed || want == maps.ReasonDroppedMalformed) && final && ret == h.redirectCode() {
		return fmt.Errorf("malformed frame redirected")
	}
	if got.Action() != maps.ActionForwarded {
		if !bytes.Equal(out, in) {
			return fmt.Errorf("%s frame changed:\n got %x\nwant %x", got, out, in)
		}
		return nil
	}
	if want := forwardedFrame(l, ifindex, got, in); !bytes.Equal(out, want) {
		return fmt.Errorf("%s frame\n got %x\nwant %x", got, out, want)
	}
	return nil
}

// forwardedFrame is what a forwarded frame must look like: untagged, MACs as
// the reason implies, L3 unchanged except TTL / hop limit - 1 and the IPv4
// checksum (recomputed from scratch) after a fib decision.
func forwardedFrame(l *lab, ifindex int, r maps.Reason, in []byte) []byte {
	l3off := 14
	if binary.BigEndian.Uint16(in[12:]) == etherTypeVLAN {
		l3off = 18
	}
	proto := binary.BigEndian.Uint16(in[l3off-2:])
	out := append(slices.Clone(in[:12]), in[l3off-2:]...)
	switch r {
	case maps.ReasonForwardedFib:
		copy(out[0:], macNeigh[:])
		copy(out[6:], macOut[:])
	case maps.ReasonRedirected:
		if ifindex == l.red {
			copy(out[0:], macRedDst[:])
			copy(out[6:], macRedSrc[:])
		}
	}
	if r == maps.ReasonForwardedFib || r == maps.ReasonForwardedNeigh {
		if proto == etherTypeIPv4 {
			out[14+8]--
			fixIPv4Checksum(out[14:34])
		} else {
			out[14+7]--
		}
	}
	return out
}
