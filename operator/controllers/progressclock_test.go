package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/rollout"
)

// The progress deadline runs on the operator's clock from when it saw the assignment and the Node's Ready
// transition: a kubelet clock hours off, or an assigned-at written by another (skewed) leader, changes nothing;
// a new transition or assignment restarts the count.
func TestProgressClock(t *testing.T) {
	t0 := time.Now()
	nnc := &v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		AnnotationAssignedAt: t0.Add(-3 * time.Hour).UTC().Format(time.RFC3339Nano)}}, Spec: v1.NodeNetworkConfigSpec{Revision: "r2"}}
	kubelet := t0.Add(-5 * time.Hour) // the node's clock, far behind
	state := func() rollout.NodeState {
		return rollout.NodeState{Name: "n1", Ready: true, ReadySince: kubelet, Config: &rollout.ConfigState{
			Revision: "r2", AssignedAt: t0.Add(-3 * time.Hour)}}
	}
	deadline := 10 * time.Minute
	inflight := func(s rollout.NodeState, now time.Time) bool {
		plan := rollout.Compute(rollout.Input{Target: "r2", Nodes: []rollout.NodeState{s}, MaxUnavailable: 1,
			ProgressDeadline: deadline, Now: now})
		return len(plan.Failures) == 0
	}
	var c progressClock
	s := state()
	c.restamp(&s, nnc, t0)
	if !s.ReadySince.Equal(t0) || !s.Config.AssignedAt.Equal(t0) || !inflight(s, t0) {
		t.Fatalf("first sight: ready since %v assigned %v, want both %v and no failure", s.ReadySince, s.Config.AssignedAt, t0)
	}
	t1 := t0.Add(deadline - time.Second)
	s = state()
	c.restamp(&s, nnc, t1)
	if !s.Config.AssignedAt.Equal(t0) || !inflight(s, t1) {
		t.Fatalf("the same assignment later: assigned %v, want %v, still in time", s.Config.AssignedAt, t0)
	}
	if t2 := t0.Add(deadline + time.Second); inflight(s, t2) {
		t.Fatal("the deadline measured on the operator's clock did not expire")
	}
	// The node restarts: a new Ready transition restarts the count.
	kubelet = kubelet.Add(time.Minute)
	t3 := t0.Add(deadline + 2*time.Second)
	s = state()
	c.restamp(&s, nnc, t3)
	if !s.ReadySince.Equal(t3) || !inflight(s, t3) {
		t.Fatalf("after a new Ready transition: ready since %v, want %v", s.ReadySince, t3)
	}
	// A new assignment (another revision) likewise.
	nnc.Spec.Revision = "r3"
	t4 := t3.Add(time.Minute)
	s = state()
	c.restamp(&s, nnc, t4)
	if !s.Config.AssignedAt.Equal(t4) {
		t.Fatalf("after a new assignment: assigned %v, want %v", s.Config.AssignedAt, t4)
	}
	c.forget(func(string) bool { return false })
	if len(c.seen) != 0 {
		t.Errorf("a removed node is remembered: %v", c.seen)
	}
}
