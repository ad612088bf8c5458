package swap

import (
	"context"
	"os"
	"testing"
)

func TestMeasureSmall(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating BPF maps needs root")
	}
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
