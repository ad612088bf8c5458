package throughput

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/network-operator/network-operator/bpf/pktgen"
	"github.com/network-operator/network-operator/internal/bench/report"
	"github.com/network-operator/network-operator/internal/bench/stats"
	"github.com/network-operator/network-operator/internal/bench/topo"
	"github.com/network-operator/network-operator/internal/lab"
	"github.com/network-operator/network-operator/pkg/maps"
)

// SectionSmall is the table's area for the small-packet rows.
const SectionSmall = "64-byte UDP"

// Targets of the small-packet rows.
const (
	TargetSmallRatio      = 1.5
	TargetSmallRatioRules = 4.0
)

// Small-packet defaults: frames of 64 bytes (42 of headers, 22 of payload, what iperf3 -u -l 22 sends), 16 flows.
const (
	smallFrameSize = 64
	defaultFlows   = 16
	smallSrcPort   = 40000
	smallDstPort   = 9 // discard; the receiver's counter drops the frames before any socket
)

// forwarder is what forwards a path's frames.
type forwarder int

const (
	viaNone   forwarder = iota // direct veth: nothing forwards
	viaKernel                  // kernel IP forwarding
	viaEBPF                    // the eBPF tc router
)

// smallPath is one path measured with generated frames: client eth0 -> router ra, rb -> server eth0 (or client
// eth0 -> server eth0 when router is nil).
type smallPath struct {
	name                   string
	via                    forwarder
	client, router, server *lab.Netns
	gen                    *pktgen.Generator
	count                  *pktgen.Counter
	flows                  int
	samples                []float64 // thousand packets per second delivered
	errs                   []error
	total                  runCounts
}

// runCounts are one run's counters (or a sum of runs).
type runCounts struct {
	Generated, Delivered uint64
	Flows                int    // flows with a delivered packet
	ViaEBPF              uint64 // the eBPF router's forwarded-fib
	ViaKernel            uint64 // ForwDatagrams in both router namespaces
}

func (c runCounts) add(o runCounts) runCounts {
	return runCounts{
		Generated: c.Generated + o.Generated, Delivered: c.Delivered + o.Delivered, Flows: max(c.Flows, o.Flows),
		ViaEBPF: c.ViaEBPF + o.ViaEBPF, ViaKernel: c.ViaKernel + o.ViaKernel,
	}
}

// check says whether a run measured what its row claims: the receiver counted every flow, the path's forwarder
// (the eBPF router's forwarded-fib counter, or the kernel's ForwDatagrams) forwarded at least what arrived and at
// most what was generated, and any other forwarder next to nothing (under 1% of what arrived).
func (c runCounts) check(via forwarder, wantFlows int) error {
	var errs []error
	if c.Delivered == 0 {
		errs = append(errs, fmt.Errorf("nothing delivered of %d generated", c.Generated))
	} else if c.Flows < wantFlows {
		errs = append(errs, fmt.Errorf("%d of %d flows delivered", c.Flows, wantFlows))
	}
	for _, f := range []struct {
		via  forwarder
		name string
		n    uint64
	}{{viaKernel, "the kernel's ForwDatagrams", c.ViaKernel}, {viaEBPF, "the eBPF router's forwarded-fib", c.ViaEBPF}} {
		switch {
		case f.via == via && (f.n < c.Delivered || f.n > c.Generated):
			errs = append(errs, fmt.Errorf("%s grew by %d, want %d (delivered) to %d (generated)", f.name, f.n, c.Delivered, c.Generated))
		case f.via != via && f.n > c.Delivered/100:
			errs = append(errs, fmt.Errorf("%s grew by %d too (delivered %d)", f.name, f.n, c.Delivered))
		}
	}
	return errors.Join(errs...)
}

