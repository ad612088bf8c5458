package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// flowRate is the packet rate of each upgrade flow (UDP, sequence-numbered).
const flowRate = 1000

// NodeUpgrade is what one node saw while the agent DaemonSet rolled to the new image.
type NodeUpgrade struct {
	Node string
	// OldPod and NewPod are the agent pods before and after; Down is when the old pod began terminating, Ready
	// when the new one was ready.
	OldPod, NewPod string
	Down, Ready    time.Time
	// Flow counts the sequence-numbered flow routed by this node's eBPF router during the whole upgrade.
	Flow lab.FlowResult
	// Before and After are the BPF programs on the node's interfaces (kernel view) before and after.
	Before, After []Hook
}

// CrossFlow is a sequence-numbered flow from a workload on one node to one on the next node (routed between two
// networks of the VRF, over the fabric): it needs both nodes' eBPF routers and the EVPN routes FRR installed.
type CrossFlow struct {
	From, To string
	Flow     lab.FlowResult
}

// Upgrade is the result of UpgradeAgents.
type Upgrade struct {
	Image string
	Nodes []NodeUpgrade
	// Cross are the flows between nodes during the whole upgrade.
	Cross    []CrossFlow
	Duration time.Duration
	// BGPBack is the time from the last new pod's readiness until the route reflector had every node's
	// sessions Established again (0 when they never went down).
	BGPBack time.Duration
	// SessionResets are the route reflector's sessions (node and address family) that went down and came back
	// during the upgrade: none when FRR runs in a DaemonSet of its own (frr.mode=daemonset).
	SessionResets []string
}

// Overlapping returns pairs of nodes whose agent was down at the same time (want none: one node at a time).
func (u *Upgrade) Overlapping() []string {
	var out []string
	for i, a := range u.Nodes {
		for _, b := range u.Nodes[i+1:] {
			if a.Down.Before(b.Ready) && b.Down.Before(a.Ready) {
				out = append(out, a.Node+"+"+b.Node)
			}
		}
	}
	return out
}

// traffic is the sequence-numbered flows of an event: one through every node's eBPF router (a flow pair) and one
// from every node's sender to the next node's receiver (between nodes).
type traffic struct {
	c           *Cluster
	flows       []*lab.Flow
	cross       []*lab.Flow // by flow pair; nil where there is no next node
	crossTo     []*Workload
	connsBefore map[string]uint64
}

// startTraffic plugs and checks the flow pairs (each pair and each cross-node pair must reach before the event),
// records the route reflector's session counters and starts the flows.
func (c *Cluster) startTraffic(ctx context.Context, event string) (*traffic, error) {
	if len(c.flows) == 0 {
		return nil, errors.New(event + ": no flow pairs planned")
	}
	var ends []*Workload
	for _, f := range c.flows {
		ends = append(ends, f.From, f.To)
	}
	if err := c.plug(ctx, ends); err != nil {
		return nil, err
	}
	tr := &traffic{c: c, crossTo: make([]*Workload, len(c.flows))}
	for _, w := range ends { // every end known to the fabric before any pair is tried
		if err := c.learn(ctx, w); err != nil {
			return nil, err
		}
	}
	for i, f := range c.flows {
		if ok, err := PingOnce(ctx, f.From, f.To.Addr); err != nil || !ok {
			return nil, fmt.Errorf("flow pair on %s: %s cannot reach %s before the %s (%v)", f.Node.Name, f.From.Label(), f.To.Label(), event, err)
		}
		if to := c.crossTo(i); to != nil {
			if ok, err := PingOnce(ctx, f.From, to.Addr); err != nil || !ok {
				return nil, fmt.Errorf("cross-node pair %s -> %s cannot reach before the %s (%v)", f.From.Label(), to.Label(), event, err)
			}
			tr.crossTo[i] = to
		}
	}
	var err error
	if tr.connsBefore, err = c.reflectorConnections(ctx); err != nil {
		return nil, fmt.Errorf("route reflector before the %s: %w", event, err)
	}
	for i, f := range c.flows {
		fl, err := lab.StartFlow(ctx, lab.FlowOptions{From: f.From.NS, To: f.To.NS, Dst: f.To.Addr, Rate: flowRate})
		if err != nil {
			tr.abort(ctx)
			return nil, fmt.Errorf("flow on %s: %w", f.Node.Name, err)
		}
		tr.flows = append(tr.flows, fl)
		var cf *lab.Flow
		if to := tr.crossTo[i]; to != nil {
			if cf, err = lab.StartFlow(ctx, lab.FlowOptions{From: f.From.NS, To: to.NS, Dst: to.Addr, Rate: flowRate}); err != nil {
				tr.abort(ctx)
				return nil, fmt.Errorf("flow %s -> %s: %w", f.From.Label(), to.Label(), err)
			}
		}
		tr.cross = append(tr.cross, cf)
	}
	return tr, nil
}

