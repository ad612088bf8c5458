package stats

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		p       float64
		want    float64
	}{
		{"odd median", []float64{5, 1, 3}, 50, 3},
		{"even median interpolates", []float64{4, 1, 3, 2}, 50, 2.5},
		{"p99 of 1..100", seq(100), 99, 99.01},
		{"p0 is min", []float64{7, 2, 9}, 0, 2},
		{"p100 is max", []float64{7, 2, 9}, 100, 9},
		{"single sample", []float64{42}, 99, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Percentile(tt.samples, tt.p)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("Percentile(%v, %v) = %v, want %v", tt.samples, tt.p, got, tt.want)
			}
		})
	}
}

func TestPercentileEmptyIsNaN(t *testing.T) {
	if got := Median(nil); !math.IsNaN(got) {
		t.Fatalf("Median(nil) = %v, want NaN", got)
	}
}

func TestPercentileDoesNotReorderInput(t *testing.T) {
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Fatalf("input reordered: %v", in)
	}
}

func TestDurations(t *testing.T) {
	got := Durations([]time.Duration{1500 * time.Microsecond, 2 * time.Second})
	if got[0] != 1.5 || got[1] != 2000 {
		t.Fatalf("Durations = %v, want [1.5 2000]", got)
	}
}

func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i + 1)
	}
	return s
}
