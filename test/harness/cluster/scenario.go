package cluster

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/agent/kube"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// rolloutTimeout bounds one rollout (all nodes, FRR reloads, health checks) - generous: CI machines are slow.
const rolloutTimeout = 3 * time.Minute

// Results is what the scenario observed; the end-to-end test asserts on it, the demo printed it as it went.
type Results struct {
	// Startup is the time from New to a running system (control plane, nodes, FRR, operator, agents, Prometheus).
	Startup time.Duration
	// VRFDevices says whether the kernel has VRF devices; VRFReason why not.
	VRFDevices bool
	VRFReason  string
	// WebhookDenial is the API server's answer to an invalid resource (a gateway that is its network's address).
	WebhookDenial string
	// Underlay is the rollout of the operator's first revision (underlay only); UnderlayUp the time from the
	// operator's start until every BGP session of the route reflector was Established.
	Underlay   *Rollout
	UnderlayUp time.Duration
	// Initial is the rollout of the samples; Matrix the connectivity afterwards.
	Initial *Rollout
	Matrix  *Matrix
	// Counters are the per-VRF counters from Prometheus after the matrix.
	Counters *Counters
	// Change is the rollout of the export-prefix change; ChangeFRR the FRR lines per node that show it.
	Change    *Rollout
	ChangeFRR map[string][]string
	// Broken is the rollout of the jumbo-frame change that fails on the small-MTU node and is rolled back;
	// MTUAfter is the MTU of that network's VXLAN device on every node afterwards; AfterRollback the matrix
	// measured after the rollback.
	Broken        *Rollout
	BrokenVXLAN   string
	MTUAfter      map[string]int
	AfterRollback *Matrix
}

// Change files, relative to the samples directory.
const (
	ChangeExportFile = "changes/export-prefix.yaml"
	ChangeBrokenFile = "changes/jumbo-frames.yaml"
	// TenantsFile holds the tenants' resources as the demo starts: applying it again undoes the export change.
	TenantsFile = "10-tenants.yaml"
	// changePrefix is the prefix the export change adds (it shows in FRR's prefix-lists).
	changePrefix = "10.250.0.0/16"
	// brokenNetwork is the network the broken change touches.
	brokenNetwork = "tenant-a-web"
)

