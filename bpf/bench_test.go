package bpf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// progRunAttr is the BPF_PROG_TEST_RUN part of union bpf_attr. cilium/ebpf's
// Program.Benchmark takes no ctx, and the router needs one (the ingress
// ifindex), so the benchmarks issue the syscall themselves to read the
// kernel-measured duration.
type progRunAttr struct {
	ProgFD      uint32
	Retval      uint32
	DataSizeIn  uint32
	DataSizeOut uint32
	DataIn      uint64
	DataOut     uint64
	Repeat      uint32
	Duration    uint32
	CtxSizeIn   uint32
	CtxSizeOut  uint32
	CtxIn       uint64
	CtxOut      uint64
	Flags       uint32
	CPU         uint32
	BatchSize   uint32
	_           uint32
}

// testRun runs prog repeat times on one copy of data and returns the verdict
// of the last run and the kernel's average duration per run.
func testRun(prog *ebpf.Program, data, ctx []byte, repeat uint32) (uint32, time.Duration, error) {
	for {
		attr := progRunAttr{
			ProgFD:     uint32(prog.FD()),
			DataSizeIn: uint32(len(data)),
			DataIn:     uint64(uintptr(unsafe.Pointer(&data[0]))),
			Repeat:     repeat,
			CtxSizeIn:  uint32(len(ctx)),
			CtxIn:      uint64(uintptr(unsafe.Pointer(&ctx[0]))),
		}
		_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_TEST_RUN, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
		runtime.KeepAlive(data)
		runtime.KeepAlive(ctx)
		if errno == unix.EINTR {
			continue // a signal arrived during the repeats: run them again
		}
		if errno != 0 {
			return 0, 0, fmt.Errorf("BPF_PROG_TEST_RUN: %w", errno)
		}
		return attr.Retval, time.Duration(attr.Duration), nil
	}
}

func ctxBytes(h hook, ifindex int, frameLen int) []byte {
	var b bytes.Buffer
	if h == hookTC {
		binary.Write(&b, binary.NativeEndian, skbCtx{Ifindex: uint32(ifindex)})
	} else {
		binary.Write(&b, binary.NativeEndian, xdpCtx{DataEnd: uint32(frameLen), IngressIfindex: uint32(ifindex)})
	}
	return b.Bytes()
}

// maxRepeat keeps every repeat of one syscall forwarding: the kernel reuses
// the packet buffer across repeats, so the TTL / hop limit, starting at 255,
// drops by one per run and must stay above 1.
const maxRepeat = 250

