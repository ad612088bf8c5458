package controllers

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// behaviour is how a simulated agent answers a new spec.
type behaviour struct {
	// delay is how long "applying" takes.
	delay time.Duration
	// fail, when set, decides to report a failure for a spec revision.
	fail func(revision string) bool
	// silent, when set, decides to never answer a spec revision.
	silent func(revision string) bool
	// wrongMapVersion reports the right revision with a map version that does not match the spec.
	wrongMapVersion bool
	// mirrors, when set, gives the status.mirrors the agent reports for a spec it applied.
	mirrors func(spec *v1.NodeNetworkConfigSpec) []v1.NodeMirrorStatus
}

// agents simulates one node agent per node: a goroutine that sees its NodeNetworkConfig (through one
// shared watch), "applies" it after a seeded delay and writes the status like the real agent. The same
// watch feeds an auditor that records, in API order, the order in which nodes first received each
// revision and the highest number of unconfirmed configurations at any moment.
type agents struct {
	t      testing.TB
	c      client.Client
	ctx    context.Context
	mu     sync.Mutex
	behave map[string]*behaviour
	kick   map[string]chan struct{}
	latest map[string]*v1.NodeNetworkConfig
	// lastGen is the generation each agent was last kicked for.
	lastGen map[string]int64
	// auditor state
	maxUnconfirmed int
	maxPerRevision map[string]int      // revision hash -> most nodes carrying it unconfirmed at once
	order          map[string][]string // revision hash -> nodes in order of first assignment
	wg             sync.WaitGroup
}

// delays gives node i a seeded pseudo-random delay: most nodes take 10-80 ms, every 9th is slow.
func delays(seed uint64) func(i int) time.Duration {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var mu sync.Mutex
	return func(i int) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		d := 10*time.Millisecond + time.Duration(rng.IntN(70))*time.Millisecond
		if i%9 == 4 {
			d += 300 * time.Millisecond
		}
		return d
	}
}

// startAgents watches every NodeNetworkConfig until the test ends. behaviourOf gives each node its
// behaviour (called on the first sight of a node).
func startAgents(t testing.TB, behaviourOf func(node string) *behaviour) *agents {
	t.Helper()
	env := shared.Get(t)
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &agents{t: t, c: wc, ctx: ctx, behave: map[string]*behaviour{}, kick: map[string]chan struct{}{},
		latest: map[string]*v1.NodeNetworkConfig{}, lastGen: map[string]int64{}, order: map[string][]string{},
		maxPerRevision: map[string]int{}}
	w, err := wc.Watch(ctx, &v1.NodeNetworkConfigList{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.dispatch(w, behaviourOf)
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		a.wg.Wait()
	})
	return a
}

