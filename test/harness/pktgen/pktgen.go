package pktgen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Limits of a Frame (MaxFlows is the size of the counter's per-flow map in pktgen.c).
const (
	MaxFlows  = 256
	HeaderLen = 14 + 20 + 8 // Ethernet, IPv4, UDP
	MaxSize   = 1514
)

// ErrInvalidFrame is what Frame.Bytes returns for a frame it cannot build.
var ErrInvalidFrame = errors.New("invalid frame")

// Frame describes the generated frames: IPv4/UDP from Src to Dst:DstPort, Flows flows with the source ports
// SrcPort, SrcPort+1, ..., taken in turn.
type Frame struct {
	SrcMAC, DstMAC   net.HardwareAddr
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
	Flows            int
	// Size counts the bytes from the Ethernet header to the payload's end (no FCS), HeaderLen..MaxSize.
	Size int
}

func (f Frame) validate() error {
	var errs []error
	if len(f.SrcMAC) != 6 || len(f.DstMAC) != 6 {
		errs = append(errs, fmt.Errorf("MACs %q and %q must have 6 bytes", f.SrcMAC, f.DstMAC))
	}
	if !f.Src.Is4() || !f.Dst.Is4() {
		errs = append(errs, fmt.Errorf("addresses %s and %s must be IPv4", f.Src, f.Dst))
	}
	if f.Flows < 1 || f.Flows > MaxFlows {
		errs = append(errs, fmt.Errorf("flows %d must be 1..%d", f.Flows, MaxFlows))
	} else if int(f.SrcPort)+f.Flows-1 > 0xffff {
		errs = append(errs, fmt.Errorf("source ports %d + %d flows exceed 65535", f.SrcPort, f.Flows))
	}
	if f.Size < HeaderLen || f.Size > MaxSize {
		errs = append(errs, fmt.Errorf("size %d must be %d..%d", f.Size, HeaderLen, MaxSize))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidFrame, err)
	}
	return nil
}

// Bytes is the first flow's frame: Ethernet, IPv4 (TTL 64, no options, checksummed), UDP without a checksum,
// a zero payload.
func (f Frame) Bytes() ([]byte, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	b := make([]byte, f.Size)
	copy(b[0:6], f.DstMAC)
	copy(b[6:12], f.SrcMAC)
	binary.BigEndian.PutUint16(b[12:14], unix.ETH_P_IP)
	ip := b[14:34]
	ip[0] = 0x45 // version 4, 5 words
	binary.BigEndian.PutUint16(ip[2:4], uint16(f.Size-14))
	ip[8] = 64 // TTL
	ip[9] = unix.IPPROTO_UDP
	src, dst := f.Src.As4(), f.Dst.As4()
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[10:12], ipChecksum(ip))
	udp := b[34:42]
	binary.BigEndian.PutUint16(udp[0:2], f.SrcPort)
	binary.BigEndian.PutUint16(udp[2:4], f.DstPort)
	binary.BigEndian.PutUint16(udp[4:6], uint16(f.Size-34))
	return b, nil
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// genConfig is pktgen.c's gen: the header as the little-endian words the program stores.
func genConfig(f Frame, frame []byte) PktgenGenConfig {
	var c PktgenGenConfig
	for i := range c.Hdr.W {
		c.Hdr.W[i] = binary.LittleEndian.Uint64(frame[8*i:])
	}
	c.Hdr.Tail = binary.LittleEndian.Uint16(frame[40:])
	c.BasePort = f.SrcPort
	c.Flows = uint16(f.Flows)
	return c
}

// countConfig is pktgen.c's want; addresses and port in network order, as the program compares them.
func countConfig(f Frame) PktgenCountConfig {
	src, dst := f.Src.As4(), f.Dst.As4()
	var port [2]byte
	binary.BigEndian.PutUint16(port[:], f.DstPort)
	return PktgenCountConfig{
		Saddr:    binary.NativeEndian.Uint32(src[:]),
		Daddr:    binary.NativeEndian.Uint32(dst[:]),
		Dport:    binary.NativeEndian.Uint16(port[:]),
		BasePort: f.SrcPort,
		Flows:    uint16(f.Flows),
	}
}

// Generator transmits a Frame's flows out of a veth.
type Generator struct {
	frame     Frame
	data      []byte
	prog      *ebpf.Program
	generated *ebpf.Map
}

// NewGenerator loads the generator program for f.
func NewGenerator(f Frame) (*Generator, error) {
	data, err := f.Bytes()
	if err != nil {
		return nil, err
	}
	spec, err := LoadPktgen()
	if err != nil {
		return nil, err
	}
	if err := spec.Variables[PktgenVarGen].Set(genConfig(f, data)); err != nil {
		return nil, fmt.Errorf("set generator config: %w", err)
	}
	var objs struct {
		Prog      *ebpf.Program `ebpf:"xdp_gen"`
		Generated *ebpf.Map     `ebpf:"generated"`
	}
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, fmt.Errorf("load generator: %w", err)
	}
	return &Generator{frame: f, data: data, prog: objs.Prog, generated: objs.Generated}, nil
}

