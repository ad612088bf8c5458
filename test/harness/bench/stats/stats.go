// Package stats holds the order statistics the benchmark quotes (medians and percentiles of a few samples).
package stats

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0..100) of samples by linear interpolation between the closest
// ranks; NaN for no samples. The input is not modified.
func Percentile(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if p <= 0 {
		return s[0]
	}
	if p >= 100 {
		return s[len(s)-1]
	}
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	frac := rank - float64(lo)
	return s[lo] + (s[hi]-s[lo])*frac
}

// Median is the 50th percentile.
func Median(samples []float64) float64 { return Percentile(samples, 50) }

// Durations converts durations to float64 milliseconds, the unit the swap rows are quoted in.
func Durations(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}
