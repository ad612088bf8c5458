package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	operatorapp "github.com/network-operator/network-operator/operator/app"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// EventTraffic is what the flows saw during one event: the flows through every node's eBPF router (by flow
// pair), those between nodes, and the route reflector's sessions that went down and came back.
type EventTraffic struct {
	Nodes         []lab.FlowResult
	Cross         []CrossFlow
	SessionResets []string
}

// NodeConfigs are the node configurations' revisions by node: what the operator assigned and what the node
// applied or failed.
type NodeConfigs map[string]NodeConfigState

// NodeConfigState is one node's NodeNetworkConfig in brief.
type NodeConfigState struct{ Spec, Applied, Failed string }

// nodeConfigs reads every node's NodeNetworkConfig.
func (c *Cluster) nodeConfigs(ctx context.Context) (NodeConfigs, error) {
	var list v1.NodeNetworkConfigList
	if err := c.client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list node configs: %w", err)
	}
	out := NodeConfigs{}
	for _, n := range list.Items {
		out[n.Name] = NodeConfigState{Spec: n.Spec.Revision, Applied: n.Status.AppliedRevision, Failed: n.Status.FailedRevision}
	}
	return out, nil
}

// OperatorUpgrade is the result of UpgradeOperator.
type OperatorUpgrade struct {
	EventTraffic
	Image string
	// OldLeader and NewLeader hold the leader election lease before and after.
	OldLeader, NewLeader string
	Duration             time.Duration
	// Before and After are the node configurations; SeqBefore and SeqAfter the newest revision's sequence: a new
	// operator that finds its revisions in place makes none and reassigns nothing.
	Before, After       NodeConfigs
	SeqBefore, SeqAfter int64
}

// UpgradeOperator imports the operator image of archive and moves the operator Deployment to tag with `helm
// upgrade` under traffic, then waits until every replica runs it and one of the new pods leads.
func (c *Cluster) UpgradeOperator(ctx context.Context, archive, tag string) (*OperatorUpgrade, error) {
	if c.opts.Install != InstallHelm {
		return nil, errors.New("operator upgrade: only in the helm form")
	}
	if err := c.kube.ImportImages(ctx, archive); err != nil {
		return nil, err
	}
	u := &OperatorUpgrade{Image: tag, SeqBefore: c.LastSequence()}
	var err error
	if u.Before, err = c.nodeConfigs(ctx); err != nil {
		return nil, err
	}
	if u.OldLeader, err = c.operatorLeader(ctx); err != nil {
		return nil, err
	}
	tr, err := c.startTraffic(ctx, "operator upgrade")
	if err != nil {
		return nil, err
	}
	defer tr.abort(ctx)
	start := time.Now()
	if _, err := c.helm(ctx, "upgrade", Release, c.opts.Chart, "--namespace", Namespace, "--reuse-values",
		"--set", "operator.image.tag="+tag); err != nil {
		return nil, err
	}
	err = wait.Poll(ctx, 250*time.Millisecond, 3*time.Minute, "every operator replica on "+tag+" and one of them leading",
		func(ctx context.Context) (bool, string, error) {
			pods, err := c.operatorPods(ctx)
			if err != nil {
				return false, err.Error(), nil
			}
			var d appsv1.Deployment
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: OperatorDeploy}, &d); err != nil {
				return false, err.Error(), nil
			}
			want := int(*d.Spec.Replicas)
			var onTag []string
			for _, p := range pods {
				if usesTag(&p, operatorContainer, tag) && podReady(&p) && p.DeletionTimestamp == nil {
					onTag = append(onTag, p.Name)
				}
			}
			if len(onTag) != want || len(pods) != want {
				return false, fmt.Sprintf("%d of %d replicas ready on %s, %d pods", len(onTag), want, tag, len(pods)), nil
			}
			leader, err := c.operatorLeader(ctx)
			if err != nil || !slices.Contains(onTag, leader) {
				return false, fmt.Sprintf("leader %q (%v), want one of %v", leader, err, onTag), nil
			}
			u.NewLeader = leader
			return true, "", nil
		})
	if err != nil {
		return nil, err
	}
	u.Duration = time.Since(start)
	if u.Nodes, u.Cross, u.SessionResets, err = tr.stop(ctx, "operator upgrade"); err != nil {
		return nil, err
	}
	if u.After, err = c.nodeConfigs(ctx); err != nil {
		return nil, err
	}
	u.SeqAfter = c.LastSequence()
	return u, nil
}

