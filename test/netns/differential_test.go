package netnstest

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

var diffSeed = flag.Uint64("netns.seed", 0, "seed of TestFIBDecisionMatchesKernel (0: time-based)")

const (
	diffTable   = 300
	diffEgress  = 4 // egress devices e1..e4
	diffNHs     = 8 // next hops per egress device and family: .2 - .9
	diffRoutes  = 80
	diffDsts    = 200 // per family
	tcActRedir  = 7   // TC_ACT_REDIRECT
	tcActUnspec = 0xffffffff
)

// decision is a forwarding decision: out of Dev to next hop NH, or not forwarded at all.
type decision struct {
	Forward bool
	Dev     string
	NH      netip.Addr
}

func (d decision) String() string {
	if !d.Forward {
		return "not forwarded"
	}
	return fmt.Sprintf("dev %s nh %s", d.Dev, d.NH)
}

// TestFIBDecisionMatchesKernel compares, for random destinations over a random routing table, the real router
// program's decision (BPF_PROG_TEST_RUN: redirect or pass, egress device from the rewritten source MAC, next
// hop from the rewritten destination MAC, every neighbour having its own MAC) with the kernel's own route lookup
// in the same table. Rerun a failure with -netns.seed.
func TestFIBDecisionMatchesKernel(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -netns.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	l := lab.New(t)
	topo := lab.Topology{
		Namespaces: []lab.Namespace{{Name: "r", Sysctls: []lab.Sysctl{
			{Key: "net.ipv4.conf.all.forwarding", Value: "0"}, {Key: "net.ipv6.conf.all.forwarding", Value: "0"},
			{Key: "net.ipv4.conf." + standInDev + ".forwarding", Value: "1"},
			{Key: "net.ipv6.conf." + standInDev + ".forwarding", Value: "1"},
		}}},
		Veths:   []lab.Veth{{A: lab.Port{NS: "r", Name: "in0"}, B: lab.Port{NS: "r", Name: "in0p"}}},
		Devices: []lab.Device{{Port: lab.Port{NS: "r", Name: standInDev}}},
	}
	egressByMAC := map[string]string{}
	for k := 1; k <= diffEgress; k++ {
		dev := fmt.Sprintf("e%d", k)
		topo.Veths = append(topo.Veths, lab.Veth{
			A: lab.Port{NS: "r", Name: dev, NoPrefixRoute: true,
				Addrs: []string{fmt.Sprintf("10.200.%d.1/24", k), fmt.Sprintf("fd00:200:%d::1/64", k)}},
			B: lab.Port{NS: "r", Name: dev + "p"}})
		topo.Routes = append(topo.Routes,
			lab.Route{NS: "r", Table: diffTable, Dst: fmt.Sprintf("10.200.%d.0/24", k), Dev: dev},
			lab.Route{NS: "r", Table: diffTable, Dst: fmt.Sprintf("fd00:200:%d::/64", k), Dev: dev})
	}
	l.MustBuild(t.Context(), topo)
	r := l.NS("r")
	for k := 1; k <= diffEgress; k++ {
		dev := fmt.Sprintf("e%d", k)
		mac, err := r.MAC(dev)
		if err != nil {
			t.Fatal(err)
		}
		egressByMAC[mac.String()] = dev
	}

	// Every next hop (and every on-link destination, added later) gets a permanent neighbour with its own MAC.
	nhByMAC := map[string]netip.Addr{}
	neighbours := map[netip.Addr]bool{}
	var macSeq uint32
	addNeighbour := func(dev string, ip netip.Addr) error {
		if neighbours[ip] {
			return nil
		}
		macSeq++
		mac := net.HardwareAddr{0x02, 0xaa, byte(macSeq >> 24), byte(macSeq >> 16), byte(macSeq >> 8), byte(macSeq)}
		if err := r.AddNeighbour(dev, ip.String(), mac); err != nil {
			return err
		}
		nhByMAC[mac.String()] = ip
		neighbours[ip] = true
		return nil
	}
	nhPool := map[string][]netip.Addr{} // "dev/family" -> next hops
	for k := 1; k <= diffEgress; k++ {
		dev := fmt.Sprintf("e%d", k)
		for h := 2; h < 2+diffNHs; h++ {
			for _, ip := range []netip.Addr{
				netip.MustParseAddr(fmt.Sprintf("10.200.%d.%d", k, h)),
				netip.MustParseAddr(fmt.Sprintf("fd00:200:%d::%x", k, h)),
			} {
				if err := addNeighbour(dev, ip); err != nil {
					t.Fatal(err)
				}
				key := dev + "/4"
				if ip.Is6() {
					key = dev + "/6"
				}
				nhPool[key] = append(nhPool[key], ip)
			}
		}
	}

	routes := randomRoutes(rng, nhPool)
	for _, rt := range routes {
		if err := r.AddRoute(rt); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}

	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	in0, err := r.Ifindex("in0")
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := r.Ifindex(standInDev)
	if err != nil {
		t.Fatal(err)
	}
	rt.apply(t, maps.Tables{
		VRFs:       []maps.VRF{{ID: vrfID, TableID: diffTable, LookupIfindex: uint32(fwd)}},
		Interfaces: []maps.Interface{{Ifindex: uint32(in0), VRF: vrfID, Mode: maps.ModeRoute}},
	}, "differential")
	prog := rt.ldr.Program(loader.DefaultTCProgram)
	if prog == nil {
		t.Fatal("loader has no tc_router program")
	}
	in0MAC, err := r.MAC("in0")
	if err != nil {
		t.Fatal(err)
	}
	own := map[netip.Addr]bool{}
	for k := 1; k <= diffEgress; k++ {
		own[netip.MustParseAddr(fmt.Sprintf("10.200.%d.1", k))] = true
		own[netip.MustParseAddr(fmt.Sprintf("fd00:200:%d::1", k))] = true
	}

	var checked, forwarded, mismatches int
	for _, dst := range randomDestinations(rng, routes) {
		if own[dst] {
			continue
		}
		var want decision
		kd, err := r.RouteGet(dst, diffTable)
		switch {
		case errors.Is(err, lab.ErrNoRoute):
		case err != nil:
			t.Fatalf("seed %d: %v", seed, err)
		case kd.Type == lab.Local:
		default:
			want = decision{Forward: true, Dev: kd.Dev, NH: kd.Via}
			if !want.NH.IsValid() { // on-link: the destination is the next hop
				want.NH = dst
				if err := addNeighbour(kd.Dev, dst); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		}
		got, err := ebpfDecision(r, prog, in0, in0MAC, dst, egressByMAC, nhByMAC)
		if err != nil {
			t.Fatalf("seed %d: dst %s: %v", seed, dst, err)
		}
		checked++
		if want.Forward {
			forwarded++
		}
		if got != want {
			mismatches++
			t.Errorf("seed %d: dst %s: eBPF %s, kernel %s (kernel route: %v)", seed, dst, got, want, kd)
			if mismatches >= 10 {
				t.Fatalf("seed %d: stopping after %d mismatches", seed, mismatches)
			}
		}
	}
	t.Logf("%d routes, %d destinations checked, %d forwarded by both, %d mismatches", len(routes), checked, forwarded, mismatches)
	if forwarded < checked/4 || forwarded == checked {
		t.Errorf("seed %d: %d of %d destinations forwarded: want a mix of hits and misses", seed, forwarded, checked)
	}
}

// randomRoutes makes a table of unique prefixes: mostly via a next hop, some on-link, a few local, blackhole and
// unreachable routes, and sometimes a default route per family.
func randomRoutes(rng *rand.Rand, nhPool map[string][]netip.Addr) []lab.Route {
	seen := map[netip.Prefix]bool{}
	var out []lab.Route
	for len(out) < diffRoutes {
		v6 := rng.IntN(2) == 1
		var pfx netip.Prefix
		if v6 {
			pfx = netip.PrefixFrom(netip.AddrFrom16(randV6(rng)), 24+rng.IntN(105)).Masked()
		} else {
			pfx = netip.PrefixFrom(netip.AddrFrom4(randV4(rng)), 12+rng.IntN(21)).Masked()
		}
		if rng.IntN(40) == 0 {
			pfx = netip.PrefixFrom(pfx.Addr(), 0).Masked()
		}
		dev := fmt.Sprintf("e%d", 1+rng.IntN(diffEgress))
		fam := "/4"
		if v6 {
			fam = "/6"
		}
		rt := lab.Route{NS: "r", Table: diffTable, Dev: dev}
		switch p := rng.IntN(100); {
		case p < 70:
			pool := nhPool[dev+fam]
			rt.Via = pool[rng.IntN(len(pool))].String()
		case p < 85: // on-link
		case p < 90:
			pfx = netip.PrefixFrom(pfx.Addr(), pfx.Addr().BitLen()) // local routes are host routes
			rt.Type = lab.Local
		case p < 95:
			rt.Type, rt.Dev = lab.Blackhole, ""
		default:
			rt.Type, rt.Dev = lab.Unreachable, ""
		}
		if seen[pfx] {
			continue
		}
		seen[pfx] = true
		rt.Dst = pfx.String()
		out = append(out, rt)
	}
	return out
}

// randomDestinations: half inside a random route's prefix, a quarter inside the connected subnets, a quarter
// anywhere in the address ranges used (mostly misses).
func randomDestinations(rng *rand.Rand, routes []lab.Route) []netip.Addr {
	var out []netip.Addr
	for _, v6 := range []bool{false, true} {
		var fam []netip.Prefix
		for _, rt := range routes {
			p := netip.MustParsePrefix(rt.Dst)
			if p.Addr().Is6() == v6 && p.Bits() > 0 {
				fam = append(fam, p)
			}
		}
		for i := 0; i < diffDsts; i++ {
			var p netip.Prefix
			switch n := rng.IntN(4); {
			case n < 2 && len(fam) > 0:
				p = fam[rng.IntN(len(fam))]
			case n == 2 && v6:
				p = netip.MustParsePrefix(fmt.Sprintf("fd00:200:%d::/64", 1+rng.IntN(diffEgress)))
			case n == 2:
				p = netip.MustParsePrefix(fmt.Sprintf("10.200.%d.0/24", 1+rng.IntN(diffEgress)))
			case v6:
				p = netip.MustParsePrefix("fd00::/16")
			default:
				p = netip.MustParsePrefix("10.0.0.0/8")
			}
			out = append(out, randomIn(rng, p))
		}
	}
	return out
}

func randV4(rng *rand.Rand) [4]byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], rng.Uint32())
	b[0] = 10
	return b
}

