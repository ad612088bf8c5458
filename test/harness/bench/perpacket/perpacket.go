// Package perpacket measures the router's cost per packet with BPF_PROG_TEST_RUN inside the benchmark's eBPF
// router namespace, where the ingress devices, the VRF table and the neighbours are real, so bpf_fib_lookup does
// the same work as for live traffic. Every case checks the program's verdict and that the expected counter grew
// by the number of runs: a figure is only reported for the path it claims to measure.
package perpacket

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/bench/progrun"
	"github.com/network-operator/network-operator/test/harness/bench/report"
	"github.com/network-operator/network-operator/test/harness/bench/stats"
	"github.com/network-operator/network-operator/test/harness/bench/topo"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// Section is the table's area for these rows.
const Section = "BPF per packet"

// Options size the measurement.
type Options struct {
	Samples int // medians are taken over this many samples per case
	Runs    int // runs per sample
	Repeat  int // runs per syscall (TTL 255 allows up to ~250)
}

// DefaultOptions give steady figures in about a second per case.
func DefaultOptions() Options { return Options{Samples: 15, Runs: 200_000, Repeat: 200} }

// Return values the cases expect.
const (
	tcActUnspec   = 0xffffffff // TC_ACT_UNSPEC (-1): passed on to the kernel
	tcActRedirect = 7
	xdpRedirect   = 4
)

// TargetOwnNs is the goal for the router's own cost per forwarded packet: fib + redirect minus the kernel's
// bpf_fib_lookup alone, which no router code can remove.
const TargetOwnNs = 20

type testCase struct {
	name   string
	prog   *ebpf.Program
	frame  []byte
	ctx    []byte
	ret    uint32
	reason maps.Reason // counter that must grow by every run; NumReasons for the floor program
	vrf    uint32
	detail string
	// runsDivisor shrinks the run count: XDP test runs re-patch the kernel's XDP dispatcher around every
	// syscall with repeat > 1 (milliseconds each), so they get fewer runs.
	runsDivisor int
}

// Measure runs every case in the eBPF router namespace of p and returns one row per case.
func Measure(ctx context.Context, p topo.Paths, o Options) []report.Row {
	var rows []report.Row
	err := p.EBPFRouter.Do(func() error {
		var err error
		rows, err = measureHere(ctx, p, o)
		return err
	})
	if err != nil {
		return []report.Row{{Section: Section, Name: "all cases", Err: err}}
	}
	return rows
}

