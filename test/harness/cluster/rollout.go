package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
)

// Node states in rollout events.
const (
	StateApplying = "applying" // the operator assigned the revision to the node
	StateApplied  = "applied"  // the agent applied it and is healthy (Ready)
	StateFailed   = "failed"   // the agent could not apply it and restored its last good state
)

// RolloutEvent is one observed step of a rollout, in the order the API server recorded it.
type RolloutEvent struct {
	At time.Time
	// Revision is the revision's name (rev-<seq>-<hash>); Hash its content hash.
	Revision string
	Hash     string
	// Node is empty for events of the revision itself (created, phase changes).
	Node string
	// State is a node state (StateApplying, StateApplied, StateFailed), "created", or a revision phase.
	State  string
	Detail string
}

// ShortName is the revision name without the hash suffix (rev-2).
func ShortName(revision string) string {
	if i := strings.LastIndex(revision, "-"); i > 0 && strings.Count(revision, "-") >= 2 {
		return revision[:i]
	}
	return revision
}

type revInfo struct {
	name       string
	seq        int64
	phase      string
	failedNode string
	message    string
}

type nncInfo struct {
	spec, applied, failed string
	ready                 bool
	lastError             string
}

// rolloutWatcher follows NetworkConfigRevisions and NodeNetworkConfigs through watches and turns their changes
// into RolloutEvents.
type rolloutWatcher struct {
	mu      sync.Mutex
	revs    map[string]*revInfo // by hash
	nodes   map[string]*nncInfo
	events  []RolloutEvent
	notify  chan struct{} // closed and replaced on every change
	err     error
	stopped chan struct{}
}

func newRolloutWatcher() *rolloutWatcher {
	return &rolloutWatcher{revs: map[string]*revInfo{}, nodes: map[string]*nncInfo{}, notify: make(chan struct{}),
		stopped: make(chan struct{})}
}

// startWatcher runs the watches until the cluster is closed.
func (c *Cluster) startWatcher() {
	w := newRolloutWatcher()
	c.watcher = w
	ctx, cancel := context.WithCancel(context.Background())
	go w.run(ctx, c.client)
	c.onClose("rollout watcher", func() error {
		cancel()
		<-w.stopped
		return nil
	})
}

func (w *rolloutWatcher) run(ctx context.Context, cl client.WithWatch) {
	defer close(w.stopped)
	for ctx.Err() == nil {
		err := w.watchOnce(ctx, cl)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
		}
		// A closed watch (server timeout) is re-established; the initial ADDED events bring the model up to date.
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (w *rolloutWatcher) watchOnce(ctx context.Context, cl client.WithWatch) error {
	revs, err := cl.Watch(ctx, &v1.NetworkConfigRevisionList{})
	if err != nil {
		return fmt.Errorf("watch revisions: %w", err)
	}
	defer revs.Stop()
	nncs, err := cl.Watch(ctx, &v1.NodeNetworkConfigList{})
	if err != nil {
		return fmt.Errorf("watch node configs: %w", err)
	}
	defer nncs.Stop()
	w.mu.Lock()
	w.err = nil // watching again: an earlier error is history
	w.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-revs.ResultChan():
			if !ok {
				return nil
			}
			if r, ok := ev.Object.(*v1.NetworkConfigRevision); ok && ev.Type != watch.Deleted {
				w.revision(r)
			}
		case ev, ok := <-nncs.ResultChan():
			if !ok {
				return nil
			}
			if n, ok := ev.Object.(*v1.NodeNetworkConfig); ok && ev.Type != watch.Deleted {
				w.nodeConfig(n)
			}
		}
	}
}

func (w *rolloutWatcher) revision(r *v1.NetworkConfigRevision) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	hash := r.Spec.Revision
	info, seen := w.revs[hash]
	if seen && r.Spec.Sequence < info.seq {
		return // an older revision of content a newer one repeats: its status is history
	}
	// A change undone repeats an older revision's content (the same hash): the newest revision of it is the one
	// that rolls out.
	if !seen || r.Spec.Sequence > info.seq {
		info = &revInfo{name: r.Name, seq: r.Spec.Sequence}
		w.revs[hash] = info
		w.add(RolloutEvent{At: now, Revision: r.Name, Hash: hash, State: "created"})
	}
	if p := string(r.Status.Phase); p != "" && p != info.phase {
		info.phase = p
		detail := ""
		if r.Status.Phase == v1.RevisionFailed {
			detail = r.Status.Message
		}
		w.add(RolloutEvent{At: now, Revision: r.Name, Hash: hash, State: p, Detail: detail})
	}
	info.failedNode, info.message = r.Status.FailedNode, r.Status.Message
}

