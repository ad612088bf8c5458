package controllers

import (
	"time"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/rollout"
)

// progressClock measures the progress deadline on this process's own clock: a node's deadline runs from when
// this operator first saw its current assignment and its Node's current Ready transition, never from the
// kubelet's timestamps (another machine's clock: skew would fail or stall a rollout) nor from wall-clock
// differences (time.Now's monotonic reading: a clock jump changes nothing). A new leader starts counting when it
// first sees a node, so a failover can extend a deadline but never cut one short.
type progressClock struct {
	seen map[string]progressMark
}

// progressMark is what was seen of one node and when.
type progressMark struct {
	assignment string    // the assigned-at annotation and revision of the spec
	readyLTT   time.Time // the Node's Ready transition time (the kubelet's clock: only compared for equality)
	assigned   time.Time // when this process first saw the assignment
	ready      time.Time // when this process first saw the Ready transition
}

// restamp replaces s's kubelet and annotation times with this process's observations at now.
func (c *progressClock) restamp(s *rollout.NodeState, nnc *v1.NodeNetworkConfig, now time.Time) {
	if c.seen == nil {
		c.seen = map[string]progressMark{}
	}
	m, known := c.seen[s.Name]
	if !known || !m.readyLTT.Equal(s.ReadySince) {
		m.readyLTT, m.ready = s.ReadySince, now
	}
	if nnc != nil {
		if a := nnc.Annotations[AnnotationAssignedAt] + "/" + nnc.Spec.Revision; !known || a != m.assignment {
			m.assignment, m.assigned = a, now
		}
	}
	c.seen[s.Name] = m
	s.ReadySince = m.ready
	if s.Config != nil {
		s.Config.AssignedAt = m.assigned
	}
}

// forget drops nodes that are gone.
func (c *progressClock) forget(keep func(string) bool) {
	for name := range c.seen {
		if !keep(name) {
			delete(c.seen, name)
		}
	}
}
