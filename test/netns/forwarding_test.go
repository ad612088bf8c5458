package netnstest

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestForwardingOnlyThroughEBPF: ping and TCP between a and b cross r only through the eBPF router (kernel
// forwarding is off and the kernel's forwarding counters stay still), the VRF counters match the traffic, and
// with the program detached the same ping fails.
func TestForwardingOnlyThroughEBPF(t *testing.T) {
	checkForwarding(t, forwardingCase{mode: loader.ModeAuto, wantTCHook: true})
}

// TestAttachModes forces each hook in turn and runs the forwarding check on it.
func TestAttachModes(t *testing.T) {
	cases := []forwardingCase{
		{mode: loader.ModeTCX, wantMode: loader.ModeTCX},
		{mode: loader.ModeTC, wantMode: loader.ModeTC},
		// Native XDP on veth: redirected frames are dropped unless the receiving peer runs an XDP program, and
		// TCP stalls unless the sending veth leaves checksums to the stack.
		{mode: loader.ModeXDPNative, wantMode: loader.ModeXDPNative, peerXDP: true,
			hostOffloads: map[string]bool{"tx": false}},
		// Generic XDP refuses GSO packets larger than the MTU.
		{mode: loader.ModeXDPGeneric, wantMode: loader.ModeXDPGeneric,
			hostOffloads: map[string]bool{"tso": false, "gso": false}},
	}
	for _, tc := range cases {
		t.Run(string(tc.mode), func(t *testing.T) { checkForwarding(t, tc) })
	}
}

type forwardingCase struct {
	mode, wantMode loader.Mode
	wantTCHook     bool            // wantMode: the kernel's tc hook (tcHook)
	peerXDP        bool            // XDP_PASS (native) on the end hosts' veths
	hostOffloads   map[string]bool // ethtool features of the end hosts' veths
}

func checkForwarding(t *testing.T, tc forwardingCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l := lab.New(t)
	l.MustBuild(ctx, lineTopology(lineOptions{hostOffl: tc.hostOffloads}))
	a, r, b := l.NS("a"), l.NS("r"), l.NS("b")
	assertKernelForwardingOff(t, r, "ra", "rb")
	if tc.peerXDP {
		pass, err := lab.NewXDPPass()
		if err != nil {
			t.Fatal(err)
		}
		defer pass.Close()
		for _, ns := range []*lab.Netns{a, b} {
			if err := ns.AttachXDP("eth0", pass, lab.XDPNative); err != nil {
				t.Fatal(err)
			}
		}
	}

	if tc.wantTCHook {
		tc.wantMode = tcHook(t, r)
	}
	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	for _, att := range rt.attach(t, tc.mode, "ra", "rb") {
		if att.Mode != tc.wantMode {
			t.Fatalf("attach %s to %s: hook %s (%s), want %s", tc.mode, att.Interface, att.Mode, att.Reason, tc.wantMode)
		}
	}
	tables := lineTables(t, r, tableMain, "ra", "rb")
	rt.apply(t, tables, "forwarding")
	snap, err := rt.set.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Tables.Equal(tables) || snap.Version.Revision != "forwarding" {
		t.Fatalf("dump after apply: revision %q tables %+v, want %q %+v", snap.Version.Revision, snap.Tables, "forwarding", tables)
	}
	kernelFwd := kernelForwarded(t, r)

	// Pings: every echo request and reply is forwarded once by the fib path, in VRF 1, and counted with its
	// frame length.
	const n = 10
	before := rt.counter(t, vrfID, maps.ReasonForwardedFib)
	var wantBytes uint64
	for _, dst := range []netip.Addr{hostB4, hostB6} {
		pingOK(ctx, t, a, dst, n)
		wantBytes += 2 * n * icmpEchoFrame(dst)
	}
	afterPing := rt.counter(t, vrfID, maps.ReasonForwardedFib)
	if got := afterPing.Packets - before.Packets; got != 4*n {
		t.Errorf("forwarded-fib packets grew by %d over %d pings (v4+v6, both ways), want %d", got, 2*n, 4*n)
	}
	if got := afterPing.Bytes - before.Bytes; got != wantBytes {
		t.Errorf("forwarded-fib bytes grew by %d, want %d", got, wantBytes)
	}

	// Bulk TCP (GSO-sized packets, the first thing to break on a bad XDP/checksum setup), both families.
	sizes := map[netip.Addr]int64{hostB4: 16 << 20, hostB6: 4 << 20}
	for _, dst := range []netip.Addr{hostB4, hostB6} {
		c0 := rt.counter(t, vrfID, maps.ReasonForwardedFib)
		tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
		res, err := lab.TCPTransfer(tctx, a, b, dst, sizes[dst])
		tcancel()
		if err != nil {
			t.Fatalf("tcp a -> %s: %v", dst, err)
		}
		c1 := rt.counter(t, vrfID, maps.ReasonForwardedFib)
		t.Logf("tcp a -> %s: %d bytes in %v (%.2f Gbit/s); forwarded-fib +%d pkts +%d bytes", dst, res.Bytes,
			res.Duration.Round(time.Millisecond), res.BitsPerSecond()/1e9, c1.Packets-c0.Packets, c1.Bytes-c0.Bytes)
		if c1.Bytes-c0.Bytes < uint64(sizes[dst]) {
			t.Errorf("tcp a -> %s: forwarded-fib bytes grew by %d, less than the %d bytes transferred", dst,
				c1.Bytes-c0.Bytes, sizes[dst])
		}
	}
	if got := kernelForwarded(t, r); got != kernelFwd {
		t.Errorf("kernel forwarded %d datagrams in the router namespace, want 0", got-kernelFwd)
	}

	// Detached: nothing else forwards, so the same ping fails, and the counters stand still.
	if err := rt.ldr.DetachAll(ctx); err != nil {
		t.Fatal(err)
	}
	standing := rt.counter(t, vrfID, maps.ReasonForwardedFib)
	pingFails(ctx, t, a, hostB4)
	pingFails(ctx, t, a, hostB6)
	if got := rt.counter(t, vrfID, maps.ReasonForwardedFib); got != standing {
		t.Errorf("forwarded-fib moved after detach: %s -> %s", fmtCounter(standing), fmtCounter(got))
	}
}
