package cluster

import (
	"context"
	"fmt"
	"github.com/network-operator/network-operator/internal/wait"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// operatorDebounce is the operator's --debounce: changes within it form one revision.
const operatorDebounce = 500 * time.Millisecond

func (c *Cluster) logDir() (string, error) {
	d := filepath.Join(c.workDir, "logs")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("log directory: %w", err)
	}
	return d, nil
}

// StartOperator starts the operator binary with its own kubeconfig and waits until it is ready (informers
// synced, webhook server serving).
func (c *Cluster) StartOperator(ctx context.Context) error {
	start := time.Now()
	logs, err := c.logDir()
	if err != nil {
		return err
	}
	c.operatorDir = filepath.Join(c.workDir, "operator")
	if err := os.MkdirAll(c.operatorDir, 0o755); err != nil {
		return fmt.Errorf("operator directory: %w", err)
	}
	kubeconfig := filepath.Join(c.operatorDir, "kubeconfig")
	if err := c.writeKubeconfig(kubeconfig, operatorUser); err != nil {
		return err
	}
	flags, err := operatorFlags(c.opts.Operator)
	if err != nil {
		return err
	}
	metrics, err := freeAddr()
	if err != nil {
		return err
	}
	probe, err := freeAddr()
	if err != nil {
		return err
	}
	args := []string{c.opts.Operator,
		"--metrics-bind-address", metrics, "--health-probe-bind-address", probe,
		"--underlay-asn", strconv.Itoa(UnderlayASN), "--underlay-remote-asn", "internal", "--underlay-interfaces", Uplink,
		"--debounce", operatorDebounce.String(),
	}
	if flags["kubeconfig"] {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	// The eBPF router routes what enters the anycast gateways of the L2 networks, in the network's VRF.
	if !flags["dataplane-l2-gateways"] {
		return fmt.Errorf("%s has no --dataplane-l2-gateways flag: rebuild it from this tree", c.opts.Operator)
	}
	args = append(args, "--dataplane-l2-gateways")
	env := []string{"KUBECONFIG=" + kubeconfig}
	if !flags["webhook-port"] || !flags["webhook-cert-dir"] || !flags["webhook-host"] {
		return fmt.Errorf("%s has no --webhook-host/--webhook-port/--webhook-cert-dir flags: rebuild it from this tree", c.opts.Operator)
	}
	host, port, certDir := c.env.WebhookServing()
	args = append(args, "--webhook-host", host, "--webhook-port", strconv.Itoa(port), "--webhook-cert-dir", certDir)
	c.operatorStart = time.Now()
	p, err := startProc("network-operator", filepath.Join(logs, "network-operator.log"), env, args...)
	if err != nil {
		return err
	}
	c.operator, c.opMetrics = p, metrics
	if err := c.recordProc(p, 10*time.Second); err != nil {
		return err
	}
	if err := waitHTTP(ctx, p, "http://"+probe+"/readyz", 60*time.Second); err != nil {
		return fmt.Errorf("operator not ready: %w", err)
	}
	c.logf("  network-operator (pid %d) ready in %v: --max-unavailable 1, --underlay-remote-asn internal, --underlay-interfaces %s,",
		p.pid(), time.Since(start).Round(10*time.Millisecond), Uplink)
	var dp []string
	for _, n := range c.samples.Networks {
		dp = append(dp, n.Bridge()+"="+n.VRF)
	}
	c.logf("    --dataplane-l2-gateways (the eBPF router on every L2 network's gateway bridge: %s)", strings.Join(dp, " "))
	c.logf("    log %s", p.log)
	return nil
}

// StartAgents starts one agent process per node, in the host namespace, configuring its node's namespace
// (--netns) and FRR, talking to the API server as a member of the agents' group, serving /metrics on
// loopback. It waits until every agent serves /healthz.
func (c *Cluster) StartAgents(ctx context.Context) error {
	start := time.Now()
	logs, err := c.logDir()
	if err != nil {
		return err
	}
	for _, n := range c.nodes {
		kubeconfig := filepath.Join(n.Dir, "kubeconfig")
		if err := c.writeKubeconfig(kubeconfig, "network-agent:"+n.Name, agentGroup); err != nil {
			return err
		}
		if n.MetricsAddr, err = freeAddr(); err != nil {
			return err
		}
		args := []string{c.opts.Agent,
			"--node-name", n.Name, "--kubeconfig", kubeconfig,
			"--netns", n.NS.Path, "--pin-dir", n.PinDir,
			"--state-file", filepath.Join(n.Dir, "last-good.yaml"),
			"--listen", n.MetricsAddr,
			"--frr", "reload", "--frr-vty-socket", n.FRR.Dir, "--frr-conf-dir", n.FRR.ConfDir, "--frr-root", c.opts.FRRRoot,
			"--frr-state-dir", filepath.Join(n.Dir, "frr-state"), "--frr-scratch=" + strconv.FormatBool(!c.opts.NoFRRScratch),
			// Every VXLAN leaves through the uplink: its MTU bounds the overlay's.
			"--vtep-interface", Uplink,
		}
		p, err := startProc("network-agent "+n.Name, filepath.Join(logs, "network-agent-"+n.Name+".log"), nil, args...)
		if err != nil {
			return err
		}
		n.agent = p
		if err := c.recordProc(p, 15*time.Second); err != nil {
			return err
		}
	}
	for _, n := range c.nodes {
		if err := waitHTTP(ctx, n.agent, "http://"+n.MetricsAddr+"/healthz", 60*time.Second); err != nil {
			return fmt.Errorf("agent of %s: %w", n.Name, err)
		}
	}
	c.logf("  %d network-agent processes up in %v (host namespace, each configuring its node with --netns):", len(c.nodes), time.Since(start).Round(10*time.Millisecond))
	for _, n := range c.nodes {
		c.logf("    %-7s pid %-7d metrics http://%s/metrics   log %s", n.Name, n.agent.pid(), n.MetricsAddr, n.agent.log)
	}
	return nil
}

// waitHTTP polls url until it answers 200, failing early when p exits.
func waitHTTP(ctx context.Context, p *proc, url string, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	return wait.Poll(ctx, 100*time.Millisecond, timeout, "GET "+url, func(ctx context.Context) (bool, string, error) {
		if err := p.checkRunning(); err != nil {
			return false, "", err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body))), nil
		}
		return true, "", nil
	})
}
