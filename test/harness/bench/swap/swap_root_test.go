package swap

import (
	"context"
	"testing"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestMeasureSmall(t *testing.T) {
	testreq.Root(t) // creating BPF maps
	rows := Measure(context.Background(), Options{Sizes: []int{10, 1000}, Swaps: 3})
	if len(rows) != 4 {
		t.Fatalf("%d rows, want p50 and p99 for 2 sizes", len(rows))
	}
	for _, r := range rows {
		if r.Err != nil || r.Value <= 0 {
			t.Errorf("%s: %v ms, %v", r.Name, r.Value, r.Err)
		}
	}
}
