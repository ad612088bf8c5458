package cluster

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/network-operator/network-operator/internal/wait"
)

// The per-VRF counter of the agents (agent/metrics).
const vrfPacketsMetric = "network_operator_vrf_packets_total"

// CounterQuery is the PromQL query of the demo's per-VRF counter table.
const CounterQuery = `sum by (vrf, action) (` + vrfPacketsMetric + `)`

// ForwardedQuery is the PromQL query of packets the eBPF routers forwarded, per node and VRF.
const ForwardedQuery = `sum by (node, vrf) (` + vrfPacketsMetric + `{action="forwarded"})`

// Counters are the per-VRF counters as Prometheus reports them, checked against the agents' own /metrics.
type Counters struct {
	// ByVRFAction is the result of CounterQuery; ForwardedByNode the result of ForwardedQuery.
	ByVRFAction     []Sample
	ForwardedByNode []Sample
	// Direct is the forwarded packets per VRF summed over a direct scrape of every agent's /metrics, taken when
	// no routed traffic flows; Prometheus reported the same values (Settled after the traffic stopped).
	Direct  map[string]float64
	Settled time.Duration
}

// Forwarded returns Prometheus's forwarded packets of a VRF (summed over nodes).
func (c *Counters) Forwarded(vrf string) float64 {
	var sum float64
	for _, s := range c.ForwardedByNode {
		if s.Labels["vrf"] == vrf {
			sum += s.Value
		}
	}
	return sum
}

// VRFCounters reads the per-VRF counters through Prometheus's HTTP API once Prometheus has scraped every
// agent after the last routed packet: the forwarded packets per VRF must equal what the agents' /metrics say
// (no routed traffic flows while this runs).
func (c *Cluster) VRFCounters(ctx context.Context) (*Counters, error) {
	start := time.Now()
	direct, err := c.scrapeForwarded(ctx)
	if err != nil {
		return nil, err
	}
	out := &Counters{Direct: direct}
	err = wait.Poll(ctx, 250*time.Millisecond, 30*time.Second, "prometheus reports the agents' forwarded counters", func(ctx context.Context) (bool, string, error) {
		res, err := c.prometheus.Query(ctx, ForwardedQuery)
		if err != nil {
			return false, err.Error(), nil
		}
		got := map[string]float64{}
		for _, s := range res {
			got[s.Labels["vrf"]] += s.Value
		}
		for vrf, want := range direct {
			if got[vrf] != want {
				return false, fmt.Sprintf("vrf %s: prometheus %v, agents %v", vrf, got[vrf], want), nil
			}
		}
		out.ForwardedByNode = res
		return true, "", nil
	})
	if err != nil {
		return nil, err
	}
	out.Settled = time.Since(start)
	if out.ByVRFAction, err = c.prometheus.Query(ctx, CounterQuery); err != nil {
		return nil, err
	}
	slices.SortFunc(out.ByVRFAction, func(a, b Sample) int {
		return cmp.Or(strings.Compare(a.Labels["vrf"], b.Labels["vrf"]), strings.Compare(a.Labels["action"], b.Labels["action"]))
	})
	return out, nil
}

// scrapeForwarded reads every agent's /metrics and sums the forwarded packets per VRF.
func (c *Cluster) scrapeForwarded(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, n := range c.nodes {
		m, err := c.scrapeForwardedOf(ctx, n)
		if err != nil {
			return nil, err
		}
		for vrf, v := range m {
			out[vrf] += v
		}
	}
	return out, nil
}

// scrapeForwardedOf reads the agent of n's /metrics: the packets its eBPF router forwarded, per VRF.
func (c *Cluster) scrapeForwardedOf(ctx context.Context, n *Node) (map[string]float64, error) {
	hc := &http.Client{Timeout: 5 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.MetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape agent of %s: %w", n.Name, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse /metrics of %s: %w", n.Name, err)
	}
	out := map[string]float64{}
	for _, m := range fams[vrfPacketsMetric].GetMetric() {
		if label(m, "action") == "forwarded" {
			out[label(m, "vrf")] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// VRFs lists the vrf labels of the counters, sorted.
func (c *Counters) VRFs() []string {
	var out []string
	for _, s := range c.ByVRFAction {
		if v := s.Labels["vrf"]; !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, strings.Compare)
	return out
}
