package cluster

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// LookAround is the text shown while the cluster is left running: where the UIs are and commands to inspect
// a node, its FRR, its eBPF tables and a workload.
func (c *Cluster) LookAround() string {
	var b strings.Builder
	n := c.nodes[0]
	w := c.loads[0]
	var other *Workload
	for _, o := range c.loads {
		if o.VRF == w.VRF && o.Network.Name != w.Network.Name {
			other = o
			break
		}
	}
	fmt.Fprintf(&b, "  Prometheus UI:  %s/graph?g0.expr=%s&g0.tab=1\n", c.prometheus.URL, url.QueryEscape(CounterQuery))
	fmt.Fprintf(&b, "  API server:     %s   (admin kubeconfig %s)\n", c.apiServer, c.kubeconfig)
	fmt.Fprintf(&b, "  Logs:           %s/logs\n", c.workDir)
	if c.opts.Install == InstallHelm {
		kubectl := fmt.Sprintf("%s --kubeconfig %s -n %s", filepath.Join(c.opts.NodeBinDir, "kubectl"), c.kubeconfig, Namespace)
		fmt.Fprintf(&b, "  Pods:           %s get pods -o wide\n", kubectl)
		fmt.Fprintf(&b, "  A node's BGP:   %s exec ds/%s -c %s -- vtysh --vty_socket /var/run/frr -c 'show bgp l2vpn evpn summary'   (ds/: the first node's pod)\n", kubectl, AgentDaemonSet, agentContainer)
		fmt.Fprintf(&b, "  Its eBPF maps:  %s exec ds/%s -c %s -- network-agent dataplane dump --pin-dir %s\n", kubectl, AgentDaemonSet, agentContainer, podPinDir)
	} else {
		fmt.Fprintf(&b, "  A node's BGP:   nsenter --net=%s vtysh --vty_socket %s -c 'show bgp l2vpn evpn summary'\n", n.NS.Path, n.FRR.Dir)
		fmt.Fprintf(&b, "  Its eBPF maps:  nsenter --net=%s %s dataplane dump --pin-dir %s\n", n.NS.Path, c.opts.Agent, n.PinDir)
	}
	fmt.Fprintf(&b, "  Its metrics:    curl -s http://%s/metrics | grep vrf_packets\n", n.MetricsAddr)
	if other != nil {
		fmt.Fprintf(&b, "  Routed ping:    nsenter --net=%s ping %s    (%s on %s -> %s on %s)\n", w.NS.Path, other.Addr, w.Name,
			w.Node.Name, other.Name, other.Node.Name)
	}
	return b.String()
}

// LogTails returns the last lines of every process log of the cluster (operator, agents, Prometheus) and the
// FRR logs of the nodes, for failure reports.
func (c *Cluster) LogTails(lines int) string {
	var b strings.Builder
	var procs []*proc
	if c.operator != nil {
		procs = append(procs, c.operator)
	}
	for _, n := range c.nodes {
		if n.agent != nil {
			procs = append(procs, n.agent)
		}
	}
	if c.prometheus != nil {
		procs = append(procs, c.prometheus.proc)
	}
	for _, p := range procs {
		fmt.Fprintf(&b, "==== %s (%s)\n%s", p.name, p.log, p.tail(lines))
	}
	if c.opts.Install == InstallHelm {
		b.WriteString(c.podLogTails(lines))
	}
	for _, n := range c.nodes {
		if n.FRR != nil {
			fmt.Fprintf(&b, "==== FRR of %s\n%s", n.Name, tailLines([]byte(n.FRR.Logs()), lines))
		}
	}
	return b.String()
}