// abort stops every flow without a result (the event failed).
func (tr *traffic) abort(ctx context.Context) {
	for _, f := range append(tr.flows, tr.cross...) {
		if f != nil {
			_, _ = f.Stop(context.WithoutCancel(ctx))
		}
	}
	tr.flows, tr.cross = nil, nil
}

// stop gives a last second of traffic, stops the flows and reads the route reflector's counters again: the
// results by flow pair, the cross-node ones, and the sessions that went down and came back meanwhile.
func (tr *traffic) stop(ctx context.Context, event string) (nodes []lab.FlowResult, cross []CrossFlow, resets []string, err error) {
	defer tr.abort(ctx)
	select {
	case <-ctx.Done():
		return nil, nil, nil, ctx.Err()
	case <-time.After(time.Second):
	}
	for i, fl := range tr.flows {
		r, err := fl.Stop(ctx)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("flow on %s: %w", tr.c.flows[i].Node.Name, err)
		}
		nodes = append(nodes, r)
	}
	for i, fl := range tr.cross {
		if fl == nil {
			continue
		}
		r, err := fl.Stop(ctx)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("flow %s -> %s: %w", tr.c.flows[i].From.Label(), tr.crossTo[i].Label(), err)
		}
		f := tr.c.flows[i]
		cross = append(cross, CrossFlow{From: f.From.Label() + " (" + f.Node.Name + ")",
			To: tr.crossTo[i].Label() + " (" + tr.crossTo[i].Node.Name + ")", Flow: r})
	}
	after, err := tr.c.reflectorConnections(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("route reflector after the %s: %w", event, err)
	}
	for _, k := range slices.Sorted(maps.Keys(tr.connsBefore)) {
		if after[k] != tr.connsBefore[k] {
			resets = append(resets, fmt.Sprintf("%s (%d -> %d connections)", k, tr.connsBefore[k], after[k]))
		}
	}
	return nodes, cross, resets, nil
}

// UpgradeAgents imports a new agent image archive into every node, starts sequence-numbered flows through every
// node's eBPF router and between nodes, runs `helm upgrade` to the new image and watches the DaemonSet replace the
// agent pods, then stops the flows and reads the BPF attachments and the route reflector's sessions again.
func (c *Cluster) UpgradeAgents(ctx context.Context, archive, tag string) (*Upgrade, error) {
	if c.opts.Install != InstallHelm {
		return nil, errors.New("upgrade: only in the helm form")
	}
	if err := c.kube.ImportImages(ctx, archive); err != nil {
		return nil, err
	}
	u := &Upgrade{Image: tag}
	for _, f := range c.flows {
		before, err := Hooks(f.Node.NS)
		if err != nil {
			return nil, fmt.Errorf("BPF programs on %s: %w", f.Node.Name, err)
		}
		old, err := c.agentPod(ctx, f.Node)
		if err != nil {
			return nil, err
		}
		u.Nodes = append(u.Nodes, NodeUpgrade{Node: f.Node.Name, OldPod: old.Name, Before: before})
	}
	tr, err := c.startTraffic(ctx, "upgrade")
	if err != nil {
		return nil, err
	}
	defer tr.abort(ctx)
	start := time.Now()
	if _, err := c.helm(ctx, "upgrade", Release, c.opts.Chart, "--namespace", Namespace, "--reuse-values",
		"--set", "agent.image.tag="+tag); err != nil {
		return nil, err
	}
	if err := c.watchAgentRollout(ctx, u); err != nil {
		return nil, err
	}
	u.Duration = time.Since(start)
	ready := time.Now()
	if err := wait.Poll(ctx, 250*time.Millisecond, 2*time.Minute, "BGP sessions after the upgrade", c.reflectorEstablished); err != nil {
		return nil, err
	}
	u.BGPBack = time.Since(ready)
	results, cross, resets, err := tr.stop(ctx, "upgrade")
	if err != nil {
		return nil, err
	}
	u.Cross, u.SessionResets = cross, resets
	for i, f := range c.flows {
		u.Nodes[i].Flow = results[i]
		after, err := Hooks(f.Node.NS)
		if err != nil {
			return nil, fmt.Errorf("BPF programs on %s: %w", f.Node.Name, err)
		}
		u.Nodes[i].After = after
	}
	return u, nil
}

// crossTo is the receiver on the next node that flow pair i's sender also sends to (nil on a single node).
func (c *Cluster) crossTo(i int) *Workload {
	to := c.flows[(i+1)%len(c.flows)].To
	if to.Node == c.flows[i].Node {
		return nil
	}
	return to
}

// CrossNodeReachable waits (up to 30 s) until every flow pair's sender reaches the next node's receiver.
func (c *Cluster) CrossNodeReachable(ctx context.Context) error {
	return wait.Poll(ctx, 250*time.Millisecond, 30*time.Second, "traffic between nodes", func(ctx context.Context) (bool, string, error) {
		for i, f := range c.flows {
			to := c.crossTo(i)
			if to == nil {
				continue
			}
			if ok, err := PingOnce(ctx, f.From, to.Addr); err != nil || !ok {
				return false, fmt.Sprintf("%s cannot reach %s (%v)", f.From.Label(), to.Label(), err), nil
			}
		}
		return true, "", nil
	})
}

