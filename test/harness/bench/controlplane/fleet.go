package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/agent/kube"
	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/nodestatus"
	"github.com/network-operator/network-operator/agent/reconcile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// fleet simulates one node agent per NodeNetworkConfig, cheaply, in this process: one shared informer sees every
// configuration; a new spec generation is "applied" after a seeded delay (applyDelay), then the agent writes what
// the real agent (agent/kube) writes after a successful reconcile: the status built by agent/nodestatus (a
// merge patch of the status subresource) and the Node's NetworkOperatorReady condition (a strategic merge patch).
// It also audits the pace: the most configurations unconfirmed at once.
type fleet struct {
	c    client.Client
	seed uint64
	ctx  context.Context

	mu    sync.Mutex
	nodes map[string]*simNode
	// unconfirmed counts configurations whose status does not confirm their spec; peak is its maximum since
	// resetPeak.
	unconfirmed, peak int
	errs              []error
	wg                sync.WaitGroup
}

type simNode struct {
	latest    *v1.NodeNetworkConfig
	scheduled int64 // the generation an apply was scheduled for
	confirmed bool
	condition bool // the Node's NetworkOperatorReady condition was written once
}

// startFleet registers the agents on the configurations' informer of c (a started cache's informer is fine: the
// handler gets every configuration it already holds). They stop when ctx ends; wait waits for them.
func startFleet(ctx context.Context, informers cache.Informers, c client.Client, seed uint64) (*fleet, error) {
	f := &fleet{c: c, seed: seed, ctx: ctx, nodes: map[string]*simNode{}}
	inf, err := informers.GetInformer(ctx, &v1.NodeNetworkConfig{})
	if err != nil {
		return nil, fmt.Errorf("informer of NodeNetworkConfigs: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.seen(obj) },
		UpdateFunc: func(_, obj any) { f.seen(obj) },
		DeleteFunc: func(obj any) { f.gone(obj) },
	}); err != nil {
		return nil, fmt.Errorf("agents' handler: %w", err)
	}
	return f, nil
}

// applyDelay is how long node name takes to apply generation gen: 10-80 ms, a ninth of the nodes 300 ms more
// (the delays of the controllers' BenchmarkRollout100Nodes), the same for the same seed, node and generation.
func applyDelay(seed uint64, name string, gen int64) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	rng := rand.New(rand.NewPCG(seed^h.Sum64(), uint64(gen)))
	d := 10*time.Millisecond + time.Duration(rng.IntN(70))*time.Millisecond
	if rng.IntN(9) == 0 {
		d += 300 * time.Millisecond
	}
	return d
}

// confirms is the operator's definition of a node that runs its spec (operator/controllers nodeState and
// rollout.confirmed): applied revision, map version and a Ready of the current generation.
func confirms(n *v1.NodeNetworkConfig) bool {
	c := meta.FindStatusCondition(n.Status.Conditions, v1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= n.Generation &&
		n.Status.AppliedRevision == n.Spec.Revision && n.Status.MapVersion == n.Spec.ExpectedMapVersion
}

func (f *fleet) seen(obj any) {
	nnc, ok := obj.(*v1.NodeNetworkConfig)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.nodes[nnc.Name]
	if s == nil {
		s = &simNode{confirmed: true}
		f.nodes[nnc.Name] = s
	}
	s.latest = nnc
	f.setConfirmedLocked(s, confirms(nnc))
	if nnc.Generation == s.scheduled || f.ctx.Err() != nil {
		return
	}
	s.scheduled = nnc.Generation
	name, gen := nnc.Name, nnc.Generation
	f.wg.Add(1)
	time.AfterFunc(applyDelay(f.seed, name, gen), func() {
		defer f.wg.Done()
		f.apply(name, gen)
	})
}

func (f *fleet) gone(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	nnc, ok := obj.(*v1.NodeNetworkConfig)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.nodes[nnc.Name]; s != nil {
		f.setConfirmedLocked(s, true)
		delete(f.nodes, nnc.Name)
	}
}

func (f *fleet) setConfirmedLocked(s *simNode, confirmed bool) {
	switch {
	case s.confirmed && !confirmed:
		f.unconfirmed++
		f.peak = max(f.peak, f.unconfirmed)
	case !s.confirmed && confirmed:
		f.unconfirmed--
	}
	s.confirmed = confirmed
}

// apply writes the status of generation gen of node name, unless a newer spec arrived meanwhile (its own apply
// is scheduled).
func (f *fleet) apply(name string, gen int64) {
	if f.ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	s := f.nodes[name]
	if s == nil || s.latest.Generation != gen {
		f.mu.Unlock()
		return
	}
	cur, firstCondition := s.latest.DeepCopy(), !s.condition
	s.condition = true
	f.mu.Unlock()

	now := metav1.Now()
	spec := &cur.Spec
	out := &reconcile.Outcome{Spec: spec, MapVersion: spec.ExpectedMapVersion, Healthy: true,
		Good: &lastapplied.Good{Revision: spec.Revision, MapVersion: spec.ExpectedMapVersion, SpecHash: lastapplied.SpecHash(spec)}}
	st := nodestatus.Build(out, cur.Status, cur.Generation, now)
	if !nodestatus.Equal(st, cur.Status) {
		next := cur.DeepCopy()
		next.Status = st
		if err := f.c.Status().Patch(f.ctx, next, client.MergeFrom(cur)); err != nil {
			f.fail(fmt.Errorf("agent %s: write status: %w", name, err))
			return
		}
	}
	cond := map[string]any{"type": kube.ConditionNodeReady, "status": corev1.ConditionTrue, "reason": nodestatus.ReasonHealthy,
		"message": "network configuration " + spec.Revision + " applied and healthy", "lastHeartbeatTime": now}
	if firstCondition {
		cond["lastTransitionTime"] = now
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{cond}}})
	if err != nil {
		f.fail(fmt.Errorf("agent %s: node condition: %w", name, err))
		return
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := f.c.Status().Patch(f.ctx, node, client.RawPatch(types.StrategicMergePatchType, body)); err != nil {
		f.fail(fmt.Errorf("agent %s: node condition: %w", name, err))
	}
}

func (f *fleet) fail(err error) {
	if f.ctx.Err() != nil {
		return // stopping: requests are cancelled
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) < 10 {
		f.errs = append(f.errs, err)
	}
}

// resetPeak starts a new audit window and returns the previous window's peak.
func (f *fleet) resetPeak() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.peak
	f.peak = f.unconfirmed
	return p
}

// errors returns the first failed writes (an agent whose write fails stays unconfirmed: the rollout stalls).
func (f *fleet) errors() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]error(nil), f.errs...)
}

// wait waits for the scheduled applies to end (after ctx ended they return at once).
func (f *fleet) wait() { f.wg.Wait() }
