// Package metrics holds the node agent's Prometheus metrics, in a registry of its own (no global state):
// the eBPF router's per-VRF counters, read from the per-CPU counter map at every scrape; generation swap and
// reconcile durations; the attach mode of every interface; FRR reload results; BGP session states.
package metrics

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/network-operator/network-operator/pkg/frr/frrvty"
	"github.com/network-operator/network-operator/pkg/maps"
)

// Namespace prefixes every metric name.
const Namespace = "network_operator"

// Reconcile results (label "result" of the reconcile histogram).
const (
	ResultApplied    = "applied"     // something changed and the new state is healthy
	ResultUnchanged  = "unchanged"   // nothing to do
	ResultRolledBack = "rolled_back" // apply or health check failed, the last good state was restored
	ResultFailed     = "failed"      // failed and the last good state could not be restored either
	ResultInvalid    = "invalid"     // refused before any change (bad input, conflicts)
	ResultRetry      = "retry"       // a transient error (cancelled, interrupted dump, Secret or API unavailable): tried again
)

// FRR reload results (label "result" of the reload counter).
const (
	FRRApplied = "applied"
	FRRSkipped = "skipped" // identical to the running config
	FRRFailed  = "failed"
)

// CounterReader reads the router's counters summed over CPUs (*maps.Set).
type CounterReader interface {
	Counters() ([]maps.VRFCounters, error)
}

// BGPReader reads FRR's BGP summary (frrvty.Target).
type BGPReader interface {
	Summary(ctx context.Context) (frrvty.Summary, error)
}

// Metrics is the agent's registry and the metrics it updates.
type Metrics struct {
	reg *prometheus.Registry

	swap           prometheus.Histogram
	generation     prometheus.Gauge
	reconcile      *prometheus.HistogramVec
	attach         *prometheus.GaugeVec
	frrReloads     *prometheus.CounterVec
	ready          prometheus.Gauge
	steps          *prometheus.HistogramVec
	observes       prometheus.Counter
	observesReused prometheus.Counter
	observed       *prometheus.GaugeVec

	vrf *vrfCollector
	bgp *bgpCollector
}

// New creates the registry with every metric (plus the Go and process collectors).
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.swap = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "map_generation_swap_duration_seconds",
		Help:    "Time to apply one new generation of the eBPF router's tables (write, flip, RCU grace period, cleanup).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	m.generation = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "map_generation",
		Help: "Generation number of the live eBPF router tables.",
	})
	m.reconcile = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "reconcile_duration_seconds",
		Help:    "Duration of reconciles by result (applied, unchanged, rolled_back, failed, invalid).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"result"})
	m.attach = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "interface_attach_info",
		Help: "1 for the hook the eBPF router is attached with on each configured interface (mode none: not attached).",
	}, []string{"interface", "mode"})
	m.frrReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "frr_reloads_total",
		Help: "FRR configuration applies by result (applied, skipped: identical, failed).",
	}, []string{"result"})
	m.ready = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "ready",
		Help: "1 when the node applied its configuration and passed the health checks.",
	})
	m.steps = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "reconcile_step_duration_seconds",
		Help:    "Duration of the parts of a reconcile: plan (observe the node, render FRR, read the tables), each apply step that ran (vrfs, frr: validation, frr-reload, interfaces, mirror, attach, maps, detach, removals), health.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"step"})
	m.observes = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "netlink_observes_total",
		Help: "Reads of the node's netlink state (every link, addresses, the agent's routes and rules) to plan a reconcile.",
	})
	m.observesReused = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "netlink_observes_reused_total",
		Help: "Plans of a reconcile that used the last netlink read again: the node notified no change since it.",
	})
	m.observed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "netlink_observed_objects",
		Help: "Objects the last netlink read found, by kind (links: all of the namespace; addresses: global ones; routes and rules: the agent's).",
	}, []string{"kind"})
	m.vrf = newVRFCollector()
	m.bgp = newBGPCollector()
	for _, r := range []string{FRRApplied, FRRSkipped, FRRFailed} {
		m.frrReloads.WithLabelValues(r)
	}
	m.reg.MustRegister(m.swap, m.generation, m.reconcile, m.attach, m.frrReloads, m.ready, m.steps, m.observes, m.observesReused, m.observed,
		m.vrf, m.vrf.errors, m.bgp, m.bgp.errors,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Registry is the agent's registry (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry at /metrics. Collection errors do not fail the scrape: the collectors that fail
// emit nothing and count the failure.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Registry: m.reg})
}

