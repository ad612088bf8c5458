package report

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/network-operator/network-operator/test/harness/golden"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		name string
		row  Row
		want string
	}{
		{"no target", Row{Value: 5}, ""},
		{"at most met", Row{Value: 60, Target: Target{AtMost, 60}}, "met"},
		{"at most missed", Row{Value: 60.1, Target: Target{AtMost, 60}}, "MISSED"},
		{"at least met", Row{Value: 1.5, Target: Target{AtLeast, 1.5}}, "met"},
		{"at least missed", Row{Value: 0.9, Target: Target{AtLeast, 1}}, "MISSED"},
		{"error", Row{Err: errors.New("boom"), Target: Target{AtLeast, 1}}, "not measured"},
		{"NaN", Row{Value: math.NaN(), Target: Target{AtMost, 1}}, "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.row.Status(); got != tt.want {
				t.Fatalf("Status() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{42.345, "ns", "42.3 ns"},
		{4.2345, "ms", "4.23 ms"},
		{1234.5, "ns", "1234 ns"},
		{1.5, "x", "1.50x"},
		{9.61, "Gbit/s", "9.61 Gbit/s"},
		{3, "", "3.00"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestMarkdownGolden(t *testing.T) {
	table := Table{
		Title:   "Benchmark",
		Context: []string{"kernel 6.18, 2 CPUs"},
		Rows: []Row{
			{Section: "BPF per packet", Name: "empty program (floor), IPv4", Value: 7.91, Unit: "ns"},
			{Section: "BPF per packet", Name: "fib + redirect, IPv4", Value: 48.2, Unit: "ns", Target: Target{AtMost, 60}},
			{Section: "BPF per packet", Name: "fib + redirect, IPv6", Value: 71, Unit: "ns", Target: Target{AtMost, 60}},
			{Section: "iperf3 TCP", Name: "eBPF / kernel", Value: 1.02, Unit: "x", Target: Target{AtLeast, 1}, Detail: "same run"},
			{Section: "iperf3 TCP", Name: "eBPF tc", Err: errors.New("iperf3: connection | refused"), Target: Target{AtLeast, 1}},
		},
		Notes: []string{"- method note"},
	}
	got := table.Markdown()
	golden.Assert(t, filepath.Join("testdata", "table.md"), []byte(got))
}
