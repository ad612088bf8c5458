package controllers

import (
	"cmp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/rollout"
)

// nodeReady returns the Node's Ready condition and when it last changed.
func nodeReady(n *corev1.Node) (bool, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

// nodeState describes a node for the planner. nnc may be nil; stale marks a spec whose content no longer
// matches what the node should get for the same revision (its labels or annotations changed): the planner
// then sees the node as pending and re-assigns it within the rollout's pace.
func nodeState(n *corev1.Node, nnc *v1.NodeNetworkConfig, groupLabel string, stale bool) rollout.NodeState {
	s := rollout.NodeState{Name: n.Name}
	s.Ready, s.ReadySince = nodeReady(n)
	if groupLabel != "" {
		s.Group = n.Labels[groupLabel]
	}
	if nnc == nil {
		return s
	}
	c := &rollout.ConfigState{
		Revision:           nnc.Spec.Revision,
		ExpectedMapVersion: nnc.Spec.ExpectedMapVersion,
		AssignedAt:         assignedAt(nnc),
		AppliedRevision:    nnc.Status.AppliedRevision,
		MapVersion:         nnc.Status.MapVersion,
		FailedRevision:     nnc.Status.FailedRevision,
		ConfigReady:        rollout.ConditionUnknown,
	}
	c.Stale = stale
	if ready := freshCondition(nnc, v1.ConditionReady); ready != nil {
		c.ConfigReady = rollout.ConditionStatus(ready.Status)
		c.Message = cmp.Or(ready.Message, nnc.Status.LastError)
	}
	if deg := freshCondition(nnc, v1.ConditionDegraded); deg != nil && deg.Status == metav1.ConditionTrue {
		c.Degraded = true
		// Ready says what went wrong; Degraded only what runs instead (e.g. the last good revision).
		if c.ConfigReady != rollout.ConditionFalse {
			c.Message = cmp.Or(deg.Message, c.Message)
		}
	}
	s.Config = c
	return s
}

// freshCondition returns a condition that speaks about the current spec: when the agent fills in
// observedGeneration, an older generation's condition is ignored (it may describe the previous spec).
func freshCondition(nnc *v1.NodeNetworkConfig, t string) *metav1.Condition {
	c := meta.FindStatusCondition(nnc.Status.Conditions, t)
	if c == nil || (c.ObservedGeneration != 0 && c.ObservedGeneration < nnc.Generation) {
		return nil
	}
	return c
}

func assignedAt(nnc *v1.NodeNetworkConfig) time.Time {
	if s, ok := nnc.Annotations[AnnotationAssignedAt]; ok {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	}
	return nnc.CreationTimestamp.Time
}
