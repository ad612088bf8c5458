package pktgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// XDP verdicts.
const (
	xdpDrop = 1
	xdpPass = 2
	xdpTX   = 3
)

func testFrame() Frame {
	return Frame{
		SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		Src: netip.MustParseAddr("10.0.1.2"), Dst: netip.MustParseAddr("10.0.2.2"),
		SrcPort: 40000, DstPort: 9, Flows: 8, Size: 64,
	}
}

func TestFrameBytes(t *testing.T) {
	b, err := testFrame().Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, // Ethernet
		0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 1, 2, 10, 0, 2, 2, // IPv4, checksum below
		0x9c, 0x40, 0, 9, 0, 30, 0, 0, // UDP 40000 -> 9, length 30, no checksum
	}
	binary.BigEndian.PutUint16(want[24:], 0x63b8) // ^(0x4500+0x0032+0x4011+0x0a00+0x0102+0x0a00+0x0202)
	want = append(want, make([]byte, 22)...)
	if !bytes.Equal(b, want) {
		t.Errorf("frame\n got %x\nwant %x", b, want)
	}
	if got := ipChecksum(b[14:34]); got != 0 {
		t.Errorf("checksum over the header with its checksum = %#x, want 0", got)
	}
}

func TestFrameInvalid(t *testing.T) {
	for name, mod := range map[string]func(*Frame){
		"short MAC":      func(f *Frame) { f.DstMAC = f.DstMAC[:5] },
		"IPv6":           func(f *Frame) { f.Src = netip.MustParseAddr("fd00::1") },
		"no flows":       func(f *Frame) { f.Flows = 0 },
		"too many flows": func(f *Frame) { f.Flows = MaxFlows + 1 },
		"port overflow":  func(f *Frame) { f.SrcPort = 0xfffc },
		"too short":      func(f *Frame) { f.Size = HeaderLen - 1 },
		"too long":       func(f *Frame) { f.Size = MaxSize + 1 },
	} {
		t.Run(name, func(t *testing.T) {
			f := testFrame()
			mod(&f)
			if _, err := f.Bytes(); !errors.Is(err, ErrInvalidFrame) {
				t.Errorf("Bytes: %v, want ErrInvalidFrame", err)
			}
		})
	}
}

