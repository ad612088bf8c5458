// Package throughput measures TCP throughput with iperf3 along the benchmark's three paths (direct veth, kernel
// forwarding, eBPF tc router), first bare, then with a kube-proxy-sized netfilter ruleset and conntrack in both
// router namespaces. Runs of the different paths are interleaved, so machine noise hits all of them alike, and
// ratios are taken from medians of the same run.
package throughput

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/agent/bpftables"
	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/bench/netfilter"
	"github.com/network-operator/network-operator/test/harness/bench/report"
	"github.com/network-operator/network-operator/test/harness/bench/stats"
	"github.com/network-operator/network-operator/test/harness/bench/topo"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// Section is the table's area for these rows.
const Section = "iperf3 TCP"

// Targets from the brief.
const (
	TargetRatio      = 1.0
	TargetRatioRules = 1.5
)

// Options size the measurement.
type Options struct {
	Runs     int           // iperf3 runs, and small-packet runs, per path and phase
	Duration time.Duration // length of one iperf3 run
	Rules    int           // size of the netfilter ruleset
	// SmallDuration is the length of one small-packet run (0: a third of Duration, at least 300 ms).
	SmallDuration time.Duration
	// Flows is the number of UDP flows of the small-packet runs (0: 16).
	Flows int
}

// DefaultOptions: 5 runs of 3 s (iperf3) and 1 s (small packets, 16 flows), 5000 rules.
func DefaultOptions() Options {
	return Options{Runs: 5, Duration: 3 * time.Second, Rules: 5000, SmallDuration: time.Second, Flows: defaultFlows}
}

func (o Options) smallDuration() time.Duration {
	if o.SmallDuration > 0 {
		return o.SmallDuration
	}
	return max(o.Duration/3, 300*time.Millisecond)
}

func (o Options) flows() int {
	if o.Flows > 0 {
		return o.Flows
	}
	return defaultFlows
}

type path struct {
	name           string
	client, server *lab.Netns
	addr           netip.Addr
	samples        []float64 // Gbit/s
	errs           []error
}

func (p *path) run(ctx context.Context, d time.Duration) {
	res, err := lab.Iperf3(ctx, p.server, p.client, p.addr, lab.IperfOptions{Duration: d})
	if err != nil {
		p.errs = append(p.errs, err)
		return
	}
	p.samples = append(p.samples, res.BitsPerSecond/1e9)
}

func (p *path) row(detail string) report.Row {
	r := report.Row{Section: Section, Name: p.name, Unit: "Gbit/s"}
	if len(p.samples) == 0 {
		r.Err = errors.Join(p.errs...)
		if r.Err == nil {
			r.Err = errors.New("no run")
		}
		return r
	}
	r.Value = stats.Median(p.samples)
	r.Detail = fmt.Sprintf("median of %d (%.2f-%.2f)", len(p.samples), stats.Percentile(p.samples, 0), stats.Percentile(p.samples, 100))
	if len(p.errs) > 0 {
		r.Detail += fmt.Sprintf(", %d failed runs: %v", len(p.errs), p.errs[0])
	}
	if detail != "" {
		r.Detail = detail + "; " + r.Detail
	}
	return r
}

func ratio(section, name string, num, den report.Row, target float64, detail string) report.Row {
	r := report.Row{Section: section, Name: name, Unit: "x", Detail: detail}
	if target > 0 {
		r.Target = report.Target{Cmp: report.AtLeast, Bound: target}
	}
	switch {
	case num.Err != nil:
		r.Err = fmt.Errorf("%s not measured", num.Name)
	case den.Err != nil:
		r.Err = fmt.Errorf("%s not measured", den.Name)
	default:
		r.Value = num.Value / den.Value
	}
	return r
}