func (w *rolloutWatcher) nodeConfig(n *v1.NodeNetworkConfig) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	ready := meta.IsStatusConditionTrue(n.Status.Conditions, v1.ConditionReady)
	cur := nncInfo{spec: n.Spec.Revision, applied: n.Status.AppliedRevision, failed: n.Status.FailedRevision,
		ready: ready, lastError: n.Status.LastError}
	old, seen := w.nodes[n.Name]
	if !seen {
		old = &nncInfo{}
	}
	name := func(hash string) string {
		if r := w.revs[hash]; r != nil {
			return r.name
		}
		return hash
	}
	if cur.spec != old.spec && cur.spec != "" {
		w.add(RolloutEvent{At: now, Revision: name(cur.spec), Hash: cur.spec, Node: n.Name, State: StateApplying})
	}
	isApplied := func(s nncInfo) bool { return s.ready && s.applied != "" && s.applied == s.spec }
	if isApplied(cur) && (!isApplied(*old) || old.applied != cur.applied) {
		w.add(RolloutEvent{At: now, Revision: name(cur.applied), Hash: cur.applied, Node: n.Name, State: StateApplied})
	}
	if cur.failed != "" && cur.failed != old.failed {
		w.add(RolloutEvent{At: now, Revision: name(cur.failed), Hash: cur.failed, Node: n.Name, State: StateFailed, Detail: cur.lastError})
	}
	w.nodes[n.Name] = &cur
}

// add appends an event and wakes waiters; w.mu is held.
func (w *rolloutWatcher) add(ev RolloutEvent) {
	w.events = append(w.events, ev)
	close(w.notify)
	w.notify = make(chan struct{})
}

// Rollout is one revision's rollout, from the change that caused it until it settled.
type Rollout struct {
	// Revision is the revision's name; Sequence and Hash identify it.
	Revision string
	Sequence int64
	Hash     string
	// Phase is Done or Failed.
	Phase      string
	FailedNode string
	// Message is the revision's status message, FailReason the failed node's own error (its lastError).
	Message    string
	FailReason string
	// RolledBackTo is the revision every node runs after a failure (RolledBackHash its hash).
	RolledBackTo, RolledBackHash string
	// Since is when the change was applied (SinceWhat names that moment, default "the change"); Settled when
	// every node ran the outcome (this revision, or the one rolled back to).
	Since, Settled time.Time
	SinceWhat      string
	// Events are the rollout's events in order.
	Events []RolloutEvent
	// Order lists the nodes in the order the operator assigned them the revision.
	Order []string
	// Applied is when each node confirmed the revision.
	Applied map[string]time.Time
}

// Duration is the time from the change to the settled state.
func (r *Rollout) Duration() time.Duration { return r.Settled.Sub(r.Since) }

// LastSequence is the sequence of the newest revision seen so far (0: none).
func (c *Cluster) LastSequence() int64 {
	w := c.watcher
	w.mu.Lock()
	defer w.mu.Unlock()
	var last int64
	for _, r := range w.revs {
		last = max(last, r.seq)
	}
	return last
}