func randV6(rng *rand.Rand) [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], rng.Uint64())
	binary.BigEndian.PutUint64(b[8:], rng.Uint64())
	b[0], b[1] = 0xfd, 0x00
	return b
}

// randomIn returns a random address inside p (host bits random).
func randomIn(rng *rand.Rand, p netip.Prefix) netip.Addr {
	base := p.Masked().Addr().AsSlice()
	rnd := make([]byte, len(base))
	for i := range rnd {
		rnd[i] = byte(rng.UintN(256))
	}
	for i := range base {
		bitsHere := min(max(p.Bits()-8*i, 0), 8) // prefix bits in this byte
		mask := byte(0xff << (8 - bitsHere))
		base[i] = base[i]&mask | rnd[i]&^mask
	}
	a, _ := netip.AddrFromSlice(base)
	return a
}

// ebpfDecision runs the router program once on a UDP packet to dst arriving on in0 and reads the decision back.
// The run must happen inside the router namespace: the skb's device and the fib lookup are taken from it.
func ebpfDecision(r *lab.Netns, prog *ebpf.Program, in0 int, in0MAC net.HardwareAddr, dst netip.Addr,
	egressByMAC map[string]string, nhByMAC map[string]netip.Addr) (decision, error) {
	pkt := udpFrame(in0MAC, dst)
	out := make([]byte, len(pkt)+64)
	// struct __sk_buff up to and including ifindex (11 words); ifindex sets skb->dev.
	var skb [11]uint32
	skb[10] = uint32(in0)
	var ret uint32
	err := r.Do(func() error {
		var err error
		ret, err = prog.Run(&ebpf.RunOptions{Data: pkt, DataOut: out, Context: skb})
		return err
	})
	if err != nil {
		return decision{}, fmt.Errorf("test run: %w", err)
	}
	switch ret {
	case tcActUnspec:
		return decision{}, nil
	case tcActRedir:
		dmac, smac := net.HardwareAddr(out[0:6]).String(), net.HardwareAddr(out[6:12]).String()
		dev, ok := egressByMAC[smac]
		if !ok {
			return decision{}, fmt.Errorf("redirected with source MAC %s of no egress device", smac)
		}
		nh, ok := nhByMAC[dmac]
		if !ok {
			return decision{}, fmt.Errorf("redirected with destination MAC %s of no neighbour", dmac)
		}
		return decision{Forward: true, Dev: dev, NH: nh}, nil
	default:
		return decision{}, fmt.Errorf("program returned %d, want redirect (%d) or pass (-1)", int32(ret), tcActRedir)
	}
}

