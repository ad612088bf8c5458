package netnstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestGenerationSwapsUnderTraffic alternates two valid generations 1000 times while a flow runs to serviceB:
// generation A sends it out of rb (table 100), generation B out of rb2 (table 200). No packet may be lost or
// duplicated, the version advances by exactly one per swap, and after every swap the traffic leaves through the
// new generation's interface only.
func TestGenerationSwapsUnderTraffic(t *testing.T) {
	swaps := 1000
	if testing.Short() {
		swaps = 100
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	l := lab.New(t)
	l.MustBuild(ctx, lineTopology(lineOptions{secondPath: true, v4only: true}))
	a, r, b := l.NS("a"), l.NS("r"), l.NS("b")
	assertKernelForwardingOff(t, r, "ra", "rb", "rb2")

	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	rt.attach(t, loader.ModeAuto, "ra", "rb", "rb2")
	// Even swaps apply A, odd swaps B.
	gens := [2]struct {
		tables    maps.Tables
		out, idle string // the interface serviceB traffic must leave through, and the other one
	}{
		{lineTables(t, r, tableMain, "ra", "rb", "rb2"), "rb", "rb2"},
		{lineTables(t, r, tableAlt, "ra", "rb", "rb2"), "rb2", "rb"},
	}
	first := rt.apply(t, gens[0].tables, "gen-A")

	txOf := func(dev string) uint64 {
		st, err := r.LinkStats(dev)
		if err != nil {
			t.Fatal(err)
		}
		return st.TxPackets
	}
	rb0, rb20 := txOf("rb"), txOf("rb2")

	flow, err := lab.StartFlow(ctx, lab.FlowOptions{From: a, To: b, Dst: serviceB, Rate: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if err := flow.WaitReceived(ctx, 100, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	var applyTotal, applyMax time.Duration
	for i := 1; i <= swaps; i++ {
		g := gens[i%2]
		rep := rt.apply(t, g.tables, fmt.Sprintf("swap-%d", i))
		if rep.NoOp || rep.Generation != first.Generation+uint64(i) {
			t.Fatalf("swap %d: report %s, want generation %d", i, rep, first.Generation+uint64(i))
		}
		applyTotal += rep.Duration
		applyMax = max(applyMax, rep.Duration)
		// Apply returned after a grace period: no packet can still use the old generation, so from here the
		// old interface must stand still while the new one carries the flow.
		idle0, out0 := txOf(g.idle), txOf(g.out)
		err := lab.WaitFor(ctx, 5*time.Second, time.Millisecond, func() (bool, error) {
			return txOf(g.out) >= out0+3, nil
		})
		if err != nil {
			t.Fatalf("swap %d: no traffic out of %s: %v (flow: %d sent, %d received)", i, g.out, err,
				flow.Sent(), flow.Received())
		}
		if got := txOf(g.idle); got != idle0 {
			t.Fatalf("swap %d (to %s): %d packets still left through %s after the swap", i, g.out, got-idle0, g.idle)
		}
	}
	elapsed := time.Since(start)
	res, err := flow.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := rt.set.Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d swaps in %v (apply mean %v, max %v); flow: %s; out rb +%d, rb2 +%d", swaps, elapsed.Round(time.Millisecond),
		(applyTotal / time.Duration(swaps)).Round(time.Microsecond), applyMax.Round(time.Microsecond), res,
		txOf("rb")-rb0, txOf("rb2")-rb20)
	if v.Generation != first.Generation+uint64(swaps) {
		t.Errorf("version generation %d, want %d (+%d)", v.Generation, first.Generation+uint64(swaps), swaps)
	}
	if !res.Clean() {
		t.Errorf("flow across %d swaps not clean: %s", swaps, res)
	}
	if res.Sent < uint64(swaps) {
		t.Errorf("flow sent only %d packets over %d swaps: the swaps were not under traffic", res.Sent, swaps)
	}
}
