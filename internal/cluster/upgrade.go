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

	"github.com/network-operator/network-operator/internal/lab"
	"github.com/network-operator/network-operator/internal/wait"
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

// UpgradeAgents imports a new agent image archive into every node, starts a sequence-numbered flow through every
// node's eBPF router, runs `helm upgrade` to the new image and watches the DaemonSet replace the agent pods, then
// stops the flows and reads the BPF attachments again.
func (c *Cluster) UpgradeAgents(ctx context.Context, archive, tag string) (*Upgrade, error) {
	if c.opts.Install != InstallHelm {
		return nil, errors.New("upgrade: only in the helm form")
	}
	if len(c.flows) == 0 {
		return nil, errors.New("upgrade: no flow pairs planned")
	}
	if err := c.kube.ImportImages(ctx, archive); err != nil {
		return nil, err
	}
	var ends []*Workload
	for _, f := range c.flows {
		ends = append(ends, f.From, f.To)
	}
	if err := c.plug(ctx, ends); err != nil {
		return nil, err
	}
	u := &Upgrade{Image: tag}
	for _, f := range c.flows {
		for _, w := range []*Workload{f.From, f.To} {
			if err := c.learn(ctx, w); err != nil {
				return nil, err
			}
		}
		ok, err := PingOnce(ctx, f.From, f.To.Addr)
		if err != nil || !ok {
			return nil, fmt.Errorf("flow pair on %s: %s cannot reach %s before the upgrade (%v)", f.Node.Name, f.From.Label(), f.To.Label(), err)
		}
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
	// Each node's sender also sends to the next node's receiver: traffic between nodes.
	cross := make([]*Workload, len(c.flows))
	for i, f := range c.flows {
		to := c.flows[(i+1)%len(c.flows)].To
		if to.Node == f.Node {
			continue // a single node: no traffic between nodes
		}
		ok, err := PingOnce(ctx, f.From, to.Addr)
		if err != nil || !ok {
			return nil, fmt.Errorf("cross-node pair %s -> %s cannot reach before the upgrade (%v)", f.From.Label(), to.Label(), err)
		}
		cross[i] = to
	}
	var flows, crossFlows []*lab.Flow
	defer func() {
		for _, f := range append(flows, crossFlows...) {
			if f != nil {
				_, _ = f.Stop(context.WithoutCancel(ctx))
			}
		}
	}()
	for i, f := range c.flows {
		fl, err := lab.StartFlow(ctx, lab.FlowOptions{From: f.From.NS, To: f.To.NS, Dst: f.To.Addr, Rate: flowRate})
		if err != nil {
			return nil, fmt.Errorf("flow on %s: %w", f.Node.Name, err)
		}
		flows = append(flows, fl)
		var cf *lab.Flow
		if to := cross[i]; to != nil {
			if cf, err = lab.StartFlow(ctx, lab.FlowOptions{From: f.From.NS, To: to.NS, Dst: to.Addr, Rate: flowRate}); err != nil {
				return nil, fmt.Errorf("flow %s -> %s: %w", f.From.Label(), to.Label(), err)
			}
		}
		crossFlows = append(crossFlows, cf)
	}
	connsBefore, err := c.reflectorConnections(ctx)
	if err != nil {
		return nil, fmt.Errorf("route reflector before the upgrade: %w", err)
	}
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
	connsAfter, err := c.reflectorConnections(ctx)
	if err != nil {
		return nil, fmt.Errorf("route reflector after the upgrade: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(connsBefore)) {
		if connsAfter[k] != connsBefore[k] {
			u.SessionResets = append(u.SessionResets, fmt.Sprintf("%s (%d -> %d connections)", k, connsBefore[k], connsAfter[k]))
		}
	}
	// A last second of traffic on the new agents.
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Second):
	}
	running, runningCross := flows, crossFlows
	flows, crossFlows = nil, nil
	for i, fl := range running {
		r, err := fl.Stop(ctx)
		if err != nil {
			return nil, fmt.Errorf("flow on %s: %w", u.Nodes[i].Node, err)
		}
		u.Nodes[i].Flow = r
	}
	for i, fl := range runningCross {
		if fl == nil {
			continue
		}
		r, err := fl.Stop(ctx)
		if err != nil {
			return nil, fmt.Errorf("flow %s -> %s: %w", c.flows[i].From.Label(), cross[i].Label(), err)
		}
		u.Cross = append(u.Cross, CrossFlow{From: c.flows[i].From.Label() + " (" + c.flows[i].Node.Name + ")",
			To: cross[i].Label() + " (" + cross[i].Node.Name + ")", Flow: r})
	}
	for i, f := range c.flows {
		after, err := Hooks(f.Node.NS)
		if err != nil {
			return nil, fmt.Errorf("BPF programs on %s: %w", f.Node.Name, err)
		}
		u.Nodes[i].After = after
	}
	return u, nil
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
			case p.Name != nu.OldPod && podReady(&p) && usesTag(&p, u.Image) && nu.Ready.IsZero():
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

func usesTag(p *corev1.Pod, tag string) bool {
	return slices.ContainsFunc(p.Spec.Containers, func(ct corev1.Container) bool {
		return ct.Name == agentContainer && strings.HasSuffix(ct.Image, ":"+tag)
	})
}