// WaitRollout waits for the first revision newer than sequence after to settle: Done with every node running
// it, or Failed with every node back on one older revision. Every event from since on is passed to onEvent as
// it happens (nil: none).
//
// includes, when set, tells whether a settled revision contains the change waited for; a revision that does
// not (a snapshot taken before the change was complete) is skipped.
func (c *Cluster) WaitRollout(ctx context.Context, after int64, since time.Time, timeout time.Duration, onEvent func(RolloutEvent),
	includes func(ctx context.Context, revision string) (bool, error)) (*Rollout, error) {
	w := c.watcher
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	next := 0
	for {
		w.mu.Lock()
		events := w.events[next:]
		next = len(w.events)
		notify := w.notify
		r, done := w.settled(after, len(c.nodes))
		werr := w.err
		w.mu.Unlock()
		for _, ev := range events {
			if onEvent != nil && !ev.At.Before(since) {
				onEvent(ev)
			}
		}
		if done && includes != nil {
			ok, err := includes(ctx, r.Revision)
			if err != nil {
				return nil, err
			}
			if !ok {
				// An earlier snapshot without (all of) the change settled first: wait for the next one.
				after = r.Sequence
				continue
			}
		}
		if done {
			r.Since = since
			w.mu.Lock()
			for _, ev := range w.events {
				if ev.At.Before(since) {
					continue
				}
				r.Events = append(r.Events, ev)
				if ev.Hash == r.Hash && ev.Node != "" && ev.State == StateApplying && !slices.Contains(r.Order, ev.Node) {
					r.Order = append(r.Order, ev.Node)
				}
				if ev.Hash == r.Hash && ev.State == StateApplied {
					r.Applied[ev.Node] = ev.At
				}
				if ev.Hash == r.Hash && ev.State == StateFailed && ev.Node == r.FailedNode && r.FailReason == "" {
					r.FailReason = oneLine(ev.Detail)
				}
				if relevant(ev, r) {
					r.Settled = ev.At
				}
			}
			w.mu.Unlock()
			return r, nil
		}
		select {
		case <-ctx.Done():
			msg := c.rolloutStatus(after)
			if werr != nil {
				msg += "; watch error: " + werr.Error()
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("rollout of the revision after sequence %d: %w within %v (%s)", after, wait.ErrTimeout, timeout, msg)
			}
			return nil, fmt.Errorf("rollout of the revision after sequence %d: %w (%s)", after, ctx.Err(), msg)
		case <-notify:
		}
	}
}

// settled returns the rollout of the newest revision after sequence `after` once it has settled; w.mu is held.
func (w *rolloutWatcher) settled(after int64, nodes int) (*Rollout, bool) {
	var hash string
	var rev *revInfo
	for h, r := range w.revs {
		if r.seq > after && (rev == nil || r.seq > rev.seq) {
			hash, rev = h, r
		}
	}
	if rev == nil || len(w.nodes) < nodes {
		return nil, false
	}
	// every node runs one revision, applied and ready
	running := ""
	for _, n := range w.nodes {
		if !n.ready || n.applied == "" || n.applied != n.spec {
			return nil, false
		}
		if running == "" {
			running = n.applied
		} else if n.applied != running {
			return nil, false
		}
	}
	out := &Rollout{Revision: rev.name, Sequence: rev.seq, Hash: hash, Phase: rev.phase, FailedNode: rev.failedNode,
		Message: rev.message, Applied: map[string]time.Time{}}
	switch {
	case rev.phase == string(v1.RevisionDone) && running == hash:
	case rev.phase == string(v1.RevisionFailed) && running != hash:
		out.RolledBackHash = running
		if r := w.revs[running]; r != nil {
			out.RolledBackTo = r.name
		} else {
			out.RolledBackTo = running
		}
	default:
		return nil, false
	}
	return out, true
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// relevant reports whether an event is part of the rollout's outcome: an event of the revision, or a node
// applying the revision rolled back to.
func relevant(ev RolloutEvent, r *Rollout) bool {
	return ev.Hash == r.Hash || (r.RolledBackHash != "" && ev.Hash == r.RolledBackHash && ev.Node != "")
}

// rolloutStatus describes where a stuck rollout is, for the timeout error.
func (c *Cluster) rolloutStatus(after int64) string {
	w := c.watcher
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for h, r := range w.revs {
		if r.seq > after {
			parts = append(parts, fmt.Sprintf("%s (%.12s) phase %q %s", r.name, h, r.phase, r.message))
		}
	}
	names := make([]string, 0, len(w.nodes))
	for n := range w.nodes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		s := w.nodes[n]
		parts = append(parts, fmt.Sprintf("%s: spec %.12s applied %.12s failed %.12s ready %v %s", n, s.spec, s.applied, s.failed, s.ready, s.lastError))
	}
	if len(parts) == 0 {
		return "no revision yet"
	}
	return strings.Join(parts, "; ")
}

// sinceStart formats t relative to since.
func sinceStart(t, since time.Time) string {
	return fmt.Sprintf("%+6.1fs", t.Sub(since).Seconds())
}