// newSmallPath loads the generator and counter of one path: frames from the client's eth0 to the router's ra
// (or, without a router, the server's eth0), from src to dst.
func newSmallPath(name string, via forwarder, client, router, server *lab.Netns, src, dst netip.Addr, flows int) (*smallPath, error) {
	f := pktgen.Frame{Src: src, Dst: dst, SrcPort: smallSrcPort, DstPort: smallDstPort, Flows: flows, Size: smallFrameSize}
	var err error
	if f.SrcMAC, err = client.MAC("eth0"); err != nil {
		return nil, err
	}
	if router != nil {
		f.DstMAC, err = router.MAC(topo.In)
	} else {
		f.DstMAC, err = server.MAC("eth0")
	}
	if err != nil {
		return nil, err
	}
	p := &smallPath{name: name, via: via, client: client, router: router, server: server, flows: flows}
	if p.gen, err = pktgen.NewGenerator(f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p.count, err = pktgen.NewCounter(f); err != nil {
		p.gen.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

func (p *smallPath) Close() error { return errors.Join(p.gen.Close(), p.count.Close()) }

// attach makes the path ready for generated frames: an XDP program on the router's ingress veth (it accepts XDP
// frames only while it runs NAPI) and the counter on the server's. Both go when the result is closed, so the
// iperf3 runs see the paths without them.
func (p *smallPath) attach() (io.Closer, error) {
	var cs closers
	if p.router != nil {
		in, err := p.router.Ifindex(topo.In)
		if err != nil {
			return nil, err
		}
		c, err := pktgen.EnableXDPReceive(p.router.NsHandle(), in)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		cs = append(cs, c)
	}
	out, err := p.server.Ifindex("eth0")
	if err != nil {
		return nil, errors.Join(err, cs.Close())
	}
	lk, err := p.count.Attach(p.server.NsHandle(), out)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", p.name, err), cs.Close())
	}
	return append(cs, lk), nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		errs = append(errs, cs[i].Close())
	}
	return errors.Join(errs...)
}

// run sends for d and checks what the counters saw: the receiver's, ForwDatagrams in both router namespaces and
// the eBPF router's forwarded-fib (set), whichever path runs.
func (p *smallPath) run(ctx context.Context, d time.Duration, routers []*lab.Netns, set *maps.Set) error {
	before, err := p.snapshot(routers, set)
	if err != nil {
		return err
	}
	idx, err := p.client.Ifindex("eth0")
	if err != nil {
		return err
	}
	burst, err := p.gen.Send(ctx, p.client.NsHandle(), idx, d)
	if err != nil {
		return err
	}
	if err := p.settle(ctx); err != nil {
		return err
	}
	after, err := p.snapshot(routers, set)
	if err != nil {
		return err
	}
	delivered := after.count.Sub(before.count)
	c := runCounts{
		Generated: burst.Generated, Delivered: delivered.Packets(), Flows: delivered.Flows(),
		ViaEBPF: after.viaEBPF - before.viaEBPF, ViaKernel: after.viaKernel - before.viaKernel,
	}
	p.total = p.total.add(c)
	if err := c.check(p.via, p.flows); err != nil {
		return err
	}
	p.samples = append(p.samples, float64(c.Delivered)/burst.Busy.Seconds()/1e3)
	return nil
}

type snapshot struct {
	count     pktgen.Count
	viaEBPF   uint64 // the eBPF router's forwarded-fib, all VRFs
	viaKernel uint64 // ForwDatagrams in the router namespaces
}

func (p *smallPath) snapshot(routers []*lab.Netns, set *maps.Set) (snapshot, error) {
	var s snapshot
	var err error
	if s.count, err = p.count.Read(); err != nil {
		return s, err
	}
	if s.viaEBPF, err = forwarded(set); err != nil {
		return s, err
	}
	for _, r := range routers {
		ip, err := r.SNMP("Ip")
		if err != nil {
			return s, err
		}
		s.viaKernel += ip["ForwDatagrams"]
	}
	return s, nil
}

// settle waits until the receiver's count stops growing: frames are normally counted before the generator's
// test run returns (in the softirq after each batch), later only when ksoftirqd took the work over.
func (p *smallPath) settle(ctx context.Context) error {
	const quiet, limit = 20 * time.Millisecond, 2 * time.Second
	last, err := p.count.Read()
	if err != nil {
		return err
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(quiet)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%s: receiver still counting %v after the burst", p.name, limit)
		case <-tick.C:
		}
		now, err := p.count.Read()
		if err != nil {
			return err
		}
		if now.Packets() == last.Packets() {
			return nil
		}
		last = now
	}
}