// measureHere runs on a thread inside the router namespace: BPF_PROG_TEST_RUN resolves ifindexes there.
func measureHere(ctx context.Context, p topo.Paths, o Options) ([]report.Row, error) {
	spec, err := bpf.RouterSpec()
	if err != nil {
		return nil, err
	}
	for _, m := range spec.Maps {
		m.Pinning = ebpf.PinNone // a private copy: the attached router's pins stay untouched
	}
	var objs bpf.RouterObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, fmt.Errorf("load router: %w", err)
	}
	defer objs.Close()
	var floor bpf.FloorObjects
	if err := bpf.LoadFloorObjects(&floor, nil); err != nil {
		return nil, fmt.Errorf("load floor program: %w", err)
	}
	defer floor.Close()

	dev := func(ns *lab.Netns, name string) (*net.Interface, error) {
		l, err := ns.Link(name)
		if err != nil {
			return nil, err
		}
		return &net.Interface{Index: l.Attrs().Index, Name: name, HardwareAddr: l.Attrs().HardwareAddr}, nil
	}
	in, err := dev(p.EBPFRouter, topo.In)
	if err != nil {
		return nil, err
	}
	out, err := dev(p.EBPFRouter, topo.Out)
	if err != nil {
		return nil, err
	}
	lookup, err := dev(p.EBPFRouter, topo.Lookup)
	if err != nil {
		return nil, err
	}
	client, err := dev(p.EBPFClient, "eth0")
	if err != nil {
		return nil, err
	}
	server, err := dev(p.EBPFServer, "eth0")
	if err != nil {
		return nil, err
	}

	const vrf = 1
	set, err := maps.New(&objs.RouterMaps)
	if err != nil {
		return nil, err
	}
	// ra routes through table 100; packets arriving on rb are redirected back out of ra (redirect mode).
	tables := maps.Tables{
		VRFs: []maps.VRF{{ID: vrf, TableID: topo.Table, LookupIfindex: uint32(lookup.Index)}},
		Interfaces: []maps.Interface{
			{Ifindex: uint32(in.Index), VRF: vrf, Mode: maps.ModeRoute},
			{Ifindex: uint32(out.Index), VRF: vrf, Mode: maps.ModeRedirect},
		},
		Redirects: []maps.Redirect{{Ifindex: uint32(out.Index), EgressIfindex: uint32(in.Index),
			SrcMAC: maps.MAC(in.HardwareAddr), DstMAC: maps.MAC(client.HardwareAddr)}},
	}
	if _, err := set.Apply(ctx, tables, "bench"); err != nil {
		return nil, fmt.Errorf("apply benchmark tables: %w", err)
	}

	var cases []testCase
	for _, fam := range []struct {
		label    string
		src, dst netip.Addr
	}{{"IPv4", topo.Client4, topo.Server4}, {"IPv6", topo.Client6, topo.Server6}} {
		toRouter := udpFrame(in.HardwareAddr, client.HardwareAddr, fam.src, fam.dst, 18)
		toRB := udpFrame(out.HardwareAddr, server.HardwareAddr, fam.dst, fam.src, 18)
		toLookup := udpFrame(lookup.HardwareAddr, client.HardwareAddr, fam.src, fam.dst, 18)
		fibOnly, err := fibOnlyProgram(fam.src, fam.dst, uint32(lookup.Index), topo.Table)
		if err != nil {
			return nil, fmt.Errorf("load fib-only program: %w", err)
		}
		defer fibOnly.Close()
		cases = append(cases,
			testCase{name: "empty program (floor), " + fam.label, prog: floor.TcPass, frame: toRouter,
				ctx: progrun.SkbContext(uint32(in.Index)), ret: tcActUnspec, reason: maps.Reason(maps.NumReasons),
				detail: "test-run overhead; the other rows include it"},
			testCase{name: "miss (interface not in tables), " + fam.label, prog: objs.TcRouter, frame: toLookup,
				ctx: progrun.SkbContext(uint32(lookup.Index)), ret: tcActUnspec, reason: maps.ReasonPassedNoIface, vrf: 0,
				detail: "passed to the kernel"},
			testCase{name: "redirect (redirect mode, MAC rewrite), " + fam.label, prog: objs.TcRouter, frame: toRB,
				ctx: progrun.SkbContext(uint32(out.Index)), ret: tcActRedirect, reason: maps.ReasonRedirected, vrf: vrf},
			testCase{name: "bpf_fib_lookup alone, " + fam.label, prog: fibOnly, frame: toRouter,
				ctx: progrun.SkbContext(uint32(in.Index)), ret: 0, reason: maps.Reason(maps.NumReasons),
				detail: "the kernel's lookup the router makes, nothing else"},
			testCase{name: "fib + redirect, " + fam.label, prog: objs.TcRouter, frame: toRouter,
				ctx: progrun.SkbContext(uint32(in.Index)), ret: tcActRedirect, reason: maps.ReasonForwardedFib, vrf: vrf},
		)
		if fam.label == "IPv4" {
			cases = append(cases, testCase{name: "fib + redirect, XDP, IPv4", prog: objs.XdpRouter, frame: toRouter,
				ctx: progrun.XDPContext(uint32(len(toRouter)), uint32(in.Index)), ret: xdpRedirect,
				reason: maps.ReasonForwardedFib, vrf: vrf, detail: "for comparison; tc is the main hook", runsDivisor: 20})
		}
	}

	return measureCases(ctx, set, cases, o), nil
}

// sampled is one case's measurement so far.
type sampled struct {
	before  uint64
	samples []float64
	runs    int
	err     error
}

