package perpacket

import (
	"context"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/internal/bench/topo"
	"github.com/network-operator/network-operator/internal/lab"
)

// TestMeasure runs every case briefly in a real lab: each must take its intended path (the verdict and counter
// checks inside Measure turn a wrong path into a row error) and cost more than the empty program.
func TestMeasure(t *testing.T) {
	l := lab.New(t)
	paths, err := topo.Build(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	rows := Measure(context.Background(), paths, Options{Samples: 2, Runs: 2000, Repeat: 200})
	if len(rows) != 11 {
		t.Fatalf("%d rows, want 11 (5 tc cases x 2 families + XDP): %+v", len(rows), rows)
	}
	floor := map[string]float64{}
	for _, r := range rows {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Name, r.Err)
			continue
		}
		if r.Value <= 0 {
			t.Errorf("%s: %v ns, want > 0", r.Name, r.Value)
		}
		fam := r.Name[strings.LastIndex(r.Name, " ")+1:]
		if strings.HasPrefix(r.Name, "empty program") {
			floor[fam] = r.Value
		}
	}
	for _, r := range rows {
		fam := r.Name[strings.LastIndex(r.Name, " ")+1:]
		if strings.HasPrefix(r.Name, "fib + redirect, IPv") && r.Err == nil && r.Value <= floor[fam] {
			t.Errorf("%s: %v ns is not above the empty program's %v ns", r.Name, r.Value, floor[fam])
		}
	}
}
