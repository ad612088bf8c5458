package cluster

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func rev(name, hash string, seq int64, phase v1.RevisionPhase) *v1.NetworkConfigRevision {
	r := &v1.NetworkConfigRevision{ObjectMeta: metav1.ObjectMeta{Name: name}}
	r.Spec.Revision, r.Spec.Sequence, r.Status.Phase = hash, seq, phase
	return r
}

func nnc(node, spec, applied, failed string, ready bool) *v1.NodeNetworkConfig {
	n := &v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: node}}
	n.Spec.Revision = spec
	n.Status.AppliedRevision, n.Status.FailedRevision = applied, failed
	st := metav1.ConditionFalse
	if ready {
		st = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&n.Status.Conditions, metav1.Condition{Type: v1.ConditionReady, Status: st, Reason: "Test"})
	if failed != "" {
		n.Status.LastError = "set mtu of l2vx.100 1500 -> 9000: invalid argument"
	}
	return n
}

type step struct {
	rev *v1.NetworkConfigRevision
	nnc *v1.NodeNetworkConfig
}

func feed(w *rolloutWatcher, steps []step) {
	for _, s := range steps {
		if s.rev != nil {
			w.revision(s.rev)
		}
		if s.nnc != nil {
			w.nodeConfig(s.nnc)
		}
	}
}

func TestWatcherDoneRollout(t *testing.T) {
	w := newRolloutWatcher()
	feed(w, []step{
		{rev: rev("rev-1-aaaa", "h1", 1, v1.RevisionDone)},
		{nnc: nnc("node-1", "h1", "h1", "", true)},
		{nnc: nnc("node-2", "h1", "h1", "", true)},
		{rev: rev("rev-2-bbbb", "h2", 2, v1.RevisionRolling)},
		{nnc: nnc("node-1", "h2", "h1", "", true)},
	})
	if _, done := w.settled(1, 2); done {
		t.Fatal("settled while node-1 is still applying rev-2")
	}
	feed(w, []step{
		{nnc: nnc("node-1", "h2", "h2", "", true)},
		{nnc: nnc("node-2", "h2", "h1", "", true)},
		{nnc: nnc("node-2", "h2", "h2", "", true)},
	})
	if _, done := w.settled(1, 2); done {
		t.Fatal("settled before the revision's phase is Done")
	}
	feed(w, []step{{rev: rev("rev-2-bbbb", "h2", 2, v1.RevisionDone)}})
	r, done := w.settled(1, 2)
	if !done || r.Revision != "rev-2-bbbb" || r.Phase != "Done" || r.RolledBackTo != "" {
		t.Fatalf("settled = %+v, %v; want rev-2 Done", r, done)
	}
	if _, done := w.settled(2, 2); done {
		t.Error("settled with no revision newer than sequence 2")
	}
	var states []string
	for _, ev := range w.events {
		if ev.Hash == "h2" {
			states = append(states, ev.Node+":"+ev.State)
		}
	}
	want := []string{":created", ":Rolling", "node-1:applying", "node-1:applied", "node-2:applying", "node-2:applied", ":Done"}
	if !slices.Equal(states, want) {
		t.Errorf("events of rev-2: %v, want %v", states, want)
	}
}

func TestWatcherFailedRollout(t *testing.T) {
	w := newRolloutWatcher()
	feed(w, []step{
		{rev: rev("rev-3-cccc", "h3", 3, v1.RevisionDone)},
		{nnc: nnc("node-1", "h3", "h3", "", true)},
		{nnc: nnc("node-2", "h3", "h3", "", true)},
		{rev: rev("rev-4-dddd", "h4", 4, v1.RevisionRolling)},
		{nnc: nnc("node-1", "h4", "h3", "", true)},
		{nnc: nnc("node-1", "h4", "h4", "", true)},
		{nnc: nnc("node-2", "h4", "h3", "", true)},
		{nnc: nnc("node-2", "h4", "h3", "h4", false)},
		{rev: rev("rev-4-dddd", "h4", 4, v1.RevisionFailed)},
	})
	if _, done := w.settled(3, 2); done {
		t.Fatal("settled before node-1 is back on rev-3")
	}
	feed(w, []step{
		{nnc: nnc("node-1", "h3", "h4", "", true)},
		{nnc: nnc("node-2", "h3", "h3", "h4", true)},
	})
	if _, done := w.settled(3, 2); done {
		t.Fatal("settled while node-1 still runs rev-4")
	}
	feed(w, []step{{nnc: nnc("node-1", "h3", "h3", "", true)}})
	r, done := w.settled(3, 2)
	if !done || r.Phase != "Failed" || r.RolledBackTo != "rev-3-cccc" || r.RolledBackHash != "h3" {
		t.Fatalf("settled = %+v, %v; want rev-4 Failed, rolled back to rev-3", r, done)
	}
	i := slices.IndexFunc(w.events, func(ev RolloutEvent) bool { return ev.State == StateFailed })
	if i < 0 || w.events[i].Node != "node-2" || w.events[i].Detail == "" {
		t.Errorf("no failed event of node-2 with its error: %+v", w.events)
	}
}

// A change undone makes a revision whose content (hash) an older one had: its rollout is seen as the newest one's,
// and the old revision's later status (Superseded) does not overwrite it.
func TestWatcherChangeUndone(t *testing.T) {
	w := newRolloutWatcher()
	feed(w, []step{
		{rev: rev("rev-1-aaaa", "h1", 1, v1.RevisionDone)},
		{nnc: nnc("node-1", "h1", "h1", "", true)},
		{rev: rev("rev-2-bbbb", "h2", 2, v1.RevisionDone)},
		{nnc: nnc("node-1", "h2", "h2", "", true)},
		{rev: rev("rev-1-aaaa", "h1", 1, v1.RevisionSuperseded)},
		{rev: rev("rev-3-aaaa", "h1", 3, v1.RevisionRolling)},
		{nnc: nnc("node-1", "h1", "h2", "", true)},
	})
	if _, done := w.settled(2, 1); done {
		t.Fatal("settled while node-1 is still applying rev-3")
	}
	feed(w, []step{
		{nnc: nnc("node-1", "h1", "h1", "", true)},
		{rev: rev("rev-1-aaaa", "h1", 1, v1.RevisionSuperseded)},
		{rev: rev("rev-3-aaaa", "h1", 3, v1.RevisionDone)},
	})
	r, done := w.settled(2, 1)
	if !done || r.Revision != "rev-3-aaaa" || r.Sequence != 3 || r.Phase != "Done" {
		t.Fatalf("settled = %+v, %v; want rev-3 Done", r, done)
	}
}
