package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/network-operator/network-operator/internal/wait"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ScrapeInterval is how often Prometheus scrapes the agents and the operator.
const ScrapeInterval = time.Second

// Prometheus is the Prometheus server of the cluster.
type Prometheus struct {
	// URL is the server's address (UI and HTTP API), e.g. http://127.0.0.1:9090.
	URL  string
	proc *proc
	hc   *http.Client
}

// StartPrometheus starts a Prometheus server (the Debian package's binary) with a config and data directory of
// its own, scraping every agent's /metrics (label node) and the operator's, and waits until every agent target
// is up.
func (c *Cluster) StartPrometheus(ctx context.Context) error {
	start := time.Now()
	dir := filepath.Join(c.workDir, "prometheus")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return fmt.Errorf("prometheus directory: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\nscrape_configs:\n", ScrapeInterval, ScrapeInterval)
	b.WriteString("  - job_name: network-agent\n    static_configs:\n")
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "      - targets: [%q]\n        labels: {node: %q}\n", n.MetricsAddr, n.Name)
	}
	targets := c.opMetricsTargets
	if c.opMetrics != "" {
		targets = append(targets, c.opMetrics)
	}
	quoted := make([]string, len(targets))
	for i, t := range targets {
		quoted[i] = strconv.Quote(t)
	}
	fmt.Fprintf(&b, "  - job_name: network-operator\n    static_configs:\n      - targets: [%s]\n", strings.Join(quoted, ", "))
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("prometheus config: %w", err)
	}
	addr := c.opts.PrometheusAddr
	if addr == "" {
		var err error
		if addr, err = freeAddr(); err != nil {
			return err
		}
	}
	logs, err := c.logDir()
	if err != nil {
		return err
	}
	p, err := startProc("prometheus", filepath.Join(logs, "prometheus.log"), nil, c.opts.Prometheus,
		"--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	if err != nil {
		return err
	}
	if err := c.recordProc(p, 10*time.Second); err != nil {
		return err
	}
	c.prometheus = &Prometheus{URL: "http://" + addr, proc: p, hc: &http.Client{Timeout: 5 * time.Second}}
	if err := c.state.update(func(s *State) { s.Prometheus = c.prometheus.URL }); err != nil {
		return err
	}
	if err := waitHTTP(ctx, p, c.prometheus.URL+"/-/ready", 60*time.Second); err != nil {
		return fmt.Errorf("prometheus not ready: %w", err)
	}
	// Every agent scraped successfully at least once.
	err = wait.Poll(ctx, 200*time.Millisecond, 30*time.Second, "prometheus scrapes every agent", func(ctx context.Context) (bool, string, error) {
		if err := p.checkRunning(); err != nil {
			return false, "", err
		}
		res, err := c.prometheus.Query(ctx, `up{job="network-agent"} == 1`)
		if err != nil {
			return false, err.Error(), nil
		}
		if len(res) < len(c.nodes) {
			return false, fmt.Sprintf("%d of %d agents up", len(res), len(c.nodes)), nil
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	c.logf("  prometheus (pid %d) at %s scrapes %d agents and the operator every %v (config %s), ready in %v",
		p.pid(), c.prometheus.URL, len(c.nodes), ScrapeInterval, config, time.Since(start).Round(10*time.Millisecond))
	return nil
}

// PrometheusURL is the Prometheus server's address ("" before StartPrometheus).
func (c *Cluster) PrometheusURL() string {
	if c.prometheus == nil {
		return ""
	}
	return c.prometheus.URL
}

// Sample is one series of an instant query result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query runs an instant query through the HTTP API (/api/v1/query) and returns the vector, sorted by labels.
func (p *Prometheus) Query(ctx context.Context, query string) ([]Sample, error) {
	u := p.URL + "/api/v1/query?" + url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", query, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", query, err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %q: %s: %w", query, resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", query, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: result type %s, want vector", query, r.Data.ResultType)
	}
	out := make([]Sample, 0, len(r.Data.Result))
	for _, s := range r.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", query, s.Value[1], err)
		}
		out = append(out, Sample{Labels: s.Metric, Value: v})
	}
	slices.SortFunc(out, func(a, b Sample) int { return strings.Compare(labelKey(a.Labels), labelKey(b.Labels)) })
	return out, nil
}

func labelKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + l[k] + ",")
	}
	return b.String()
}