// measureCases takes the samples of all cases in rounds, one sample of every case per round, so that a change
// of the machine's load between rounds moves every case alike and the differences between cases taken in the
// same round stay meaningful. It returns one row per case, each own-cost row right after its fib + redirect row.
func measureCases(ctx context.Context, set *maps.Set, cases []testCase, o Options) []report.Row {
	st := make([]sampled, len(cases))
	for i, c := range cases {
		st[i].before, st[i].err = counter(set, c.vrf, c.reason)
	}
	for range o.Samples {
		for i, c := range cases {
			if st[i].err != nil {
				continue
			}
			if err := ctx.Err(); err != nil {
				st[i].err = err
				continue
			}
			res, err := progrun.Run(c.prog, c.frame, c.ctx, o.Repeat, c.runsPerSample(o))
			switch {
			case err != nil:
				st[i].err = err
			case res.Ret != c.ret:
				st[i].err = fmt.Errorf("program returned %#x, want %#x: not the path this row measures", res.Ret, c.ret)
			default:
				st[i].samples = append(st[i].samples, float64(res.PerRun)/float64(time.Nanosecond))
				st[i].runs += res.Runs
			}
		}
	}
	for i, c := range cases {
		if st[i].err != nil || c.reason >= maps.Reason(maps.NumReasons) {
			continue
		}
		if after, err := counter(set, c.vrf, c.reason); err != nil {
			st[i].err = err
		} else if after-st[i].before < uint64(st[i].runs) {
			st[i].err = fmt.Errorf("counter %s of VRF %d grew by %d, want %d: not the path this row measures",
				c.reason, c.vrf, after-st[i].before, st[i].runs)
		}
	}

	lookupOf := map[string]int{} // family -> index of its "bpf_fib_lookup alone" case
	for i, c := range cases {
		if fam, ok := strings.CutPrefix(c.name, lookupAlone); ok {
			lookupOf[fam] = i
		}
	}
	rows := make([]report.Row, 0, len(cases)+len(lookupOf))
	for i, c := range cases {
		row := report.Row{Section: Section, Name: c.name, Unit: "ns", Err: st[i].err}
		if row.Err == nil {
			row.Value = stats.Median(st[i].samples)
			row.Detail = fmt.Sprintf("median of %d x %s runs (%.1f-%.1f)", o.Samples, thousands(c.runsPerSample(o)),
				stats.Percentile(st[i].samples, 0), stats.Percentile(st[i].samples, 100))
			if c.detail != "" {
				row.Detail = c.detail + "; " + row.Detail
			}
		}
		rows = append(rows, row)
		if fam, ok := strings.CutPrefix(c.name, fibRedirect); ok {
			if j, ok := lookupOf[fam]; ok {
				rows = append(rows, ownCost(fam, st[i], st[j]))
			}
		}
	}
	return rows
}

// Case names the own-cost rows are computed from: the prefix, then the family ("IPv4").
const (
	fibRedirect = "fib + redirect, "
	lookupAlone = "bpf_fib_lookup alone, "
)

// ownCost is the router's own cost per forwarded packet for one family: per round, its fib + redirect sample
// minus the lookup-alone sample taken next to it (both include the test-run floor, which cancels), and the
// median of those differences.
func ownCost(fam string, fib, lookup sampled) report.Row {
	row := report.Row{Section: Section, Name: "router's own cost (fib + redirect - lookup alone), " + fam, Unit: "ns",
		Target: report.Target{Cmp: report.AtMost, Bound: TargetOwnNs}}
	switch {
	case fib.err != nil:
		row.Err = fmt.Errorf("fib + redirect: %w", fib.err)
		return row
	case lookup.err != nil:
		row.Err = fmt.Errorf("bpf_fib_lookup alone: %w", lookup.err)
		return row
	case len(fib.samples) != len(lookup.samples) || len(fib.samples) == 0:
		row.Err = fmt.Errorf("%d fib + redirect samples, %d lookup-alone samples: not pairs of one round",
			len(fib.samples), len(lookup.samples))
		return row
	}
	diffs := make([]float64, len(fib.samples))
	for i := range diffs {
		diffs[i] = fib.samples[i] - lookup.samples[i]
	}
	row.Value = stats.Median(diffs)
	row.Detail = fmt.Sprintf("%.0f - %.0f ns (the medians above); median of %d differences of samples taken side "+
		"by side (%.1f-%.1f)", stats.Median(fib.samples), stats.Median(lookup.samples), len(diffs),
		stats.Percentile(diffs, 0), stats.Percentile(diffs, 100))
	return row
}

// runsPerSample is the runs of one sample of c.
func (c testCase) runsPerSample(o Options) int {
	if c.runsDivisor > 1 {
		return max(o.Repeat, o.Runs/c.runsDivisor)
	}
	return o.Runs
}

func counter(set *maps.Set, vrf uint32, r maps.Reason) (uint64, error) {
	cs, err := set.Counters()
	if err != nil {
		return 0, err
	}
	for _, c := range cs {
		if c.VRF == vrf {
			return c.ByReason[r].Packets, nil
		}
	}
	return 0, nil
}

// Method explains the rows below the table.
const Method = "- BPF per packet: BPF_PROG_TEST_RUN of the router inside the benchmark's router namespace (real devices, " +
	"VRF table and neighbours), a 60-byte UDP frame, kernel-measured time per run; batches of 200 repeats start " +
	"from TTL 255 so every repeat forwards. Each row checks the verdict and that the expected counter grew by " +
	"every run. Samples are taken in rounds, one of every case per round, so load drift moves all cases alike. The " +
	"empty program is the test-run floor included in every other row; \"bpf_fib_lookup alone\" is a program that " +
	"makes only the router's FIB lookup (same flags, table, flow): the share of fib + redirect that no router code " +
	"can remove. The router's own cost is the median over rounds of fib + redirect minus the lookup alone of the " +
	"same round."

func thousands(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