// Close unloads the program.
func (g *Generator) Close() error {
	return errors.Join(g.prog.Close(), g.generated.Close())
}

// Burst is what one Send did.
type Burst struct {
	Generated uint64 // frames the program returned XDP_TX for
	// Busy is the time the kernel spent in the test runs' batches: the generator and, in the softirq that follows
	// each batch on the same CPU, the receive path of the veth's peer and whatever that forwards. Not in it: each
	// test run's setup and teardown (about 20 ms, an RCU grace period), and time the thread waited for the CPU.
	Busy time.Duration
	Wall time.Duration // from the first test run's start to the last one's end
}

// ErrInterrupted is returned when a signal interrupted a test run: its frames went out, but its time is unknown.
var ErrInterrupted = errors.New("live-frame test run interrupted")

// xdpMD is struct xdp_md, the test run's context: the frame's extent and the device it arrives on.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// Per test run: a call should take about callTarget, so a long Send stays responsive to ctx and its end.
const (
	callTarget = 100 * time.Millisecond
	minRepeat  = 1 << 10
	maxRepeat  = 1 << 24
	batchSize  = 64 // frames per batch, the kernel's default (NAPI_POLL_WEIGHT)
)

// Send runs the generator in live-frame mode on ifindex in ns (a veth whose peer runs NAPI, see EnableXDPReceive)
// until the test runs were busy for d, or ctx ends. Each frame the program returns XDP_TX for is transmitted to
// the veth's peer; the generator, the peer's receive path and whatever that forwards run on the calling thread's
// CPU, in the softirq that follows each batch of 64 frames. When ksoftirqd has that softirq instead (a busy host),
// the peer's 256-frame receive ring fills and drops what does not fit, counted in the peer's rx_dropped.
func (g *Generator) Send(ctx context.Context, ns netns.NsHandle, ifindex int, d time.Duration) (Burst, error) {
	before, err := sumPerCPU(g.generated, 0)
	if err != nil {
		return Burst{}, err
	}
	md, err := binary.Append(nil, binary.NativeEndian, xdpMD{DataEnd: uint32(len(g.data)), IngressIfindex: uint32(ifindex)})
	if err != nil {
		return Burst{}, err
	}
	var b Burst
	err = netnsrun.Run(ns, func() error {
		start := time.Now()
		defer func() { b.Wall = time.Since(start) }()
		repeat := uint32(minRepeat)
		for b.Busy < d {
			if err := ctx.Err(); err != nil {
				return err
			}
			perFrame, err := runLive(g.prog.FD(), g.data, md, repeat)
			if err != nil {
				return fmt.Errorf("ifindex %d: %w", ifindex, err)
			}
			took := time.Duration(perFrame) * time.Duration(repeat)
			b.Busy += took
			repeat = nextRepeat(repeat, took, d-b.Busy)
		}
		return nil
	})
	if err != nil {
		return Burst{}, err
	}
	after, err := sumPerCPU(g.generated, 0)
	if err != nil {
		return Burst{}, err
	}
	b.Generated = after - before
	return b, nil
}

// progTestRun is the BPF_PROG_TEST_RUN part of union bpf_attr. The raw syscall, not cilium/ebpf's Program.Run:
// that neither returns the kernel's duration nor tells a retried (interrupted) run from a clean one.
type progTestRun struct {
	ProgFD, Retval             uint32
	DataSizeIn, DataSizeOut    uint32
	DataIn, DataOut            uint64
	Repeat, Duration           uint32
	CtxSizeIn, CtxSizeOut      uint32
	CtxIn, CtxOut              uint64
	Flags, CPU, BatchSize, pad uint32
}

// runLive runs prog repeat times on live frames and returns the kernel's time per frame in ns. It blocks signals on
// the calling thread for the run: call it on a locked OS thread.
func runLive(fd int, data, ctx []byte, repeat uint32) (uint32, error) {
	attr := progTestRun{
		ProgFD:     uint32(fd),
		DataSizeIn: uint32(len(data)), DataIn: uint64(uintptr(unsafe.Pointer(&data[0]))),
		CtxSizeIn: uint32(len(ctx)), CtxIn: uint64(uintptr(unsafe.Pointer(&ctx[0]))),
		Repeat:    repeat,
		Flags:     unix.BPF_F_TEST_XDP_LIVE_FRAMES,
		BatchSize: batchSize,
	}
	// The kernel ends a test run at any signal pending for the thread (EINTR, its duration lost): the Go runtime's
	// own (preemption, child exits, the profiler) arrive at any time. The thread holds them back for the run; the
	// caller has it locked (the namespace switch), and they are delivered when the run returns.
	var all, old unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &all, &old); err != nil {
		return 0, fmt.Errorf("block signals for the test run: %w", err)
	}
	_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_TEST_RUN, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil); err != nil {
		return 0, fmt.Errorf("unblock signals after the test run: %w", err)
	}
	runtime.KeepAlive(data)
	runtime.KeepAlive(ctx)
	switch {
	case errno == unix.EINTR:
		return 0, ErrInterrupted
	case errno != 0:
		return 0, fmt.Errorf("live-frame test run: %w", errno)
	}
	return attr.Duration, nil
}

