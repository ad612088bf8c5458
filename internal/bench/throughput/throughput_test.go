package throughput

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/internal/bench/topo"
	"github.com/network-operator/network-operator/internal/lab"
)

// TestMeasureShort: one short run per path; every figure must be measured, the eBPF path must have been
// forwarded by the router, and conntrack must have tracked the kernel path only.
func TestMeasureShort(t *testing.T) {
	l := lab.New(t)
	paths, err := topo.Build(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	rows := Measure(context.Background(), l, paths, Options{Runs: 1, Duration: time.Second, Rules: 40})
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 9: %+v", len(rows), rows)
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
		byName[r.Name] = r.Detail
	}
	if d := byName["eBPF tc router"]; !strings.Contains(d, "counted as forwarded-fib") {
		t.Errorf("eBPF row detail %q lacks the forwarded counter", d)
	}
	if d := byName["eBPF tc router + 40 rules"]; !strings.Contains(d, "conntrack entries after: 0;") {
		t.Errorf("eBPF path with rules: %q, want no conntrack entries (redirected before netfilter)", d)
	}
	if d := byName["kernel forwarding + 40 rules"]; strings.Contains(d, "conntrack entries after: 0;") || !strings.Contains(d, "conntrack entries after:") {
		t.Errorf("kernel path with rules: %q, want conntrack entries", d)
	}
}
