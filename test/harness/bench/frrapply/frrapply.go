// Package frrapply times pkg/frr/frrreload's Reloader applying a change that touches FRR to real zebra + bgpd: what the
// agent does on every node when a revision changes an export prefix. The change is one prefix-list line, added
// and removed alternately, so every apply validates and reloads (none is skipped as unchanged).
package frrapply

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
	"github.com/network-operator/network-operator/test/harness/bench/report"
	"github.com/network-operator/network-operator/test/harness/bench/stats"
)

// Section is the table's area for these rows.
const Section = "FRR apply"

// Targets of issue 14 (target 1), in milliseconds.
const (
	TargetP50Ms = 500
	TargetP99Ms = 1000
)

// changedPrefix is the export prefix the change adds to tenant-a (as the demo's change does).
const changedPrefix = "10.250.0.0/16"

// Options size the measurement.
type Options struct {
	Applies int // timed applies, alternating between the two configs
	// FRR is the FRR measured: the shipped one (the FRR image's root file system).
	FRR frrproc.Tools
}

// DefaultOptions: 40 applies of the FRR that ships ($NETOP_FRR_ROOT, from make frr-root).
func DefaultOptions() Options {
	return Options{Applies: 40, FRR: frrproc.Tools{Root: os.Getenv(frrproc.EnvRoot)}}
}

// NodeConfig is a node of the demo: an iBGP underlay to a route reflector, two tenant VRFs with L3VNIs, two
// L2VNIs each, leaking both ways with the cluster VRF. changed adds the export prefix of the demo's change.
func NodeConfig(changed bool) frr.NodeConfig {
	p := netip.MustParsePrefix
	tenant := func(name string, vni uint32, imp string) frr.VRF {
		return frr.VRF{Name: name, VNI: vni, RouteTargets: []string{fmt.Sprintf("65000:%d", vni)}, RedistributeConnected: true,
			RouteConfigs: []frr.RouteConfig{{Seq: 10,
				Import:      []frr.PrefixItem{{CIDR: p(imp), LE: 32, Action: frr.Permit}},
				Export:      []frr.PrefixItem{{CIDR: p("10.96.0.0/12"), Action: frr.Permit}},
				Communities: []string{fmt.Sprintf("65000:%d", vni)},
			}}}
	}
	a, b := tenant("vr.tenant-a", 2001, "10.100.0.0/15"), tenant("vr.tenant-b", 2002, "10.200.0.0/15")
	if changed {
		a.RouteConfigs[0].Export = append(a.RouteConfigs[0].Export, frr.PrefixItem{CIDR: p(changedPrefix), Action: frr.Permit})
	}
	vtep := netip.MustParseAddr("10.0.0.1")
	return frr.NodeConfig{
		Underlay: frr.Underlay{ASN: 65000, RouterID: vtep, VTEPSource: vtep,
			PeerGroups: []frr.PeerGroup{{Name: "fabric", RemoteAS: frr.RemoteASInternal}},
			Neighbors:  []frr.Neighbor{{Address: netip.MustParseAddr("192.168.0.254"), PeerGroup: "fabric"}},
		},
		L2VNIs: []frr.L2VNI{{VNI: 100100}, {VNI: 100101}, {VNI: 100200}, {VNI: 100201}},
		VRFs:   []frr.VRF{a, b},
	}
}

// Measure starts zebra + bgpd in a namespace of their own, applies the base config once (untimed) and then times
// o.Applies applies of the changed and the base config in turn.
func Measure(ctx context.Context, o Options) []report.Row {
	p50 := report.Row{Section: Section, Name: "one-line change, one node, p50", Unit: "ms",
		Target: report.Target{Cmp: report.AtMost, Bound: TargetP50Ms}}
	p99 := report.Row{Section: Section, Name: "one-line change, one node, p99", Unit: "ms",
		Target: report.Target{Cmp: report.AtMost, Bound: TargetP99Ms}}
	fail := func(err error) []report.Row {
		p50.Err, p99.Err = err, err
		return []report.Row{p50, p99}
	}
	if o.FRR.Host() {
		return fail(fmt.Errorf("no FRR root file system (set %s; make frr-root builds it)", frrproc.EnvRoot))
	}
	if err := o.FRR.CheckDaemons(); err != nil {
		return fail(err)
	}
	var configs [2][]byte
	for i := range configs {
		c := NodeConfig(i == 1)
		out, err := frr.Render(&c)
		if err != nil {
			return fail(err)
		}
		configs[i] = out
	}
	totals, steps, err := run(ctx, o.FRR, configs, o.Applies)
	if err != nil {
		return fail(err)
	}
	ms := stats.Durations(totals)
	p50.Value = stats.Median(ms)
	p99.Value = stats.Percentile(ms, 99)
	var med []string
	for _, s := range steps {
		med = append(med, fmt.Sprintf("%s %.0f", s.name, stats.Median(stats.Durations(s.took))))
	}
	p50.Detail = fmt.Sprintf("%d applies; medians per apply: %s ms", len(totals), strings.Join(med, ", "))
	p99.Detail = fmt.Sprintf("max %.0f ms", stats.Percentile(ms, 100))
	return []report.Row{p50, p99}
}

