package throughput

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/test/harness/bench/topo"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestMeasureShort: one short run per path; every figure must be measured, the eBPF path must have been
// forwarded by the router, and conntrack must have tracked the kernel path only.
func TestMeasureShort(t *testing.T) {
	l := lab.New(t)
	paths, err := topo.Build(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	rows := Measure(context.Background(), l, paths, Options{Runs: 1, Duration: time.Second, Rules: 40, SmallDuration: 200 * time.Millisecond, Flows: 8})
	if len(rows) != 21 {
		t.Fatalf("%d rows, want 21: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Name, r.Err)
		} else if r.Value <= 0 {
			t.Errorf("%s: %v, want > 0", r.Name, r.Value)
		}
	}
	byName := map[string]string{}
	for _, r := range rows {
		byName[r.Section+"/"+r.Name] = r.Detail
	}
	for name, want := range map[string]string{
		SectionSmall + "/kernel forwarding + 40 rules": "40 rules as above; 8 flows;",
		SectionSmall + "/eBPF tc router + 40 rules":    "ForwDatagrams +0,",
		SectionSmall + "/eBPF / kernel, 40 rules":      "same run",
		SectionSmall + "/eBPF tc router":               "forwarded-peer +",
		SectionSmall + "/" + tcCeilingName:             "redirected-peer +",
	} {
		if d, ok := byName[name]; !ok || !strings.Contains(d, want) {
			t.Errorf("%s: detail %q (row present: %v), want it to contain %q", name, d, ok, want)
		}
	}
	if d := byName[Section+"/eBPF tc router"]; !strings.Contains(d, "counted as forwarded-peer") {
		t.Errorf("eBPF row detail %q lacks the forwarded counter", d)
	}
	if d := byName[Section+"/eBPF tc router + 40 rules"]; !strings.Contains(d, "conntrack entries after: 0;") {
		t.Errorf("eBPF path with rules: %q, want no conntrack entries (redirected before netfilter)", d)
	}
	if d := byName[Section+"/kernel forwarding + 40 rules"]; strings.Contains(d, "conntrack entries after: 0;") || !strings.Contains(d, "conntrack entries after:") {
		t.Errorf("kernel path with rules: %q, want conntrack entries", d)
	}
}

// TestSmallShort: one short generator burst per path and phase; every figure must be measured, which also means
// each run's counters passed runCounts.check (delivered in every flow, forwarded by the path's own forwarder).
func TestSmallShort(t *testing.T) {
	l := lab.New(t)
	ctx := context.Background()
	paths, err := topo.Build(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	set, xdp, err := attachRouter(ctx, l, paths)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	defer xdp.Close()
	o := Options{Runs: 1, SmallDuration: 200 * time.Millisecond, Flows: 8}
	rows := smallRows(ctx, paths, set, xdp, o, 0, "", 0)
	if len(rows) != 9 {
		t.Errorf("%d rows, want 9 (direct, kernel, tc, tc redirect only, XDP, four ratios)", len(rows))
	}
	for _, r := range rows {
		t.Logf("%s: %.1f %s %s", r.Name, r.Value, r.Unit, r.Detail)
		if r.Err != nil {
			t.Errorf("%s: %v", r.Name, r.Err)
		}
	}
}