// SetCounterSource makes every scrape read the counters from src; names maps BPF VRF ids to VRF names (called
// at each scrape, so it follows config changes). nil src stops the VRF metrics.
func (m *Metrics) SetCounterSource(src CounterReader, names func() map[uint32]string) {
	m.vrf.set(src, names)
}

// SetBGPSource makes every scrape read the BGP summary from src (nil: no BGP metrics).
func (m *Metrics) SetBGPSource(src BGPReader) { m.bgp.set(src) }

// ObserveSwap records the duration of a generation swap that changed the tables, and the new generation.
func (m *Metrics) ObserveSwap(d time.Duration, generation uint64) {
	m.swap.Observe(d.Seconds())
	m.generation.Set(float64(generation))
}

// SetGeneration records the live generation (after adopting or a no-op apply).
func (m *Metrics) SetGeneration(generation uint64) { m.generation.Set(float64(generation)) }

// ObserveReconcile records one reconcile.
func (m *Metrics) ObserveReconcile(result string, d time.Duration) {
	m.reconcile.WithLabelValues(result).Observe(d.Seconds())
}

// ObserveStep records the duration of one part of a reconcile.
func (m *Metrics) ObserveStep(step string, d time.Duration) {
	m.steps.WithLabelValues(step).Observe(d.Seconds())
}

// ObserveNetlink records one read of the node's netlink state and what it found.
func (m *Metrics) ObserveNetlink(links, addresses, routes, rules int) {
	m.observes.Inc()
	for kind, n := range map[string]int{"links": links, "addresses": addresses, "routes": routes, "rules": rules} {
		m.observed.WithLabelValues(kind).Set(float64(n))
	}
}

// ObserveNetlinkReused records a plan that used the last read of the node's netlink state again.
func (m *Metrics) ObserveNetlinkReused() { m.observesReused.Inc() }

// SetAttachments replaces the attach modes (interface -> mode).
func (m *Metrics) SetAttachments(modes map[string]string) {
	m.attach.Reset()
	for ifname, mode := range modes {
		m.attach.WithLabelValues(ifname, mode).Set(1)
	}
}

// FRRReload counts one FRR apply.
func (m *Metrics) FRRReload(result string) { m.frrReloads.WithLabelValues(result).Inc() }

// SetReady records the node's readiness.
func (m *Metrics) SetReady(ok bool) {
	if ok {
		m.ready.Set(1)
	} else {
		m.ready.Set(0)
	}
}

// vrfCollector reads vrf_counters at every scrape. A failed read emits nothing at all (never a partial set of
// counters, which would look like resets) and increments its error counter.
type vrfCollector struct {
	packets, bytes *prometheus.Desc
	errors         prometheus.Counter

	mu    sync.Mutex
	src   CounterReader
	names func() map[uint32]string
}

func newVRFCollector() *vrfCollector {
	labels := []string{"vrf", "action", "reason"}
	return &vrfCollector{
		packets: prometheus.NewDesc(Namespace+"_vrf_packets_total",
			"Packets seen by the eBPF router per VRF, by action (forwarded, passed, dropped) and reason.", labels, nil),
		bytes: prometheus.NewDesc(Namespace+"_vrf_bytes_total",
			"Bytes seen by the eBPF router per VRF, by action (forwarded, passed, dropped) and reason.", labels, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "vrf_counters_read_errors_total",
			Help: "Scrapes whose read of the eBPF counter map failed (the VRF counters were left out).",
		}),
	}
}

