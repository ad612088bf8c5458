// Command bench prints the network-operator benchmark: BPF per-packet cost, iperf3 throughput of the kernel and
// eBPF paths with and without a kube-proxy-sized ruleset, generation swap times, the time of an FRR apply, the
// operator at scale (1000 simulated nodes against a real API server), pod Running -> interface up on a real
// kubelet node and one node at scale (the agent binary applying 1000 VRFs and 4000 interfaces, its memory and
// FRR's), in one markdown table that is also written to docs/bench.md. Run it as root through hack/bench.sh
// (`make bench`); `hack/bench.sh -only <sections> -merge` measures some sections and puts their rows into
// docs/bench.md, keeping the others.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/network-operator/network-operator/test/harness/bench/controlplane"
	"github.com/network-operator/network-operator/test/harness/bench/frrapply"
	"github.com/network-operator/network-operator/test/harness/bench/machine"
	"github.com/network-operator/network-operator/test/harness/bench/nodescale"
	"github.com/network-operator/network-operator/test/harness/bench/perpacket"
	"github.com/network-operator/network-operator/test/harness/bench/podstart"
	"github.com/network-operator/network-operator/test/harness/bench/report"
	"github.com/network-operator/network-operator/test/harness/bench/swap"
	"github.com/network-operator/network-operator/test/harness/bench/throughput"
	"github.com/network-operator/network-operator/test/harness/bench/topo"
	"github.com/network-operator/network-operator/test/harness/lab"
)