func TestNextRepeat(t *testing.T) {
	for _, c := range []struct {
		name       string
		last       uint32
		took, left time.Duration
		want       uint32
	}{
		{"scales to the target", 10000, 10 * time.Millisecond, time.Second, 100000},
		{"no longer than what is left", 10000, 10 * time.Millisecond, 5 * time.Millisecond, 5000},
		{"at least the minimum", 2000, time.Second, time.Second, minRepeat},
		{"at most the maximum", 1 << 23, time.Millisecond, time.Second, maxRepeat},
		{"nothing left: the minimum", 10000, time.Millisecond, -time.Second, minRepeat},
	} {
		if got := nextRepeat(c.last, c.took, c.left); got != c.want {
			t.Errorf("%s: nextRepeat(%d, %v, %v) = %d, want %d", c.name, c.last, c.took, c.left, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	now := Count{PerFlow: []uint64{10, 5, 0, 7}}
	d := now.Sub(Count{PerFlow: []uint64{4, 5, 0, 1}})
	if d.Packets() != 12 || d.Flows() != 2 {
		t.Errorf("delta %v: packets %d flows %d, want 12 and 2", d.PerFlow, d.Packets(), d.Flows())
	}
	if now.Packets() != 22 || now.Flows() != 3 {
		t.Errorf("%v: packets %d flows %d, want 22 and 3", now.PerFlow, now.Packets(), now.Flows())
	}
}

// TestGeneratorProgram runs xdp_gen without live frames: each run must restore the header and take the next port.
func TestGeneratorProgram(t *testing.T) {
	testreq.Root(t)
	f := testFrame()
	g, err := NewGenerator(f)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want, _ := f.Bytes()
	dirty := bytes.Clone(want)
	dirty[0], dirty[22], dirty[34] = 0xff, 1, 0 // MAC, TTL and port as a router or the last run left them
	out := make([]byte, len(want))
	for n := range uint64(2*f.Flows + 1) {
		ret, err := g.prog.Run(&ebpf.RunOptions{Data: dirty, DataOut: out})
		if err != nil {
			t.Fatal(err)
		}
		if ret != xdpTX {
			t.Fatalf("run %d: verdict %d, want XDP_TX", n, ret)
		}
		binary.BigEndian.PutUint16(want[34:], f.SrcPort+uint16(n%uint64(f.Flows))) // the flows in turn
		if !bytes.Equal(out, want) {
			t.Fatalf("run %d:\n got %x\nwant %x", n, out, want)
		}
	}
}

// TestCounterProgram: both counters (XDP and tc) drop and count the frame's flows and pass everything else.
func TestCounterProgram(t *testing.T) {
	testreq.Root(t)
	f := testFrame()
	c, err := NewCounter(f)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	frame := func(mod func([]byte)) []byte {
		b, _ := f.Bytes()
		mod(b)
		return b
	}
	const tcOK, tcShot = 0, 2
	for _, prog := range []struct {
		name         string
		p            *ebpf.Program
		counted, not uint32
	}{{"xdp", c.xdp, xdpDrop, xdpPass}, {"tc", c.tc, tcShot, tcOK}} {
		for _, tc := range []struct {
			name string
			data []byte
			flow int // counted (and dropped) in this flow; -1 none
		}{
			{"first flow", frame(func([]byte) {}), 0},
			{"last flow", frame(func(b []byte) { binary.BigEndian.PutUint16(b[34:], 40007) }), 7},
			{"port past the flows", frame(func(b []byte) { binary.BigEndian.PutUint16(b[34:], 40008) }), -1},
			{"other destination port", frame(func(b []byte) { b[37] = 10 }), -1},
			{"other source", frame(func(b []byte) { b[29] = 3 }), -1},
			{"TCP", frame(func(b []byte) { b[23] = 6 }), -1},
			{"ARP", frame(func(b []byte) { b[13] = 6 }), -1},
			{"truncated in the ports", frame(func([]byte) {})[:37], -1},
		} {
			before, err := c.Read()
			if err != nil {
				t.Fatal(err)
			}
			ret, err := prog.p.Run(&ebpf.RunOptions{Data: tc.data, DataOut: make([]byte, len(tc.data))})
			if err != nil {
				t.Fatal(err)
			}
			after, err := c.Read()
			if err != nil {
				t.Fatal(err)
			}
			d := after.Sub(before)
			want := prog.not
			if tc.flow >= 0 {
				want = prog.counted
			}
			if ret != want {
				t.Errorf("%s %s: verdict %d, want %d", prog.name, tc.name, ret, want)
			}
			switch {
			case tc.flow < 0 && d.Packets() != 0:
				t.Errorf("%s %s: counted %v, want nothing", prog.name, tc.name, d.PerFlow)
			case tc.flow >= 0 && (d.Packets() != 1 || d.PerFlow[tc.flow] != 1):
				t.Errorf("%s %s: counted %v, want one in flow %d", prog.name, tc.name, d.PerFlow, tc.flow)
			}
		}
	}
}

// TestSendOverVeth: a live burst out of one veth end arrives, every flow of it, at the other, where the counter
// counts what the generator produced: in XDP (whose program also makes that end run NAPI), and at tc ingress
// (with a pass-all XDP program for NAPI).
func TestSendOverVeth(t *testing.T) {
	for _, hook := range []Hook{HookXDP, HookTC} {
		t.Run(map[Hook]string{HookXDP: "xdp", HookTC: "tc"}[hook], func(t *testing.T) { testSendOverVeth(t, hook) })
	}
}

func testSendOverVeth(t *testing.T, hook Hook) {
	l := lab.New(t)
	ctx := context.Background()
	l.MustBuild(ctx, lab.Topology{
		Namespaces: []lab.Namespace{{Name: "gen"}, {Name: "sink"}},
		Veths:      []lab.Veth{{A: lab.Port{NS: "gen", Name: "eth0"}, B: lab.Port{NS: "sink", Name: "eth0"}}},
	})
	gen, sink := l.NS("gen"), l.NS("sink")
	f := testFrame()
	var err error
	if f.SrcMAC, err = gen.MAC("eth0"); err != nil {
		t.Fatal(err)
	}
	if f.DstMAC, err = sink.MAC("eth0"); err != nil {
		t.Fatal(err)
	}
	genIdx, err := gen.Ifindex("eth0")
	if err != nil {
		t.Fatal(err)
	}
	sinkIdx, err := sink.Ifindex("eth0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(f)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c, err := NewCounter(f)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if hook == HookTC {
		napi, err := EnableXDPReceive(sink.NsHandle(), sinkIdx)
		if err != nil {
			t.Fatal(err)
		}
		defer napi.Close()
	}
	lk, err := c.Attach(sink.NsHandle(), sinkIdx, hook)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	before, err := sink.LinkStats("eth0")
	if err != nil {
		t.Fatal(err)
	}
	burst, err := g.Send(ctx, gen.NsHandle(), genIdx, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Normally counted before Send returns (in the softirq after each batch), unless ksoftirqd took over. While it
	// has, the generator goes on filling the sink's 256-frame receive ring, which drops what does not fit: on a
	// busy host some frames are lost there, before any hook, and the sink's rx_dropped counts them.
	var got Count
	var dropped uint64
	for deadline := time.Now().Add(2 * time.Second); ; {
		if got, err = c.Read(); err != nil {
			t.Fatal(err)
		}
		after, err := sink.LinkStats("eth0")
		if err != nil {
			t.Fatal(err)
		}
		dropped = after.RxDropped - before.RxDropped
		if got.Packets()+dropped >= burst.Generated || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling the condition, with the deadline above
	}
	t.Logf("generated %d in %v busy, %v wall: %.0f kpps; %d dropped by the full receive ring", burst.Generated,
		burst.Busy, burst.Wall, float64(burst.Generated)/burst.Busy.Seconds()/1e3, dropped)
	if burst.Generated < minRepeat || got.Packets()+dropped != burst.Generated || got.Flows() != f.Flows {
		t.Errorf("generated %d in %v, counted %d in %d flows (%v), %d dropped at the ring; want every frame counted or dropped, at least %d in %d flows",
			burst.Generated, burst.Busy, got.Packets(), got.Flows(), got.PerFlow, dropped, minRepeat, f.Flows)
	}
	// A ring that drops most of the burst means the sink's receive path is not keeping up at all (no NAPI).
	if dropped > burst.Generated/2 {
		t.Errorf("the sink's receive ring dropped %d of %d frames, want most counted", dropped, burst.Generated)
	}
}
