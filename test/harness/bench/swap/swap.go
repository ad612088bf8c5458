// Package swap times pkg/maps Apply, the atomic generation swap of the router's tables, for small and large
// table sets. Every Apply writes a complete new generation, so each swap alternates between two table sets that
// differ in every entry: the worst case, nothing is a no-op.
package swap

import (
	"context"
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/bench/report"
	"github.com/network-operator/network-operator/test/harness/bench/stats"
)

// Section is the table's area for these rows.
const Section = "generation swap"

// TargetMs is the brief's goal for a 10k-entry swap.
const TargetMs = 50

// Options size the measurement.
type Options struct {
	Sizes []int // total entries per generation
	Swaps int   // swaps per size
}

// DefaultOptions: 10, 1k and 10k entries, 50 swaps each.
func DefaultOptions() Options { return Options{Sizes: []int{10, 1000, 10000}, Swaps: 50} }

// Tables returns a table set of n entries in total, spread over the three tables (interfaces 40%, redirects
// 40%, VRFs 20%, within the maps' limits); variant 0 and 1 differ in every entry.
func Tables(n, variant int) (maps.Tables, error) {
	nVRF := max(1, n/5)
	nRedir := n * 2 / 5
	nIface := n - nVRF - nRedir
	if nVRF >= maps.MaxVRFs || nIface > maps.MaxEntries || nRedir > maps.MaxEntries || nIface < 1 {
		return maps.Tables{}, fmt.Errorf("%d entries do not fit the router's tables", n)
	}
	var t maps.Tables
	for i := range nVRF {
		t.VRFs = append(t.VRFs, maps.VRF{ID: uint32(i + 1), TableID: uint32(1000 + i + variant*10000), VNI: uint32(i)})
	}
	for i := range nIface {
		t.Interfaces = append(t.Interfaces, maps.Interface{Ifindex: uint32(100 + i), VLAN: uint16(variant),
			VRF: uint32(i%nVRF + 1), Mode: maps.ModeRoute})
	}
	for i := range nRedir {
		t.Redirects = append(t.Redirects, maps.Redirect{Ifindex: uint32(100000 + i),
			EgressIfindex: uint32(200000 + i + variant)})
	}
	return t, t.Validate()
}

// Measure loads a private (unpinned) copy of the router's maps and times Apply for every size.
func Measure(ctx context.Context, o Options) []report.Row {
	spec, err := bpf.RouterSpec()
	if err != nil {
		return []report.Row{{Section: Section, Name: "all sizes", Err: err}}
	}
	for _, m := range spec.Maps {
		m.Pinning = ebpf.PinNone
	}
	var objs bpf.RouterMaps
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return []report.Row{{Section: Section, Name: "all sizes", Err: fmt.Errorf("load router maps: %w", err)}}
	}
	defer objs.Close()
	set, err := maps.New(&objs)
	if err != nil {
		return []report.Row{{Section: Section, Name: "all sizes", Err: err}}
	}
	var rows []report.Row
	for _, n := range o.Sizes {
		rows = append(rows, measureSize(ctx, set, n, o.Swaps)...)
	}
	return rows
}

func measureSize(ctx context.Context, set *maps.Set, n, swaps int) []report.Row {
	name := fmt.Sprintf("%s entries", count(n))
	p50 := report.Row{Section: Section, Name: name + ", p50", Unit: "ms"}
	p99 := report.Row{Section: Section, Name: name + ", p99", Unit: "ms"}
	if n >= 10000 {
		p99.Target = report.Target{Cmp: report.AtMost, Bound: TargetMs}
	}
	var variants [2]maps.Tables
	for v := range variants {
		t, err := Tables(n, v)
		if err != nil {
			p50.Err, p99.Err = err, err
			return []report.Row{p50, p99}
		}
		variants[v] = t
	}
	// One untimed swap first, so the first timed one replaces a generation of the same size.
	if _, err := set.Apply(ctx, variants[1], "warmup"); err != nil {
		p50.Err, p99.Err = err, err
		return []report.Row{p50, p99}
	}
	var total, read, write, grace, cleanup []time.Duration
	for i := range swaps {
		rep, err := set.Apply(ctx, variants[i%2], fmt.Sprintf("swap-%d-%d", n, i))
		if err != nil {
			p50.Err, p99.Err = err, err
			return []report.Row{p50, p99}
		}
		if rep.NoOp {
			err := fmt.Errorf("swap %d was a no-op", i)
			p50.Err, p99.Err = err, err
			return []report.Row{p50, p99}
		}
		total = append(total, rep.Duration)
		read = append(read, rep.Phases.Read)
		write = append(write, rep.Phases.Write)
		grace = append(grace, rep.Phases.Grace)
		cleanup = append(cleanup, rep.Phases.Cleanup)
	}
	ms := stats.Durations(total)
	p50.Value = stats.Median(ms)
	p99.Value = stats.Percentile(ms, 99)
	med := func(d []time.Duration) float64 { return stats.Median(stats.Durations(d)) }
	p50.Detail = fmt.Sprintf("%d swaps; medians: read+diff %.2f, write %.2f, RCU grace %.2f, delete old %.2f ms",
		swaps, med(read), med(write), med(grace), med(cleanup))
	p99.Detail = fmt.Sprintf("max %.2f ms", stats.Percentile(ms, 100))
	return []report.Row{p50, p99}
}

func count(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// Method explains the rows below the table.
const Method = "- generation swap: pkg/maps Apply on an unpinned copy of the router's maps; entries are spread 40% " +
	"interfaces, 40% redirects, 20% VRFs, and consecutive swaps differ in every entry. A swap writes the new " +
	"generation, flips `version`, waits one RCU grace period and deletes the old generation."