// operatorPods are the pods of the operator Deployment.
func (c *Cluster) operatorPods(ctx context.Context) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.client.List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels{"app.kubernetes.io/name": OperatorDeploy, "app.kubernetes.io/instance": Release}); err != nil {
		return nil, fmt.Errorf("list operator pods: %w", err)
	}
	return pods.Items, nil
}

// operatorLeader is the pod holding the operator's leader election lease (its holder identity begins with the
// pod's name).
func (c *Cluster) operatorLeader(ctx context.Context) (string, error) {
	var l coordinationv1.Lease
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: operatorapp.LeaderElectionID}, &l); err != nil {
		return "", fmt.Errorf("operator lease: %w", err)
	}
	if l.Spec.HolderIdentity == nil {
		return "", errors.New("operator lease: no holder")
	}
	pods, err := c.operatorPods(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range pods {
		if strings.HasPrefix(*l.Spec.HolderIdentity, p.Name+"_") {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("operator lease held by %q, not a pod of the Deployment", *l.Spec.HolderIdentity)
}

// ChangeEvent is a configuration change rolled out while something else happened to the cluster.
type ChangeEvent struct {
	EventTraffic
	// Rollout is the change's rollout; Before and After the node configurations around it.
	Rollout       *Rollout
	Before, After NodeConfigs
	// Detail says what happened, when.
	Detail string
}

// ToggleChange flips the demo's export change (ChangeExportFile): applied when it is not in force, undone (the
// tenants' resources as the demo started, TenantsFile, applied again) when it is. Either way the content is new:
// a revision to roll out.
func (c *Cluster) ToggleChange(ctx context.Context) error {
	change, err := decodeFile(filepath.Join(c.samples.Dir, ChangeExportFile))
	if err != nil {
		return err
	}
	inForce := false
	for _, o := range change {
		cur, ok := o.(*v1.VRFRouteConfiguration)
		if !ok {
			continue
		}
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			return fmt.Errorf("get %s: %w", o.GetName(), err)
		}
		inForce = slices.ContainsFunc(cur.Spec.Export, func(p v1.PrefixItem) bool { return p.CIDR == changePrefix })
	}
	file := ChangeExportFile
	if inForce {
		file = TenantsFile
	}
	_, _, err = c.apply(ctx, filepath.Join(c.samples.Dir, file))
	return err
}

// KillAgentMidApply makes a change under traffic and, the moment the operator assigns its revision to the first
// node, kills that node's agent (its pod deleted without a grace period, as a crash or an OOM kill ends it). The
// next agent finds a half-applied node; the rollout must still complete, with nothing rolled back.
func (c *Cluster) KillAgentMidApply(ctx context.Context, change func(context.Context) error) (*ChangeEvent, error) {
	var mu sync.Mutex
	var killErr error
	var detail string
	killed := false
	return c.changeUnder(ctx, "agent killed mid-apply", rolloutTimeout, change, func(ctx context.Context, ev RolloutEvent) {
		mu.Lock()
		defer mu.Unlock()
		if killed || ev.Node == "" || ev.State != StateApplying {
			return
		}
		killed = true
		n := c.node(ev.Node)
		if n == nil {
			killErr = fmt.Errorf("revision %s assigned to unknown node %s", ev.Revision, ev.Node)
			return
		}
		p, err := c.agentPod(ctx, n)
		if err == nil {
			err = c.client.Delete(ctx, p, client.GracePeriodSeconds(0))
		}
		if err != nil {
			killErr = fmt.Errorf("kill the agent of %s: %w", n.Name, err)
			return
		}
		detail = fmt.Sprintf("agent pod %s of %s killed %v after the operator assigned it %s", p.Name, n.Name,
			time.Since(ev.At).Round(time.Millisecond), ShortName(ev.Revision))
	}, func() (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if !killed && killErr == nil {
			killErr = errors.New("no node was assigned the change's revision: no agent killed")
		}
		return detail, killErr
	})
}

// APIServerOutage makes a change under traffic and, the moment the operator assigns its revision to the first
// node, stops the API server for down. Agents and operator find it gone mid-rollout; once it is back the rollout
// must complete, with nothing failed or rolled back.
func (c *Cluster) APIServerOutage(ctx context.Context, down time.Duration, change func(context.Context) error) (*ChangeEvent, error) {
	if c.opts.Install != InstallHelm {
		return nil, errors.New("API server outage: only in the helm form (its own control plane)")
	}
	var mu sync.Mutex
	var outageErr error
	var detail string
	started := false
	done := make(chan struct{})
	return c.changeUnder(ctx, "API server outage", rolloutTimeout+down, change, func(ctx context.Context, ev RolloutEvent) {
		mu.Lock()
		defer mu.Unlock()
		if started || ev.Node == "" || ev.State != StateApplying {
			return
		}
		started = true
		go func() {
			defer close(done)
			after := time.Since(ev.At).Round(time.Millisecond)
			err := c.kube.APIServerOutage(ctx, down)
			mu.Lock()
			defer mu.Unlock()
			outageErr = err
			detail = fmt.Sprintf("API server stopped for %v, %v after the operator assigned %s to %s", down, after,
				ShortName(ev.Revision), ev.Node)
		}()
	}, func() (string, error) {
		mu.Lock()
		s := started
		mu.Unlock()
		if !s {
			return "", errors.New("no node was assigned the change's revision: the API server was not stopped")
		}
		<-done
		mu.Lock()
		defer mu.Unlock()
		return detail, outageErr
	})
}

// changeUnder runs change under traffic, calls onEvent with the rollout's events as they happen, and waits (up to
// timeout) for the rollout to settle; finish reports what onEvent did.
func (c *Cluster) changeUnder(ctx context.Context, event string, timeout time.Duration, change func(context.Context) error,
	onEvent func(context.Context, RolloutEvent), finish func() (string, error)) (*ChangeEvent, error) {
	e := &ChangeEvent{}
	var err error
	if e.Before, err = c.nodeConfigs(ctx); err != nil {
		return nil, err
	}
	tr, err := c.startTraffic(ctx, event)
	if err != nil {
		return nil, err
	}
	defer tr.abort(ctx)
	after, since := c.LastSequence(), time.Now()
	if err := change(ctx); err != nil {
		return nil, fmt.Errorf("%s: the change: %w", event, err)
	}
	r, err := c.WaitRollout(ctx, after, since, timeout, func(ev RolloutEvent) { onEvent(ctx, ev) }, nil)
	detail, ferr := finish()
	if err := errors.Join(err, ferr); err != nil {
		return nil, fmt.Errorf("%s: %w", event, err)
	}
	e.Rollout, e.Detail = r, detail
	// Every node back to a ready agent before the flows are read: the rollout may settle before a killed
	// agent's successor is up.
	if err := c.waitAgentPods(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	if e.Nodes, e.Cross, e.SessionResets, err = tr.stop(ctx, event); err != nil {
		return nil, err
	}
	if e.After, err = c.nodeConfigs(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// node is the node named name (nil: none).
func (c *Cluster) node(name string) *Node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// NewFailures are the nodes whose failed revision changed between before and after, with it.
func NewFailures(before, after NodeConfigs) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if a := after[name]; a.Failed != "" && a.Failed != before[name].Failed {
			out = append(out, name+": "+a.Failed)
		}
	}
	return out
}