// Measure attaches the router in the eBPF path's namespace and runs every phase: iperf3 and small packets bare,
// then both with the ruleset. The small-packet rows come after the iperf3 rows (their own section).
func Measure(ctx context.Context, l *lab.Lab, p topo.Paths, o Options) []report.Row {
	fail := func(err error) []report.Row { return []report.Row{{Section: Section, Name: "all paths", Err: err}} }
	set, xdpRouter, err := attachRouter(ctx, l, p)
	if err != nil {
		return fail(err)
	}
	defer set.Close()
	defer xdpRouter.Close()
	direct := &path{name: "direct veth, no router (the limit)", client: p.DirectClient, server: p.DirectServer, addr: topo.DirectServer}
	kernel := &path{name: "kernel forwarding", client: p.KernelClient, server: p.KernelServer, addr: topo.Server4}
	ebpf := &path{name: "eBPF tc router", client: p.EBPFClient, server: p.EBPFServer, addr: topo.Server4}
	for _, pa := range []*path{direct, kernel, ebpf} {
		if err := reachable(ctx, pa); err != nil {
			return fail(err)
		}
	}
	routes, err := routeTables(p)
	if err != nil {
		return fail(err)
	}
	reason, err := routedReason(p, routes) // client -> server, the bulk of the stream
	if err != nil {
		return fail(err)
	}
	fwdBefore, err := forwarded(set, reason)
	if err != nil {
		return fail(err)
	}
	for range o.Runs {
		for _, pa := range []*path{direct, kernel, ebpf} {
			if ctx.Err() != nil {
				return fail(ctx.Err())
			}
			pa.run(ctx, o.Duration)
		}
	}
	fwdAfter, err := forwarded(set, reason)
	if err != nil {
		return fail(err)
	}
	ebpfDetail := fmt.Sprintf("%d packets counted as %s", fwdAfter-fwdBefore, reason)
	if len(ebpf.samples) > 0 && fwdAfter-fwdBefore < 1000 {
		ebpf.errs = append(ebpf.errs, fmt.Errorf("only %d packets forwarded by the router", fwdAfter-fwdBefore))
		ebpf.samples = nil
	}
	rDirect, rKernel, rEBPF := direct.row(""), kernel.row(""), ebpf.row(ebpfDetail)
	rows := []report.Row{rDirect, rKernel, rEBPF,
		ratio(Section, "eBPF / kernel", rEBPF, rKernel, TargetRatio, "same run"),
		ratio(Section, "eBPF / direct", rEBPF, rDirect, 0, "same run"),
	}
	small := smallRows(ctx, p, set, xdpRouter, o, 0, "", 0)

	rulesSuffix := fmt.Sprintf(" + %d rules", o.Rules)
	ruleset, layout, err := netfilter.Ruleset(netfilter.Spec{Rules: o.Rules, ServiceCIDR: netfilter.DefaultSpec().ServiceCIDR})
	if err == nil {
		for _, ns := range []*lab.Netns{p.KernelRouter, p.EBPFRouter} {
			if err = restore(ctx, ns, ruleset); err != nil {
				break
			}
		}
	}
	if err != nil {
		return append(append(rows, report.Row{Section: Section, Name: "with ruleset", Err: err}),
			append(small, report.Row{Section: SectionSmall, Name: "with ruleset", Err: err})...)
	}
	kernelR := &path{name: "kernel forwarding" + rulesSuffix, client: kernel.client, server: kernel.server, addr: kernel.addr}
	ebpfR := &path{name: "eBPF tc router" + rulesSuffix, client: ebpf.client, server: ebpf.server, addr: ebpf.addr}
	for range o.Runs {
		for _, pa := range []*path{kernelR, ebpfR} {
			if ctx.Err() != nil {
				return append(rows, report.Row{Section: Section, Name: "with ruleset", Err: ctx.Err()})
			}
			pa.run(ctx, o.Duration)
		}
	}
	rKernelR := kernelR.row(layout.String() + "; conntrack entries after: " + conntrackCount(ctx, p.KernelRouter))
	rEBPFR := ebpfR.row("same rules in the router namespace; conntrack entries after: " + conntrackCount(ctx, p.EBPFRouter))
	rows = append(rows, rKernelR, rEBPFR,
		ratio(Section, fmt.Sprintf("eBPF / kernel, %d rules", o.Rules), rEBPFR, rKernelR, TargetRatioRules, "same run"),
		ratio(Section, fmt.Sprintf("eBPF / direct, %d rules", o.Rules), rEBPFR, rDirect, 0, "direct from the first phase"),
	)
	small = append(small, smallRows(ctx, p, set, nil, o, o.Rules, fmt.Sprintf("%d rules as above", layout.Total()), TargetSmallRatioRules)...)
	return append(rows, small...)
}