// RunScenario runs the demo's scenario on a started cluster and writes what happens to out: apply the samples
// and watch the rollout, plug the workloads in, measure connectivity, read per-VRF counters from Prometheus,
// roll out a change, then a change that fails on one node and is rolled back.
func (c *Cluster) RunScenario(ctx context.Context, out io.Writer) (*Results, error) {
	p := &printer{w: out}
	res := &Results{Startup: time.Since(c.start)}
	for _, step := range []func(context.Context, *printer, *Results) error{
		c.showKernel, c.showWebhook, c.showUnderlay, c.showSamples, c.showWorkloads, c.showConnectivity,
		c.showCounters, c.showChange, c.showBrokenChange, c.showAfterRollback,
	} {
		if err := step(ctx, p, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// showKernel says whether the kernel has VRF devices, and what the agents do when it has none.
func (c *Cluster) showKernel(ctx context.Context, p *printer, res *Results) error {
	p.heading("Kernel: VRF devices?")
	f, err := nodenet.Probe(ctx, c.nodes[0].NS.Handle())
	if err != nil {
		return fmt.Errorf("probe kernel features: %w", err)
	}
	res.VRFDevices, res.VRFReason = f.VRF, f.VRFReason
	if f.VRF {
		p.line("  VRF devices available: each tenant VRF gets a vr.<vrf> device; the eBPF router looks routes up in its table.")
		return nil
	}
	p.line("  No VRF devices on this kernel (%s).", f.VRFReason)
	p.line("  So the agents run every tenant VRF table-only: its routes live in a numbered routing table, and the eBPF")
	p.line("  router routes per table (bpf_fib_lookup with the VRF's table id) on the VRF's interfaces; policy rules")
	p.line("  send the kernel's own lookups for those interfaces to the same table. FRR keeps its BGP VRFs inactive")
	p.line("  (no L3VNI, no type-5 routes): between nodes, tenant traffic rides the stretched L2 networks, whose EVPN")
	p.line("  type-2 MAC/IP routes give every node the remote workloads' neighbour entries (asymmetric IRB).")
	return nil
}

func (c *Cluster) showWebhook(ctx context.Context, p *printer, res *Results) error {
	p.heading("Webhook: an invalid resource is refused")
	var err error
	if res.WebhookDenial, err = c.checkWebhook(ctx); err != nil {
		return err
	}
	p.line("  layer2networkconfiguration/demo-invalid (anycast gateway %s) -> %s", DemoInvalidGateway, res.WebhookDenial)
	return nil
}

// showUnderlay follows the operator's first revision and waits for the fabric and the Nodes.
func (c *Cluster) showUnderlay(ctx context.Context, p *printer, res *Results) error {
	p.heading("Underlay: the operator's first revision (no tenant resources yet)")
	var err error
	if res.Underlay, err = c.showRollout(ctx, p, 0, c.operatorStart, "the operator started", nil); err != nil {
		return err
	}
	if res.UnderlayUp, err = c.waitUnderlay(ctx, p); err != nil {
		return err
	}
	return c.waitNodesReady(ctx, p)
}

func (c *Cluster) showSamples(ctx context.Context, p *printer, res *Results) error {
	p.heading("Apply %s (%d tenant VRFs, %d L2 networks stretched over all nodes, leaking rules)",
		c.rel(c.samples.Dir), len(c.samples.VRFs), len(c.samples.Networks))
	var err error
	if res.Initial, err = c.applyAndRoll(ctx, p, c.samples.Files...); err != nil {
		return err
	}
	if res.Initial.Phase != string(v1.RevisionDone) {
		return fmt.Errorf("initial revision %s ended %s: %s", res.Initial.Revision, res.Initial.Phase, res.Initial.Message)
	}
	p.line("  converged: %s runs on all %d nodes %.1fs after the resources were applied", ShortName(res.Initial.Revision),
		len(c.nodes), res.Initial.Duration().Seconds())
	return nil
}

func (c *Cluster) showWorkloads(ctx context.Context, p *printer, _ *Results) error {
	p.heading("Workloads: plugged into the nodes' L2 networks (what a CNI plugin would do)")
	if err := c.PlugWorkloads(ctx); err != nil {
		return err
	}
	for _, w := range c.loads {
		p.line("  %-3s on %s  %-13s %-9s %s/%d via %s", w.Name, w.Node.Name, w.Network.Name, w.VRF, w.Addr,
			w.Network.Gateway.Bits(), w.Network.Gateway.Addr())
	}
	return nil
}

func (c *Cluster) showConnectivity(ctx context.Context, p *printer, res *Results) error {
	p.heading("Connectivity between workloads across the EVPN/VXLAN fabric")
	var err error
	if res.Matrix, err = c.Connectivity(ctx); err != nil {
		return err
	}
	p.block(RenderMatrix(res.Matrix))
	if bad := res.Matrix.Unexpected(); len(bad) > 0 {
		return fmt.Errorf("connectivity: %d pairs not as expected, first: %s -> %s (%s) %d/%d replies",
			len(bad), bad[0].From.Label(), bad[0].To.Label(), bad[0].Path, bad[0].Received, bad[0].Sent)
	}
	return nil
}

func (c *Cluster) showCounters(ctx context.Context, p *printer, res *Results) error {
	p.heading("Per-VRF counters of the eBPF routers, from Prometheus")
	var err error
	if res.Counters, err = c.VRFCounters(ctx); err != nil {
		return err
	}
	p.line("  $ curl '%s/api/v1/query' --data-urlencode 'query=%s'", c.prometheus.URL, CounterQuery)
	p.block(RenderCounters(res.Counters))
	p.line("  forwarded by each node's router: %s", ForwardedQuery)
	p.block(RenderForwarded(res.Counters))
	p.line("  (equal to the agents' own /metrics; Prometheus caught up %.1fs after the traffic)", res.Counters.Settled.Seconds())
	return nil
}

// showChange rolls out the export-prefix change and shows it in every node's FRR.
func (c *Cluster) showChange(ctx context.Context, p *printer, res *Results) error {
	p.heading("A change: export %s into tenant-a (%s)", changePrefix, ChangeExportFile)
	var err error
	if res.Change, err = c.applyAndRoll(ctx, p, filepath.Join(c.samples.Dir, ChangeExportFile)); err != nil {
		return err
	}
	if res.Change.Phase != string(v1.RevisionDone) {
		return fmt.Errorf("change revision %s ended %s: %s", res.Change.Revision, res.Change.Phase, res.Change.Message)
	}
	res.ChangeFRR = map[string][]string{}
	for _, n := range c.nodes {
		lines, err := c.FRRLines(ctx, n, changePrefix)
		if err != nil {
			return err
		}
		res.ChangeFRR[n.Name] = lines
		p.line("  FRR on %s: %s", n.Name, strings.Join(lines, " | "))
	}
	return nil
}

// showBrokenChange rolls out the jumbo-frame change, which fails on the small-MTU node and is rolled back, and
// shows the MTU of that network's VXLAN device on every node afterwards.
func (c *Cluster) showBrokenChange(ctx context.Context, p *printer, res *Results) error {
	p.heading("A broken change: jumbo frames on %s (%s)", brokenNetwork, ChangeBrokenFile)
	small := c.nodes[c.opts.SmallMTUNode-1]
	p.line("  %s's uplink has MTU %d: it carries 1500-byte overlay frames, not 9000-byte ones.", small.Name, small.UplinkMTU)
	var err error
	if res.Broken, err = c.applyAndRoll(ctx, p, filepath.Join(c.samples.Dir, ChangeBrokenFile)); err != nil {
		return err
	}
	if res.Broken.Phase != string(v1.RevisionFailed) {
		return fmt.Errorf("broken revision %s ended %s, want Failed", res.Broken.Revision, res.Broken.Phase)
	}
	p.line("  %s failed on %s: %s", ShortName(res.Broken.Revision), res.Broken.FailedNode, res.Broken.FailReason)
	p.line("  (the revision's status: %s)", res.Broken.Message)
	p.line("  rolled back: every node runs %s again, %.1fs after the change", ShortName(res.Broken.RolledBackTo), res.Broken.Duration().Seconds())
	broken, err := c.network(brokenNetwork)
	if err != nil {
		return err
	}
	res.BrokenVXLAN = broken.VXLAN()
	res.MTUAfter = map[string]int{}
	var mtus []string
	for _, n := range c.nodes {
		l, err := n.NS.Handle().LinkByName(res.BrokenVXLAN)
		if err != nil {
			return fmt.Errorf("%s on %s: %w", res.BrokenVXLAN, n.Name, err)
		}
		res.MTUAfter[n.Name] = l.Attrs().MTU
		mtus = append(mtus, fmt.Sprintf("%s %d", n.Name, l.Attrs().MTU))
	}
	p.line("  MTU of %s now: %s", res.BrokenVXLAN, strings.Join(mtus, ", "))
	return nil
}

// showAfterRollback measures the connectivity matrix again after the rollback.
func (c *Cluster) showAfterRollback(ctx context.Context, p *printer, res *Results) error {
	var err error
	if res.AfterRollback, err = c.measure(ctx); err != nil {
		return err
	}
	bridged, bok := res.AfterRollback.Count(PathBridged)
	routed, rok := res.AfterRollback.Count(PathRouted)
	blocked, xok := res.AfterRollback.Count(PathBlocked)
	p.line("  connectivity after the rollback: %d/%d bridged, %d/%d routed pairs reach each other, %d/%d cross-tenant pairs blocked",
		bok, bridged, rok, routed, xok, blocked)
	if bad := res.AfterRollback.Unexpected(); len(bad) > 0 {
		return fmt.Errorf("connectivity after the rollback: %d pairs not as expected, first: %s -> %s (%s)",
			len(bad), bad[0].From.Label(), bad[0].To.Label(), bad[0].Path)
	}
	return nil
}

// waitUnderlay waits until the route reflector has an Established IPv4 and EVPN session with every node and
// every node reaches every other node's loopback (the VTEPs) through the fabric.
func (c *Cluster) waitUnderlay(ctx context.Context, p *printer) (time.Duration, error) {
	err := wait.Poll(ctx, 250*time.Millisecond, 60*time.Second, "BGP sessions of the route reflector", c.reflectorEstablished)
	if err != nil {
		return 0, err
	}
	p.line("  route reflector: iBGP (ipv4 unicast + l2vpn evpn) Established with all %d nodes, unnumbered over the uplinks", len(c.nodes))
	for _, from := range c.nodes {
		for _, to := range c.nodes {
			if from == to {
				continue
			}
			err := wait.Poll(ctx, 250*time.Millisecond, 30*time.Second, fmt.Sprintf("%s reaches %s's loopback %s", from.Name, to.Name, to.Address),
				func(ctx context.Context) (bool, string, error) {
					r, err := from.NS.Ping(ctx, to.Address, lab.PingOptions{Count: 1, Wait: 500 * time.Millisecond})
					if err != nil {
						return false, err.Error(), nil
					}
					return r.Received == 1, "no reply", nil
				})
			if err != nil {
				return 0, err
			}
		}
	}
	up := time.Since(c.operatorStart)
	p.line("  every node reaches every other node's loopback (VTEP) through the fabric: underlay up %.1fs after the operator started",
		up.Seconds())
	return up, nil
}

// reflectorEstablished reports whether the route reflector has an Established IPv4 and EVPN session with every
// node (a poll condition).
func (c *Cluster) reflectorEstablished(ctx context.Context) (bool, string, error) {
	type peers map[string]struct {
		State string `json:"state"`
	}
	var sum struct {
		IPv4 struct{ Peers peers } `json:"ipv4Unicast"`
		EVPN struct{ Peers peers } `json:"l2VpnEvpn"`
	}
	if err := c.fabric.JSON(ctx, "show bgp summary json", &sum); err != nil {
		return false, err.Error(), nil
	}
	for _, n := range c.nodes {
		for af, ps := range map[string]peers{"ipv4 unicast": sum.IPv4.Peers, "l2vpn evpn": sum.EVPN.Peers} {
			if st := ps[n.Name].State; st != "Established" {
				return false, fmt.Sprintf("%s %s: %q", n.Name, af, st), nil
			}
		}
	}
	return true, "", nil
}

// reflectorConnections counts, per node and address family, the sessions the route reflector has had
// Established with the node (FRR's connectionsEstablished): a session that went down and came back counts one more.
func (c *Cluster) reflectorConnections(ctx context.Context) (map[string]uint64, error) {
	type peers map[string]struct {
		State       string `json:"state"`
		Established uint64 `json:"connectionsEstablished"`
	}
	var sum struct {
		IPv4 struct{ Peers peers } `json:"ipv4Unicast"`
		EVPN struct{ Peers peers } `json:"l2VpnEvpn"`
	}
	if err := c.fabric.JSON(ctx, "show bgp summary json", &sum); err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, n := range c.nodes {
		for af, ps := range map[string]peers{"ipv4 unicast": sum.IPv4.Peers, "l2vpn evpn": sum.EVPN.Peers} {
			p := ps[n.Name]
			if p.State != "Established" {
				return nil, fmt.Errorf("%s %s: %q, not Established", n.Name, af, p.State)
			}
			out[n.Name+" "+af] = p.Established
		}
	}
	return out, nil
}

// waitNodesReady waits until every agent has set its Node condition and removed the start-up taint.
func (c *Cluster) waitNodesReady(ctx context.Context, p *printer) error {
	err := wait.Poll(ctx, 200*time.Millisecond, 60*time.Second, "agents mark their Nodes ready", func(ctx context.Context) (bool, string, error) {
		for _, n := range c.nodes {
			var node corev1.Node
			if err := c.client.Get(ctx, client.ObjectKey{Name: n.Name}, &node); err != nil {
				return false, err.Error(), nil
			}
			if slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == kube.DefaultStartupTaint }) {
				return false, n.Name + " still has the start-up taint", nil
			}
			if !slices.ContainsFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool {
				return c.Type == kube.ConditionNodeReady && c.Status == corev1.ConditionTrue
			}) {
				return false, n.Name + " has no " + string(kube.ConditionNodeReady) + "=True condition", nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	p.line("  every agent set its Node's condition %s=True and removed the start-up taint", kube.ConditionNodeReady)
	return nil
}

// applyAndRoll applies files and shows the rollout they cause until it settles.
func (c *Cluster) applyAndRoll(ctx context.Context, p *printer, files ...string) (*Rollout, error) {
	after := c.LastSequence()
	since := time.Now()
	var applied []client.Object
	for _, f := range files {
		objs, lines, err := c.apply(ctx, f)
		for _, l := range lines {
			p.line("  apply %s: %s", c.rel(f), l)
		}
		if err != nil {
			return nil, err
		}
		applied = append(applied, objs...)
	}
	p.line("  rollout (operator: one node at a time; agent: netlink, FRR, eBPF tables, health check, status):")
	return c.showRollout(ctx, p, after, since, "", func(ctx context.Context, rev string) (bool, error) {
		return c.revisionIncludes(ctx, rev, applied)
	})
}

// showRollout prints the rollout's events as they happen and its table once it settled.
func (c *Cluster) showRollout(ctx context.Context, p *printer, after int64, since time.Time, sinceWhat string,
	includes func(context.Context, string) (bool, error)) (*Rollout, error) {
	r, err := c.WaitRollout(ctx, after, since, rolloutTimeout, func(ev RolloutEvent) {
		p.line("  %s", RenderEvent(ev, since))
	}, includes)
	if err != nil {
		return nil, err
	}
	r.SinceWhat = sinceWhat
	p.block(RenderRollout(r, c.nodeNames()))
	return r, nil
}

func (c *Cluster) nodeNames() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Name
	}
	return out
}

// checkWebhook sends an invalid Layer2NetworkConfiguration (dry run: a gateway written as its network's address)
// and returns the API server's refusal, which only the operator's webhook can give (the CRD schema accepts it).
// DemoInvalidGateway is the anycast gateway the demo's webhook check sends: a network address, not a host's.
const DemoInvalidGateway = "10.40.0.0/24"

func (c *Cluster) checkWebhook(ctx context.Context) (string, error) {
	bad := &v1.Layer2NetworkConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-invalid"},
		Spec: v1.Layer2NetworkConfigurationSpec{ID: 4000, VNI: 4000, MTU: 1500,
			AnycastMac: "02:00:00:00:0f:a0", AnycastGateways: []string{DemoInvalidGateway}},
	}
	err := c.client.Create(ctx, bad, client.DryRunAll)
	if err == nil {
		return "", fmt.Errorf("the API server accepted the gateway %s, a network address: is the webhook installed?", DemoInvalidGateway)
	}
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) && !strings.Contains(err.Error(), "denied the request") {
		return "", fmt.Errorf("webhook check: %w", err)
	}
	return err.Error(), nil
}

// FRRLines returns the lines of a node's FRR running config that contain s.
func (c *Cluster) FRRLines(ctx context.Context, n *Node, s string) ([]string, error) {
	out, err := c.vtysh(ctx, n, "show running-config")
	if err != nil {
		return nil, fmt.Errorf("FRR config of %s: %w", n.Name, err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, s) {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return lines, nil
}

func (c *Cluster) network(name string) (Network, error) {
	for _, n := range c.samples.Networks {
		if n.Name == name {
			return n, nil
		}
	}
	return Network{}, fmt.Errorf("samples have no network %s", name)
}

// rel shortens a path below the repository root for display.
func (c *Cluster) rel(path string) string {
	if r, err := filepath.Rel(c.opts.RepoRoot, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// printer writes the scenario's output.
type printer struct {
	w io.Writer
	n int
}

func (p *printer) heading(format string, args ...any) {
	p.n++
	fmt.Fprintf(p.w, "\n== %s\n", fmt.Sprintf(format, args...))
}

func (p *printer) line(format string, args ...any) { fmt.Fprintf(p.w, format+"\n", args...) }

func (p *printer) block(s string) { fmt.Fprint(p.w, s) }