func main() {
	out := flag.String("out", "", "also write the result to this markdown file (e.g. docs/bench.md)")
	quick := flag.Bool("quick", false, "short runs (smoke test; figures are rough)")
	only := flag.String("only", "perpacket,throughput,swap,frr,controlplane,podstart,nodescale", "sections to run")
	operator := flag.String("operator", "", "the network-operator binary (section controlplane; hack/bench.sh builds it)")
	agent := flag.String("agent", "", "the network-agent binary (sections podstart, nodescale; hack/bench.sh builds it)")
	tcHook := flag.String("tc-hook", "", "section nodescale: the agent's --tc-hook (legacy: rows of a section of their own)")
	merge := flag.Bool("merge", false, "with -out: replace only the rows, notes and run description of the sections run, keep the others")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *out, *quick, strings.Split(*only, ","), *operator, *agent, *tcHook, *merge); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, quick bool, sections []string, operator, agent, tcHook string, merge bool) error {
	pp, tp, sw, fa := perpacket.DefaultOptions(), throughput.DefaultOptions(), swap.DefaultOptions(), frrapply.DefaultOptions()
	cp := controlplane.DefaultOptions()
	cp.Operator = operator
	ps := podstart.DefaultOptions()
	ps.Agent, ps.Log = agent, os.Stderr
	ns := nodescale.DefaultOptions()
	ns.Agent, ns.Log, ns.TCHook = agent, os.Stderr, tcHook
	if quick {
		ns.Scale.VRFs, ns.Resyncs = 100, 5
		ps.Pods = 5
		cp.Nodes, cp.Changes = 200, 2
		pp = perpacket.Options{Samples: 3, Runs: 20_000, Repeat: 200}
		tp = throughput.Options{Runs: 1, Duration: time.Second, Rules: 500}
		sw = swap.Options{Sizes: []int{10, 1000, 10000}, Swaps: 5}
		fa = frrapply.Options{Applies: 6}
	}
	var l *lab.Lab
	var paths topo.Paths
	if slices.Contains(sections, "perpacket") || slices.Contains(sections, "throughput") {
		var err error
		l, err = lab.Open(lab.WithLogf(func(f string, a ...any) { fmt.Fprintf(os.Stderr, "lab: "+f+"\n", a...) }))
		if err != nil {
			return err
		}
		// Namespaces and pin dirs go away on every exit, Ctrl-C included (the context is cancelled, runs stop).
		defer func() {
			start := time.Now()
			for _, err := range l.Close() {
				fmt.Fprintln(os.Stderr, "bench cleanup:", err)
			}
			fmt.Fprintf(os.Stderr, "bench: namespaces removed in %v\n", time.Since(start).Round(time.Millisecond))
		}()
		start := time.Now()
		if paths, err = topo.Build(ctx, l); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: namespaces ready in %v\n", time.Since(start).Round(time.Millisecond))
	}

	table := report.Table{
		Title:   "network-operator benchmark",
		Context: []string{"Measured " + machine.Describe(ctx) + ". Regenerate with `make bench`."},
	}
	if slices.Contains(sections, "perpacket") {
		fmt.Fprintln(os.Stderr, "bench: BPF_PROG_TEST_RUN per packet ...")
		start := time.Now()
		table.Rows = append(table.Rows, perpacket.Measure(ctx, paths, pp)...)
		fmt.Fprintf(os.Stderr, "bench: per packet done in %v\n", time.Since(start).Round(time.Millisecond))
		table.Notes = append(table.Notes, perpacket.Method)
	}
	if slices.Contains(sections, "throughput") {
		fmt.Fprintf(os.Stderr, "bench: iperf3, %d x %v per path ...\n", tp.Runs, tp.Duration)
		table.Rows = append(table.Rows, throughput.Measure(ctx, l, paths, tp)...)
		table.Notes = append(table.Notes, throughput.Method)
	}
	if slices.Contains(sections, "swap") {
		fmt.Fprintln(os.Stderr, "bench: generation swaps ...")
		table.Rows = append(table.Rows, swap.Measure(ctx, sw)...)
		table.Notes = append(table.Notes, swap.Method)
	}
	if slices.Contains(sections, "frr") {
		fmt.Fprintf(os.Stderr, "bench: FRR apply, %d applies ...\n", fa.Applies)
		start := time.Now()
		table.Rows = append(table.Rows, frrapply.Measure(ctx, fa)...)
		fmt.Fprintf(os.Stderr, "bench: FRR apply done in %v\n", time.Since(start).Round(time.Millisecond))
		table.Notes = append(table.Notes, frrapply.Method)
	}
	if slices.Contains(sections, "controlplane") {
		fmt.Fprintf(os.Stderr, "bench: control plane, %d nodes at %s, %d changes ...\n", cp.Nodes, cp.MaxUnavailable, cp.Changes)
		start := time.Now()
		table.Rows = append(table.Rows, controlplane.Measure(ctx, cp)...)
		fmt.Fprintf(os.Stderr, "bench: control plane done in %v\n", time.Since(start).Round(time.Millisecond))
		table.Notes = append(table.Notes, controlplane.Method)
	}
	if slices.Contains(sections, "podstart") {
		fmt.Fprintf(os.Stderr, "bench: pod Running -> interface up, %d pods on a kubelet node ...\n", ps.Pods)
		start := time.Now()
		table.Rows = append(table.Rows, podstart.Measure(ctx, ps)...)
		fmt.Fprintf(os.Stderr, "bench: pod network done in %v\n", time.Since(start).Round(time.Millisecond))
		table.Notes = append(table.Notes, podstart.Method)
	}
	if slices.Contains(sections, "nodescale") {
		fmt.Fprintf(os.Stderr, "bench: one node, %d VRFs and %d interfaces, the agent binary ...\n", ns.Scale.VRFs, ns.Scale.Interfaces())
		start := time.Now()
		table.Rows = append(table.Rows, nodescale.Measure(ctx, ns)...)
		fmt.Fprintf(os.Stderr, "bench: node scale done in %v\n", time.Since(start).Round(time.Millisecond))
		table.Notes = append(table.Notes, nodescale.MethodFor(tcHook))
	}
	table.Notes = append(table.Notes, "- Targets are goals shown next to the figures, never asserted.")
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted, nothing written: %w", err)
	}
	md := table.Markdown()
	if merge && out != "" {
		// The run's description names the sections it measured; the full run's stays above it.
		what, flags := strings.Join(sections, ", "), "-only "+strings.Join(sections, ",")
		if tcHook != "" { // a section of its own (nodescale.SectionOf): its own description
			what, flags = what+" -tc-hook "+tcHook, flags+" -tc-hook "+tcHook
		}
		table.Context = []string{what + " rows: measured " + machine.Describe(ctx) + " with `" + flags + " -merge`."}
		existing, err := os.ReadFile(out)
		if err != nil {
			return fmt.Errorf("-merge: %w", err)
		}
		if md, err = report.Merge(string(existing), table); err != nil {
			return err
		}
	}
	fmt.Print(md)
	if out != "" && quick {
		fmt.Fprintln(os.Stderr, "bench: -quick figures are rough;", out, "left unchanged")
	}
	if out != "" && !quick {
		if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", out, err)
		}
		fmt.Fprintln(os.Stderr, "bench: wrote", out)
	}
	return nil
}