// benchProg measures prog on frame and reports "ns/pkt", the kernel-measured
// time per packet (ns/op additionally contains the syscall, amortised over
// maxRepeat packets).
func benchProg(b *testing.B, ns func(func() error) error, prog *ebpf.Program, frame []byte, want uint32, ctx []byte) {
	err := ns(func() error {
		// One run to check the path before timing it.
		ret, _, err := testRun(prog, frame, ctx, 1)
		if err != nil {
			return err
		}
		if ret != want {
			return fmt.Errorf("verdict %d, want %d", int32(ret), int32(want))
		}
		var total time.Duration
		b.ResetTimer()
		for done := 0; done < b.N; {
			n := min(maxRepeat, b.N-done)
			_, d, err := testRun(prog, frame, ctx, uint32(n))
			if err != nil {
				return err
			}
			total += d * time.Duration(n)
			done += n
		}
		b.StopTimer()
		b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/pkt")
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func (l *lab) bench(b *testing.B, h hook, ifindex int, frame []byte, want uint32) {
	benchProg(b, func(fn func() error) error { return runInNS(l.ns, fn) }, l.prog(h), frame, want, ctxBytes(h, ifindex, len(frame)))
}

var hooks = []hook{hookTC, hookXDP}

// BenchmarkRouterFloor is the cost of BPF_PROG_TEST_RUN itself (programs that
// return at once) and of the bare bpf_fib_lookup helper.
func BenchmarkRouterFloor(b *testing.B) {
	l := newLab(b)
	var objs bpf.FloorObjects
	if err := bpf.LoadFloorObjects(&objs, nil); err != nil {
		if errors.Is(err, ebpf.ErrNotSupported) {
			testreq.KernelLacks(b, "a feature the floor programs need", err)
		}
		b.Fatal(err)
	}
	defer objs.Close()
	frame := ip4(addrRoute, protoTCP).bytes()
	ns := func(fn func() error) error { return runInNS(l.ns, fn) }
	for _, h := range hooks {
		b.Run(h.String(), func(b *testing.B) {
			prog := objs.TcPass
			if h == hookXDP {
				prog = objs.XdpPass
			}
			benchProg(b, ns, prog, frame, h.passCode(), ctxBytes(h, l.in, len(frame)))
		})
	}
	// The bare helper the fib paths pay for: one bpf_fib_lookup in table 100.
	b.Run("tc-fib-helper", func(b *testing.B) {
		var ctx bytes.Buffer
		binary.Write(&ctx, binary.NativeEndian, skbCtx{Mark: tableID, Ifindex: uint32(l.in)})
		benchProg(b, ns, objs.TcFibOnly, frame, tcActUnspec, ctx.Bytes())
	})
}

// BenchmarkRouterMiss: a packet on an interface that is not in iface_table.
func BenchmarkRouterMiss(b *testing.B) {
	l := newLab(b)
	frame := ip4(addrRoute, protoTCP).bytes()
	for _, h := range hooks {
		b.Run(h.String(), func(b *testing.B) { l.bench(b, h, l.nof, frame, h.passCode()) })
	}
}

// BenchmarkRouterRedirect: redirect mode with MAC rewrite.
func BenchmarkRouterRedirect(b *testing.B) {
	l := newLab(b)
	p := ip4(addrRoute, protoTCP)
	p.DstMAC = macRed
	frame := p.bytes()
	for _, h := range hooks {
		b.Run(h.String(), func(b *testing.B) { l.bench(b, h, l.red, frame, h.redirectCode()) })
	}
}

// BenchmarkRouterFibIPv4: bpf_fib_lookup SUCCESS, MAC rewrite, TTL decrement,
// bpf_redirect.
func BenchmarkRouterFibIPv4(b *testing.B) {
	l := newLab(b)
	p := ip4(addrRoute, protoTCP)
	p.TTL = 255
	frame := p.bytes()
	for _, h := range hooks {
		b.Run(h.String(), func(b *testing.B) { l.bench(b, h, l.in, frame, h.redirectCode()) })
	}
}

// BenchmarkRouterFibIPv6: as BenchmarkRouterFibIPv4 for IPv6.
func BenchmarkRouterFibIPv6(b *testing.B) {
	l := newLab(b)
	p := ip6(route6, protoTCP)
	p.TTL = 255
	frame := p.bytes()
	for _, h := range hooks {
		b.Run(h.String(), func(b *testing.B) { l.bench(b, h, l.in, frame, h.redirectCode()) })
	}
}

// BenchmarkRouterFibLocal: a packet to a local address (fib NOT_FWDED, passed).
func BenchmarkRouterFibLocal(b *testing.B) {
	l := newLab(b)
	frame := ip4(addrLocal, protoTCP).bytes()
	for _, h := range hooks {
		b.Run(h.String(), func(b *testing.B) { l.bench(b, h, l.in, frame, h.passCode()) })
	}
}

// BenchmarkRouterFibSBR: as BenchmarkRouterFibIPv4/IPv6, on a VLAN of the VRF routing by main, from a source-based
// routing prefix: one LPM lookup in sbr_table picks table 100 (the other fib benchmarks skip it by the VRF flag).
func BenchmarkRouterFibSBR(b *testing.B) {
	l := newLab(b)
	p4 := tagged(from(ip4(addrRoute, protoTCP), addrSBR), vlanMain)
	p6 := tagged(from(ip6(route6, protoTCP), sbr6), vlanMain)
	p4.TTL, p6.TTL = 255, 255
	for _, h := range hooks {
		b.Run(h.String()+"-ipv4", func(b *testing.B) { l.bench(b, h, l.in, p4.bytes(), h.redirectCode()) })
		b.Run(h.String()+"-ipv6", func(b *testing.B) { l.bench(b, h, l.in, p6.bytes(), h.redirectCode()) })
	}
}