// stepTimes is one step's time per timed apply (0 where an apply did not run it).
type stepTimes struct {
	name string
	took []time.Duration
}

func run(ctx context.Context, tools frrproc.Tools, configs [2][]byte, applies int) (totals []time.Duration, steps []stepTimes, err error) {
	ns, err := frrproc.NewNetns(ctx, "frrbench-")
	if err != nil {
		return nil, nil, err
	}
	defer func() { err = errors.Join(err, ns.Delete(context.WithoutCancel(ctx))) }()
	in, err := frrproc.Start(ctx, frrproc.Options{Tools: tools, Netns: ns.Name})
	if err != nil {
		return nil, nil, err
	}
	defer func() { err = errors.Join(err, in.Stop()) }()
	stateDir, err := os.MkdirTemp("", "frrbench-state-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(stateDir)
	rel, err := frrreload.NewReloader(frrreload.Options{Target: frrvty.Target{VtySocket: in.Dir, ConfDir: in.ConfDir,
		Tools: frrproc.Tools{Root: tools.Root, Binds: []string{stateDir}}}, StateDir: stateDir})
	if err != nil {
		return nil, nil, err
	}
	defer func() { err = errors.Join(err, rel.Close()) }()
	if _, err := rel.Apply(ctx, configs[0]); err != nil {
		return nil, nil, fmt.Errorf("first apply: %w", err)
	}
	index := map[string]int{}
	for i := range applies {
		cfg := configs[(i+1)%2]
		start := time.Now()
		res, err := rel.Apply(ctx, cfg)
		took := time.Since(start)
		if err != nil {
			return nil, nil, fmt.Errorf("apply %d: %w", i, err)
		}
		if err := checkChange(res); err != nil {
			return nil, nil, fmt.Errorf("apply %d: %w", i, err)
		}
		totals = append(totals, took)
		for _, s := range res.Steps {
			j, ok := index[s.Name]
			if !ok {
				j = len(steps)
				index[s.Name] = j
				steps = append(steps, stepTimes{name: s.Name})
			}
			for len(steps[j].took) < len(totals) {
				steps[j].took = append(steps[j].took, 0)
			}
			steps[j].took[len(totals)-1] += s.Took
		}
	}
	for j := range steps { // applies after a step's last occurrence did not run it
		for len(steps[j].took) < len(totals) {
			steps[j].took = append(steps[j].took, 0)
		}
	}
	return totals, steps, nil
}

// checkChange makes sure an apply did the change: one significant line, the changed prefix, and nothing left.
func checkChange(res frrreload.Result) error {
	sig := res.Diff.Significant()
	if res.Skipped || len(sig) != 1 || !strings.Contains(sig[0], changedPrefix) {
		return fmt.Errorf("want exactly the change of %s, got skipped=%v, diff %q", changedPrefix, res.Skipped, sig)
	}
	if len(res.Residual) > 0 {
		return fmt.Errorf("FRR still differs after the reload: %q", res.Residual)
	}
	if !slices.ContainsFunc(res.Steps, func(s frrreload.Step) bool { return s.Took > 0 }) {
		return errors.New("the apply reported no timed steps")
	}
	return nil
}

// Method explains the rows below the table.
const Method = "- FRR apply: pkg/frr/frrreload's Reloader (what the agent runs) against zebra + bgpd started in a namespace of " +
	"their own; the config is a demo node's (iBGP underlay, two tenant VRFs with L3VNIs and leaks, four L2VNIs) and " +
	"each apply adds or removes the demo change's export prefix (one prefix-list line), so none is skipped. Each " +
	"apply is timed from the rendered config to the Reloader's return: validation, reload and the check that FRR " +
	"runs the config. The Reloader keeps its scratch instance between applies, as the agent's does (the untimed " +
	"first apply starts it). The steps are the Reloader's own timings, medians per apply; some run concurrently."