func (a *agents) dispatch(w watch.Interface, behaviourOf func(string) *behaviour) {
	for ev := range w.ResultChan() {
		nnc, ok := ev.Object.(*v1.NodeNetworkConfig)
		if !ok {
			continue // a watch error (the test is ending)
		}
		a.mu.Lock()
		name := nnc.Name
		if ev.Type == watch.Deleted {
			delete(a.latest, name)
			a.mu.Unlock()
			continue
		}
		a.latest[name] = nnc
		if !slices.Contains(a.order[nnc.Spec.Revision], name) {
			a.order[nnc.Spec.Revision] = append(a.order[nnc.Spec.Revision], name)
		}
		a.maxUnconfirmed = max(a.maxUnconfirmed, a.unconfirmedLocked())
		perRev := 0
		for _, other := range a.latest {
			if other.Spec.Revision == nnc.Spec.Revision && !confirmed(other) {
				perRev++
			}
		}
		a.maxPerRevision[nnc.Spec.Revision] = max(a.maxPerRevision[nnc.Spec.Revision], perRev)
		if _, ok := a.kick[name]; !ok {
			a.behave[name] = behaviourOf(name)
			kick := make(chan struct{}, 1)
			a.kick[name] = kick
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				a.run(name, kick)
			}()
		}
		kick := a.kick[name]
		newSpec := a.lastGen[name] != nnc.Generation
		a.lastGen[name] = nnc.Generation
		a.mu.Unlock()
		if newSpec {
			poke(kick)
		}
	}
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// confirmed is the operator's definition of a node that runs its spec.
func confirmed(n *v1.NodeNetworkConfig) bool {
	c := meta.FindStatusCondition(n.Status.Conditions, v1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= n.Generation &&
		n.Status.AppliedRevision == n.Spec.Revision && n.Status.MapVersion == n.Spec.ExpectedMapVersion
}

func (a *agents) unconfirmedLocked() int {
	n := 0
	for _, nnc := range a.latest {
		if !confirmed(nnc) {
			n++
		}
	}
	return n
}

// run is one node's agent.
func (a *agents) run(name string, kick chan struct{}) {
	applied := "" // the revision this agent last applied successfully
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-kick:
		}
		a.mu.Lock()
		nnc, b := a.latest[name].DeepCopy(), *a.behave[name]
		a.mu.Unlock()
		if nnc == nil || (b.silent != nil && b.silent(nnc.Spec.Revision)) {
			continue
		}
		timer := time.NewTimer(b.delay) // the simulated apply
		select {
		case <-a.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		a.mu.Lock()
		superseded := a.latest[name] == nil || a.latest[name].Generation != nnc.Generation
		a.mu.Unlock()
		if superseded {
			continue // a newer spec is waiting in kick
		}
		st := map[string]any{"lastUpdate": metav1.Now()}
		ready := metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Applied",
			Message: "applied", ObservedGeneration: nnc.Generation, LastTransitionTime: metav1.Now()}
		conditions := []metav1.Condition{ready}
		switch {
		case b.fail != nil && b.fail(nnc.Spec.Revision):
			st["failedRevision"] = nnc.Spec.Revision
			st["lastError"] = "simulated apply failure"
			// As the real agent (agent/nodestatus): Ready carries the error, Degraded what runs now.
			ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "ApplyFailed", "simulated apply failure"
			conditions = []metav1.Condition{ready, {Type: v1.ConditionDegraded, Status: metav1.ConditionTrue, Reason: "RolledBack",
				Message: "running the last good revision", ObservedGeneration: nnc.Generation, LastTransitionTime: metav1.Now()}}
		case b.wrongMapVersion:
			applied = nnc.Spec.Revision
			st["mapVersion"] = "0000000000000000000000000000000000000000000000000000000000000000"
		default:
			applied = nnc.Spec.Revision
			st["mapVersion"] = nnc.Spec.ExpectedMapVersion
			if b.mirrors != nil {
				st["mirrors"] = b.mirrors(&nnc.Spec)
			}
		}
		st["appliedRevision"] = applied
		conditions[0] = ready
		st["conditions"] = conditions
		body, err := json.Marshal(map[string]any{"status": st})
		if err != nil {
			a.t.Errorf("agent %s: %v", name, err)
			return
		}
		obj := &v1.NodeNetworkConfig{}
		obj.Name = name
		if err := a.c.Status().Patch(a.ctx, obj, client.RawPatch(types.MergePatchType, body)); err != nil && a.ctx.Err() == nil {
			// The config may have been collected meanwhile; the next spec kicks us again.
			continue
		}
	}
}

// setBehaviour changes a node's behaviour and makes its agent answer its current spec again.
func (a *agents) setBehaviour(name string, f func(*behaviour)) {
	a.mu.Lock()
	b, ok := a.behave[name]
	if !ok {
		a.mu.Unlock()
		a.t.Fatalf("no agent for %s yet", name)
	}
	nb := *b
	f(&nb)
	a.behave[name] = &nb
	kick := a.kick[name]
	a.mu.Unlock()
	poke(kick)
}

// assignmentOrder returns the nodes in the order they first received revision hash.
func (a *agents) assignmentOrder(hash string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.order[hash])
}

// peakFor returns the most nodes that carried revision hash unconfirmed at once.
func (a *agents) peakFor(hash string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.maxPerRevision[hash]
}

// peakUnconfirmed returns the highest number of unconfirmed configurations seen, and resets it.
func (a *agents) peakUnconfirmed() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.maxUnconfirmed
	a.maxUnconfirmed = a.unconfirmedLocked()
	return p
}