// udpFrame is an Ethernet frame addressed to in0 carrying a UDP datagram to dst with a valid IPv4 checksum.
func udpFrame(dstMAC net.HardwareAddr, dst netip.Addr) []byte {
	payload := []byte("differential")
	udp := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 50000)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	copy(udp[8:], payload)
	frame := append([]byte{}, dstMAC...)
	frame = append(frame, 0x02, 0xbb, 0, 0, 0, 1)
	if dst.Is4() {
		frame = binary.BigEndian.AppendUint16(frame, 0x0800)
		ip := make([]byte, 20)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(udp)))
		ip[8], ip[9] = 64, 17 // ttl, udp
		copy(ip[12:], []byte{10, 100, 0, 1})
		d := dst.As4()
		copy(ip[16:], d[:])
		binary.BigEndian.PutUint16(ip[10:], ipv4Checksum(ip))
		frame = append(frame, ip...)
	} else {
		frame = binary.BigEndian.AppendUint16(frame, 0x86dd)
		ip := make([]byte, 40)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)))
		ip[6], ip[7] = 17, 64 // next header udp, hop limit
		src := netip.MustParseAddr("fd00:100::1").As16()
		copy(ip[8:], src[:])
		d := dst.As16()
		copy(ip[24:], d[:])
		frame = append(frame, ip...)
	}
	return append(frame, udp...)
}

func ipv4Checksum(h []byte) uint16 {
	var s uint32
	for i := 0; i < len(h); i += 2 {
		s += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