func (p *smallPath) row(detail string) report.Row {
	r := report.Row{Section: SectionSmall, Name: p.name, Unit: "kpps"}
	t := p.total
	counters := fmt.Sprintf("%d flows; all runs: %s delivered of %s generated, ForwDatagrams +%d, router forwarded-fib +%d",
		p.flows, millions(t.Delivered), millions(t.Generated), t.ViaKernel, t.ViaEBPF)
	if detail != "" {
		counters = detail + "; " + counters
	}
	if len(p.samples) == 0 {
		r.Err = errors.Join(p.errs...)
		if r.Err == nil {
			r.Err = errors.New("no run")
		}
		return r
	}
	r.Value = stats.Median(p.samples)
	r.Detail = fmt.Sprintf("%s; median of %d (%.0f-%.0f)", counters, len(p.samples), stats.Percentile(p.samples, 0), stats.Percentile(p.samples, 100))
	if len(p.errs) > 0 {
		r.Detail += fmt.Sprintf(", %d failed runs: %v", len(p.errs), p.errs[0])
	}
	return r
}

func millions(n uint64) string { return fmt.Sprintf("%.2fM", float64(n)/1e6) }

// smallPhase runs both paths interleaved, runs times each, with the XDP helpers attached only meanwhile.
func smallPhase(ctx context.Context, runs int, d time.Duration, routers []*lab.Netns, set *maps.Set, paths ...*smallPath) error {
	var cs closers
	for _, p := range paths {
		c, err := p.attach()
		if err != nil {
			return errors.Join(err, cs.Close())
		}
		cs = append(cs, c)
	}
	err := func() error {
		for range runs {
			for _, p := range paths {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := p.run(ctx, d, routers, set); err != nil {
					p.errs = append(p.errs, err)
				}
			}
		}
		return nil
	}()
	return errors.Join(err, cs.Close())
}

// smallRows measures one phase, bare (rules 0) or with the ruleset, and returns its rows: the direct veth (bare
// only), kernel, eBPF, ratio.
func smallRows(ctx context.Context, p topo.Paths, set *maps.Set, o Options, rules int, kernelDetail string, target float64) []report.Row {
	suffix, ratioSuffix := "", ""
	if rules > 0 {
		suffix, ratioSuffix = fmt.Sprintf(" + %d rules", rules), fmt.Sprintf(", %d rules", rules)
	}
	var paths []*smallPath
	defer func() {
		for _, pa := range paths {
			pa.Close()
		}
	}()
	for _, d := range []struct {
		name                   string
		via                    forwarder
		client, router, server *lab.Netns
		src, dst               netip.Addr
	}{
		{"direct veth, no router (the limit)", viaNone, p.DirectClient, nil, p.DirectServer, topo.DirectClient, topo.DirectServer},
		{"kernel forwarding", viaKernel, p.KernelClient, p.KernelRouter, p.KernelServer, topo.Client4, topo.Server4},
		{"eBPF tc router", viaEBPF, p.EBPFClient, p.EBPFRouter, p.EBPFServer, topo.Client4, topo.Server4},
	} {
		if d.via == viaNone && rules > 0 {
			continue // no router namespace, no rules: the bare phase's figure holds
		}
		pa, err := newSmallPath(d.name+suffix, d.via, d.client, d.router, d.server, d.src, d.dst, o.flows())
		if err != nil {
			return []report.Row{{Section: SectionSmall, Name: d.name + suffix, Err: err}}
		}
		paths = append(paths, pa)
	}
	routers := []*lab.Netns{p.KernelRouter, p.EBPFRouter}
	if err := smallPhase(ctx, o.Runs, o.smallDuration(), routers, set, paths...); err != nil {
		for _, pa := range paths {
			pa.errs = append(pa.errs, err)
			pa.samples = nil
		}
	}
	var rows []report.Row
	var rKernel, rEBPF report.Row
	for _, pa := range paths {
		r := pa.row(map[forwarder]string{viaKernel: kernelDetail}[pa.via])
		switch pa.via {
		case viaKernel:
			rKernel = r
		case viaEBPF:
			rEBPF = r
		}
		rows = append(rows, r)
	}
	return append(rows, ratio(SectionSmall, "eBPF / kernel"+ratioSuffix, rEBPF, rKernel, target, "same run"))
}