// attachRouter loads the router pinned in a lab pin dir, attaches it to both router interfaces of the eBPF
// path (tcx on veth) and applies the VRF's tables. It returns the router's maps and its XDP program (same maps),
// which only the XDP small-packet row attaches.
func attachRouter(ctx context.Context, l *lab.Lab, p topo.Paths) (*maps.Set, *ebpf.Program, error) {
	set, ld, err := loadRouter(ctx, l, p)
	if err != nil {
		return nil, nil, err
	}
	defer ld.Close() // pins and links stay; the lab removes them with the namespace and pin dir
	prog := ld.Program(bpf.RouterProgXdpRouter)
	if prog == nil {
		set.Close()
		return nil, nil, fmt.Errorf("router has no program %s", bpf.RouterProgXdpRouter)
	}
	xdp, err := prog.Clone()
	if err != nil {
		set.Close()
		return nil, nil, fmt.Errorf("clone %s: %w", bpf.RouterProgXdpRouter, err)
	}
	return set, xdp, nil
}

func loadRouter(ctx context.Context, l *lab.Lab, p topo.Paths) (*maps.Set, *loader.Loader, error) {
	pinDir, err := l.PinDir()
	if err != nil {
		return nil, nil, err
	}
	spec, err := bpf.RouterSpec()
	if err != nil {
		return nil, nil, err
	}
	ld, err := loader.Load(ctx, loader.Options{Spec: spec, PinDir: pinDir, NetNS: p.EBPFRouter.NsHandle()})
	if err != nil {
		return nil, nil, err
	}
	set, err := configureRouter(ctx, ld, pinDir, p)
	if err != nil {
		ld.Close()
		return nil, nil, err
	}
	return set, ld, nil
}

func configureRouter(ctx context.Context, ld *loader.Loader, pinDir string, p topo.Paths) (*maps.Set, error) {
	for _, name := range []string{topo.In, topo.Out} {
		if _, err := ld.Attach(ctx, name, loader.ModeAuto); err != nil {
			return nil, err
		}
	}
	set, err := maps.OpenPinned(pinDir)
	if err != nil {
		return nil, err
	}
	t, err := routeTables(p)
	if err != nil {
		set.Close()
		return nil, err
	}
	if _, err := set.Apply(ctx, t, "bench"); err != nil {
		set.Close()
		return nil, err
	}
	return set, nil
}

// routeTables are the eBPF path's tables: both router interfaces route in the VRF's table (topo.Table), whose
// forwarding flag is the lookup interface's. Each takes Peer as the agent's tables would (bpftables.LinkOf): both
// are veths whose other ends are in the client's and the server's namespaces.
func routeTables(p topo.Paths) (maps.Tables, error) {
	idx, err := ifindexes(p.EBPFRouter, topo.Lookup)
	if err != nil {
		return maps.Tables{}, err
	}
	t := maps.Tables{VRFs: []maps.VRF{{ID: 1, TableID: topo.Table, LookupIfindex: idx[topo.Lookup]}}}
	for _, name := range []string{topo.In, topo.Out} {
		l, err := p.EBPFRouter.Link(name)
		if err != nil {
			return maps.Tables{}, err
		}
		tl := bpftables.LinkOf(l, p.EBPFRouter.Handle().QdiscList)
		t.Interfaces = append(t.Interfaces, maps.Interface{Ifindex: uint32(tl.Ifindex), VRF: 1, Mode: maps.ModeRoute, Peer: tl.Peer})
	}
	return t, nil
}