// nextRepeat sizes the next test run from the last one's pace: about callTarget, no longer than what is left.
func nextRepeat(last uint32, took, left time.Duration) uint32 {
	if took <= 0 {
		took = time.Microsecond
	}
	want := min(callTarget, max(left, 0))
	n := float64(last) * float64(want) / float64(took)
	return uint32(min(max(n, minRepeat), maxRepeat))
}

// Counter counts a Frame's flows where they arrive.
type Counter struct {
	flows    int
	xdp, tc  *ebpf.Program
	received *ebpf.Map
}

// Hook is where a Counter counts on the receiving veth.
type Hook int

const (
	// HookXDP counts in the veth's XDP hook: every frame its peer transmits, before an skb exists.
	HookXDP Hook = iota
	// HookTC counts at tc ingress (tcx): also frames handed to the veth's receive path directly, as
	// bpf_redirect_peer does, which never pass its XDP hook.
	HookTC
)

// NewCounter loads the counting program for f's flows.
func NewCounter(f Frame) (*Counter, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	spec, err := LoadPktgen()
	if err != nil {
		return nil, err
	}
	if err := spec.Variables[PktgenVarWant].Set(countConfig(f)); err != nil {
		return nil, fmt.Errorf("set counter config: %w", err)
	}
	var objs struct {
		XDP      *ebpf.Program `ebpf:"xdp_count"`
		TC       *ebpf.Program `ebpf:"tc_count"`
		Received *ebpf.Map     `ebpf:"received"`
	}
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, fmt.Errorf("load counter: %w", err)
	}
	return &Counter{flows: f.Flows, xdp: objs.XDP, tc: objs.TC, received: objs.Received}, nil
}

// Close unloads the programs (an attachment made with Attach stays until its link is closed).
func (c *Counter) Close() error {
	return errors.Join(c.xdp.Close(), c.tc.Close(), c.received.Close())
}

// Attach attaches the counter to ifindex in ns at hook. Closing the link detaches it.
func (c *Counter) Attach(ns netns.NsHandle, ifindex int, hook Hook) (link.Link, error) {
	if hook == HookXDP {
		return AttachXDP(ns, ifindex, c.xdp)
	}
	var l link.Link
	err := netnsrun.Run(ns, func() error {
		var err error
		l, err = link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: c.tc, Attach: ebpf.AttachTCXIngress})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("attach tc counter to ifindex %d: %w", ifindex, err)
	}
	return l, nil
}

// Count is what a Counter counted.
type Count struct {
	PerFlow []uint64 // by source port - Frame.SrcPort
}

// Packets is the total over every flow.
func (c Count) Packets() uint64 {
	var n uint64
	for _, v := range c.PerFlow {
		n += v
	}
	return n
}

// Flows is the number of flows with at least one packet.
func (c Count) Flows() int {
	n := 0
	for _, v := range c.PerFlow {
		if v > 0 {
			n++
		}
	}
	return n
}

// Sub is the count since an earlier one.
func (c Count) Sub(earlier Count) Count {
	out := Count{PerFlow: make([]uint64, len(c.PerFlow))}
	for i, v := range c.PerFlow {
		out.PerFlow[i] = v
		if i < len(earlier.PerFlow) {
			out.PerFlow[i] -= earlier.PerFlow[i]
		}
	}
	return out
}

// Read returns the packets counted so far.
func (c *Counter) Read() (Count, error) {
	out := Count{PerFlow: make([]uint64, c.flows)}
	for i := range out.PerFlow {
		n, err := sumPerCPU(c.received, uint32(i))
		if err != nil {
			return Count{}, err
		}
		out.PerFlow[i] = n
	}
	return out, nil
}

// EnableXDPReceive attaches a program that passes everything to ifindex in ns: a veth accepts the XDP frames
// its peer transmits only while it runs NAPI, which an XDP program turns on. Closing the result detaches it.
func EnableXDPReceive(ns netns.NsHandle, ifindex int) (io.Closer, error) {
	spec, err := LoadPktgen()
	if err != nil {
		return nil, err
	}
	var objs struct {
		Prog *ebpf.Program `ebpf:"xdp_pass"`
	}
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, fmt.Errorf("load pass program: %w", err)
	}
	defer objs.Prog.Close() // the link holds the program
	return AttachXDP(ns, ifindex, objs.Prog)
}

// AttachXDP attaches prog to ifindex in ns in native mode with a bpf_link; closing the link detaches it.
func AttachXDP(ns netns.NsHandle, ifindex int, prog *ebpf.Program) (link.Link, error) {
	var l link.Link
	err := netnsrun.Run(ns, func() error {
		var err error
		l, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: link.XDPDriverMode})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("attach xdp to ifindex %d: %w", ifindex, err)
	}
	return l, nil
}

func sumPerCPU(m *ebpf.Map, key uint32) (uint64, error) {
	var vs []uint64
	if err := m.Lookup(key, &vs); err != nil {
		return 0, fmt.Errorf("read %s[%d]: %w", m, key, err)
	}
	var n uint64
	for _, v := range vs {
		n += v
	}
	return n, nil
}