// FRRRestart is what the flows saw while one node's FRR pod was replaced.
type FRRRestart struct {
	Node           string
	OldPod, NewPod string
	// Back is the time from the old pod's deletion until the route reflector had the node's sessions again.
	Back time.Duration
	// Nodes are the flows through each node's eBPF router (by flow pair), Cross those between nodes.
	Nodes []lab.FlowResult
	Cross []CrossFlow
	// SessionResets are the route reflector's sessions that went down and came back (the restarted node's).
	SessionResets []string
}

// RestartFRR deletes the FRR pod of node n (frr.mode=daemonset) under traffic, as an FRR upgrade or crash would
// replace it, and waits for its replacement and the node's BGP sessions.
func (c *Cluster) RestartFRR(ctx context.Context, n *Node) (*FRRRestart, error) {
	old, err := c.daemonSetPod(ctx, n, FRRDaemonSet)
	if err != nil {
		return nil, err
	}
	r := &FRRRestart{Node: n.Name, OldPod: old.Name}
	tr, err := c.startTraffic(ctx, "FRR restart")
	if err != nil {
		return nil, err
	}
	defer tr.abort(ctx)
	start := time.Now()
	if err := c.client.Delete(ctx, old); err != nil {
		return nil, fmt.Errorf("delete FRR pod %s: %w", old.Name, err)
	}
	err = wait.Poll(ctx, 100*time.Millisecond, 3*time.Minute, "a new FRR pod on "+n.Name, func(ctx context.Context) (bool, string, error) {
		p, err := c.daemonSetPod(ctx, n, FRRDaemonSet)
		if err != nil || p.Name == old.Name || !podReady(p) {
			return false, fmt.Sprint("waiting: ", err), nil
		}
		r.NewPod = p.Name
		return true, "", nil
	})
	if err != nil {
		return nil, err
	}
	if err := wait.Poll(ctx, 100*time.Millisecond, 3*time.Minute, "BGP sessions after the FRR restart", c.reflectorEstablished); err != nil {
		return nil, err
	}
	r.Back = time.Since(start)
	if r.Nodes, r.Cross, r.SessionResets, err = tr.stop(ctx, "FRR restart"); err != nil {
		return nil, err
	}
	return r, nil
}

// watchAgentRollout follows the DaemonSet until every node runs a ready pod of the new template, recording per
// node when the old pod went and the new one was ready.
func (c *Cluster) watchAgentRollout(ctx context.Context, u *Upgrade) error {
	byNode := map[string]*NodeUpgrade{}
	for i := range u.Nodes {
		byNode[u.Nodes[i].Node] = &u.Nodes[i]
	}
	return wait.Poll(ctx, 50*time.Millisecond, 5*time.Minute, "agent DaemonSet rolled to "+u.Image, func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := c.client.List(ctx, &pods, client.InNamespace(Namespace)); err != nil {
			return false, err.Error(), nil
		}
		now := time.Now()
		for _, p := range pods.Items {
			nu := byNode[p.Spec.NodeName]
			if nu == nil || !ownedByDaemonSet(&p, AgentDaemonSet) {
				continue
			}
			switch {
			case p.Name == nu.OldPod && (p.DeletionTimestamp != nil || !podReady(&p)) && nu.Down.IsZero():
				nu.Down = now
			case p.Name != nu.OldPod && podReady(&p) && usesTag(&p, agentContainer, u.Image) && nu.Ready.IsZero():
				nu.NewPod, nu.Ready = p.Name, now
			}
		}
		for _, nu := range byNode {
			if nu.Down.IsZero() && nu.NewPod != "" {
				nu.Down = nu.Ready // the old pod went between two looks
			}
		}
		var ds appsv1.DaemonSet
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: AgentDaemonSet}, &ds); err != nil {
			return false, err.Error(), nil
		}
		st := ds.Status
		if st.ObservedGeneration < ds.Generation || st.UpdatedNumberScheduled != st.DesiredNumberScheduled ||
			st.NumberReady != st.DesiredNumberScheduled {
			return false, fmt.Sprintf("%d/%d updated, %d ready", st.UpdatedNumberScheduled, st.DesiredNumberScheduled, st.NumberReady), nil
		}
		for _, nu := range byNode {
			if nu.Ready.IsZero() {
				return false, "no new ready pod on " + nu.Node + " yet", nil
			}
		}
		return true, "", nil
	})
}

func podReady(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

// usesTag reports whether p runs its container named container from an image tagged tag.
func usesTag(p *corev1.Pod, container, tag string) bool {
	return slices.ContainsFunc(p.Spec.Containers, func(ct corev1.Container) bool {
		return ct.Name == container && strings.HasSuffix(ct.Image, ":"+tag)
	})
}
