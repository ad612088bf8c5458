package perpacket

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/test/harness/bench/topo"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestMeasure runs every case briefly in a real lab: each must take its intended path (the verdict and counter
// checks inside Measure turn a wrong path into a row error), and the forwarding cases cost more than the empty
// program.
func TestMeasure(t *testing.T) {
	l := lab.New(t)
	paths, err := topo.Build(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	rows := Measure(context.Background(), paths, Options{Samples: 2, Runs: 2000, Repeat: 200})
	if len(rows) != 13 {
		t.Fatalf("%d rows, want 13 (5 tc cases and the own cost x 2 families + XDP): %+v", len(rows), rows)
	}
	floor := map[string]float64{}
	for _, r := range rows {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Name, r.Err)
			continue
		}
		// The own cost is a difference of two timings some 20 ns apart whose per-round noise on a busy host is wider
		// than that: any sign is a measurement (TestOwnCost checks how it is taken). Every other row is a time.
		if r.Value <= 0 && !strings.HasPrefix(r.Name, "router's own cost") {
			t.Errorf("%s: %v ns, want > 0", r.Name, r.Value)
		}
		fam := r.Name[strings.LastIndex(r.Name, " ")+1:]
		if strings.HasPrefix(r.Name, "empty program") {
			floor[fam] = r.Value
		}
	}
	own := 0
	for _, r := range rows {
		fam := r.Name[strings.LastIndex(r.Name, " ")+1:]
		if strings.HasPrefix(r.Name, "fib + redirect, IPv") && r.Err == nil && r.Value <= floor[fam] {
			t.Errorf("%s: %v ns is not above the empty program's %v ns", r.Name, r.Value, floor[fam])
		}
		if strings.HasPrefix(r.Name, "router's own cost") {
			own++
			if r.Target.Bound != TargetOwnNs {
				t.Errorf("%s: target %+v, want <= %d ns", r.Name, r.Target, TargetOwnNs)
			}
		}
	}
	if own != 2 {
		t.Errorf("%d own-cost rows, want one per family", own)
	}
}

// TestOwnCost: the own cost is the median of per-round differences, not the difference of medians, and a failed
// case fails the row.
func TestOwnCost(t *testing.T) {
	tests := []struct {
		name        string
		fib, lookup sampled
		want        float64
		wantErr     bool
	}{
		// Medians 110 and 100 (difference 10); the rounds say 30, 5, 7: median 7.
		{"per round", sampled{samples: []float64{130, 110, 107}}, sampled{samples: []float64{100, 105, 100}}, 7, false},
		{"fib failed", sampled{err: errors.New("boom")}, sampled{samples: []float64{1}}, 0, true},
		{"lookup failed", sampled{samples: []float64{1}}, sampled{err: errors.New("boom")}, 0, true},
		{"unpaired", sampled{samples: []float64{1, 2}}, sampled{samples: []float64{1}}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ownCost("IPv4", tt.fib, tt.lookup)
			if (r.Err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", r.Err, tt.wantErr)
			}
			if !tt.wantErr && r.Value != tt.want {
				t.Errorf("value %v, want %v", r.Value, tt.want)
			}
		})
	}
}