// routedReason is the router's counter of what t routes to the server (out of topo.Out): forwarded-peer when
// that interface has Peer, forwarded-fib otherwise.
func routedReason(p topo.Paths, t maps.Tables) (maps.Reason, error) {
	out, err := p.EBPFRouter.Ifindex(topo.Out)
	if err != nil {
		return 0, err
	}
	for _, in := range t.Interfaces {
		if in.Ifindex == uint32(out) && in.VLAN == 0 && in.Peer {
			return maps.ReasonForwardedPeer, nil
		}
	}
	return maps.ReasonForwardedFib, nil
}

// redirectTables are routeTables with the client side's interface in redirect mode: every frame it receives goes
// to the server side's interface with the server's MAC, without a FIB lookup or TTL change, and to its peer
// directly where the server side's interface has Peer (bpf_redirect_peer). It is the least any tc program
// forwarding these frames does (one map lookup, a MAC write, a redirect), so its rate bounds what a cheaper tc
// router could reach on this path.
func redirectTables(p topo.Paths) (maps.Tables, error) {
	t, err := routeTables(p)
	if err != nil {
		return t, err
	}
	idx, err := ifindexes(p.EBPFRouter, topo.In, topo.Out)
	if err != nil {
		return t, err
	}
	src, err := p.EBPFRouter.MAC(topo.Out)
	if err != nil {
		return t, err
	}
	dst, err := p.EBPFServer.MAC("eth0")
	if err != nil {
		return t, err
	}
	for i := range t.Interfaces {
		if t.Interfaces[i].Ifindex == idx[topo.In] {
			t.Interfaces[i].Mode = maps.ModeRedirect
		}
	}
	routed, err := routedReason(p, t)
	if err != nil {
		return t, err
	}
	t.Redirects = []maps.Redirect{{Ifindex: idx[topo.In], EgressIfindex: idx[topo.Out], SrcMAC: maps.MAC(src), DstMAC: maps.MAC(dst),
		Peer: routed == maps.ReasonForwardedPeer}}
	return t, nil
}

func ifindexes(ns *lab.Netns, names ...string) (map[string]uint32, error) {
	idx := map[string]uint32{}
	for _, name := range names {
		i, err := ns.Ifindex(name)
		if err != nil {
			return nil, err
		}
		idx[name] = uint32(i)
	}
	return idx, nil
}

func reachable(ctx context.Context, p *path) error {
	res, err := p.client.Ping(ctx, p.addr, lab.PingOptions{Count: 2})
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if res.Received == 0 {
		return fmt.Errorf("%s: %s unreachable before measuring", p.name, p.addr)
	}
	return nil
}

// forwarded sums the router's counters of the given reasons over every VRF.
func forwarded(set *maps.Set, reasons ...maps.Reason) (uint64, error) {
	cs, err := set.Counters()
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, c := range cs {
		for _, r := range reasons {
			n += c.ByReason[r].Packets
		}
	}
	return n, nil
}

func restore(ctx context.Context, ns *lab.Netns, rules string) error {
	cmd := ns.Command(ctx, "iptables-restore")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("iptables-restore in %s: %w: %s", ns.Logical, err, out)
	}
	return nil
}

// conntrackCount shows whether connection tracking saw the measured connections.
func conntrackCount(ctx context.Context, ns *lab.Netns) string {
	out, err := ns.Output(ctx, "conntrack", "-C")
	if err != nil {
		return "unknown (" + strings.TrimSpace(out) + ")"
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return strings.TrimSpace(out)
	}
	return strconv.Itoa(n)
}

// Method explains the rows below the table.
const Method = "- iperf3 TCP: one stream client -> server, runs of the paths interleaved; kernel forwarding uses the main " +
	"table, the eBPF router table 100 with forwarding disabled on its traffic interfaces (only the router can " +
	"forward). The ruleset (raw/mangle PREROUTING, filter INPUT/FORWARD, kube-proxy style REJECT/MARK/NOTRACK " +
	"rules that never match, plus a conntrack match) is installed in both router namespaces; the eBPF path " +
	"redirects at tc ingress, before netfilter. On 2 vCPUs sender and receiver share the CPUs with the router, " +
	"so throughput is CPU-bound: runs vary by about 10% on an idle machine and far more under load (see the load " +
	"average above and each row's min-max)." +
	"\n" + MethodSmall