func (c *vrfCollector) set(src CounterReader, names func() map[uint32]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.src, c.names = src, names
}

func (c *vrfCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.packets
	ch <- c.bytes
}

func (c *vrfCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src, namesFn := c.src, c.names
	c.mu.Unlock()
	if src == nil {
		return
	}
	counters, err := src.Counters()
	if err != nil {
		c.errors.Inc()
		return
	}
	var names map[uint32]string
	if namesFn != nil {
		names = namesFn()
	}
	for _, vc := range counters {
		vrf := VRFLabel(vc.VRF, names)
		// action is the reason's class as bpf/router.h defines it; "unknown" for a counter slot of a reason
		// this agent does not know (a newer program sharing the pinned counters), with reason "reason(N)".
		for reason, n := range vc.ByReason {
			action, r := string(reason.Action()), reason.String()
			ch <- prometheus.MustNewConstMetric(c.packets, prometheus.CounterValue, float64(n.Packets), vrf, action, r)
			ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(n.Bytes), vrf, action, r)
		}
	}
}

// VRFLabel is the vrf label of a BPF VRF id: its name, "unassigned" for 0 (interfaces not in the tables, and those
// in mode fib, whose VRF the tables do not hold), and
// "id-<n>" for ids no configured VRF has (counters of a removed VRF).
func VRFLabel(id uint32, names map[uint32]string) string {
	if id == 0 {
		return "unassigned"
	}
	if n, ok := names[id]; ok {
		return n
	}
	return "id-" + strconv.FormatUint(uint64(id), 10)
}

// BGPStates are the session states reported for every peer (value 1 for the current one).
var BGPStates = []string{"Idle", "Connect", "Active", "OpenSent", "OpenConfirm", "Established"}

// bgpScrapeTimeout bounds the vtysh call of one scrape.
const bgpScrapeTimeout = 5 * time.Second

// bgpCollector reads FRR's BGP summary at every scrape; like vrfCollector it emits nothing when the read fails.
type bgpCollector struct {
	state    *prometheus.Desc
	prefixes *prometheus.Desc
	errors   prometheus.Counter

	mu  sync.Mutex
	src BGPReader
}

func newBGPCollector() *bgpCollector {
	return &bgpCollector{
		state: prometheus.NewDesc(Namespace+"_bgp_session_state",
			"BGP session state per VRF, address family and peer: 1 for the current state, 0 for the others.",
			[]string{"vrf", "address_family", "peer", "state"}, nil),
		prefixes: prometheus.NewDesc(Namespace+"_bgp_session_prefixes_received",
			"Prefixes received from the peer.", []string{"vrf", "address_family", "peer"}, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "bgp_status_read_errors_total",
			Help: "Scrapes whose read of FRR's BGP summary failed (the BGP metrics were left out).",
		}),
	}
}

func (c *bgpCollector) set(src BGPReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.src = src
}

func (c *bgpCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.prefixes
}

func (c *bgpCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), bgpScrapeTimeout)
	defer cancel()
	sum, err := src.Summary(ctx)
	if err != nil {
		c.errors.Inc()
		return
	}
	for _, p := range sum.Peers() {
		for _, s := range BGPStates {
			v := 0.0
			if p.State == s {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, v, p.VRF, p.AddressFamily, p.Peer, s)
		}
		if p.State != "" && !slices.Contains(BGPStates, p.State) {
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, 1, p.VRF, p.AddressFamily, p.Peer, p.State)
		}
		ch <- prometheus.MustNewConstMetric(c.prefixes, prometheus.GaugeValue, float64(p.PrefixesReceived),
			p.VRF, p.AddressFamily, p.Peer)
	}
}
