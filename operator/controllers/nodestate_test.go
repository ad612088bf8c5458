package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// A node whose agent retries a transient fault (reason Retrying: Ready=False, Degraded=False, no failedRevision)
// is waited for, not failed: the rollout goes on only when it applies, and the progress deadline bounds the wait.
// A node that rolled back (Degraded=True) or names the revision failed is a failure.
func TestNodeStateRetryingIsNoFailure(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	nnc := func(failed string, ready, degraded metav1.Condition) *v1.NodeNetworkConfig {
		return &v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: "n1", Generation: 2},
			Spec:   v1.NodeNetworkConfigSpec{Revision: "r2"},
			Status: v1.NodeNetworkConfigStatus{AppliedRevision: "r1", FailedRevision: failed, Conditions: []metav1.Condition{ready, degraded}}}
	}
	cond := func(t, status, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, ObservedGeneration: 2}
	}
	for _, tc := range []struct {
		name           string
		nnc            *v1.NodeNetworkConfig
		degraded       bool
		failedRevision string
	}{
		{"retrying", nnc("", cond(v1.ConditionReady, "False", "Retrying"), cond(v1.ConditionDegraded, "False", "Retrying")), false, ""},
		{"rolled back", nnc("r2", cond(v1.ConditionReady, "False", "ApplyFailed"), cond(v1.ConditionDegraded, "True", "RolledBack")), true, "r2"},
	} {
		s := nodeState(node, tc.nnc, "", false)
		if s.Config == nil || s.Config.Degraded != tc.degraded || s.Config.FailedRevision != tc.failedRevision {
			t.Errorf("%s: config state %+v, want degraded %v, failed revision %q", tc.name, s.Config, tc.degraded, tc.failedRevision)
		}
	}
}
