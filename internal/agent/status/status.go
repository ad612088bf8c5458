// Package status turns the outcome of a reconcile into the NodeNetworkConfig status the operator's rollout reads:
// appliedRevision and mapVersion (read back from the live version map) confirm a revision, Ready=False with
// failedRevision makes the operator roll the revision back, Degraded says the node runs but something is off.
package status

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/agent/reconcile"
)

// Condition reasons.
const (
	ReasonApplied       = "Applied"
	ReasonApplyFailed   = "ApplyFailed"   // the spec failed; the last good state was restored
	ReasonInvalid       = "Invalid"       // the spec was refused before any change
	ReasonRestoreFailed = "RestoreFailed" // the spec failed and the last good state could not be restored
	ReasonUnhealthy     = "Unhealthy"     // the applied state fails its health check
	ReasonHealthy       = "Healthy"
	ReasonRolledBack    = "RolledBack"
)

// maxMessage bounds condition messages and lastError (the API server limits condition messages to 32768).
const maxMessage = 4096

// Build returns the status for an outcome; prev is the current status (conditions keep their transition times
// when their status does not change), generation the object's metadata.generation.
func Build(out *reconcile.Outcome, prev v1.NodeNetworkConfigStatus, generation int64, now metav1.Time) v1.NodeNetworkConfigStatus {
	st := v1.NodeNetworkConfigStatus{Conditions: append([]metav1.Condition(nil), prev.Conditions...)}
	if out.Good != nil {
		st.AppliedRevision = out.Good.Revision
	}
	if f := out.Failure; f != nil && (out.Good == nil || f.SpecHash != out.Good.SpecHash) {
		st.FailedRevision = f.Revision
	}
	st.MapVersion = out.MapVersion
	st.Interfaces = out.Interfaces
	if out.Err != nil {
		st.LastError = truncate(out.Err.Error())
	}

	ready := metav1.Condition{Type: v1.ConditionReady, ObservedGeneration: generation}
	degraded := metav1.Condition{Type: v1.ConditionDegraded, ObservedGeneration: generation}
	switch {
	case out.Applied():
		ready.Status, ready.Reason, ready.Message = metav1.ConditionTrue, ReasonApplied,
			"revision "+out.Spec.Revision+" applied, map version "+short(out.MapVersion)
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionFalse, ReasonHealthy, "all checks pass"
	case out.RestoreErr != nil:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonRestoreFailed
		ready.Message = truncate(errMsg(out.Err) + "; restoring the last good state failed: " + out.RestoreErr.Error())
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonRestoreFailed, truncate(out.RestoreErr.Error())
	case out.Err != nil:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonApplyFailed
		if errors.Is(out.Err, reconcile.ErrPlan) {
			ready.Reason = ReasonInvalid
		}
		ready.Message = truncate(out.Err.Error())
		degraded.Status, degraded.Reason = metav1.ConditionTrue, ReasonRolledBack
		degraded.Message = "running the last good revision " + quoteOrNone(st.AppliedRevision)
		if !out.Healthy && out.HealthErr != nil {
			degraded.Reason, degraded.Message = ReasonUnhealthy, truncate(out.HealthErr.Error())
		}
	default: // applied earlier, unhealthy now
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonUnhealthy
		ready.Message = truncate(errMsg(out.HealthErr))
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonUnhealthy, ready.Message
	}
	if ready.Status == metav1.ConditionFalse && st.LastError == "" {
		st.LastError = ready.Message
	}
	setCondition(&st.Conditions, ready, now)
	setCondition(&st.Conditions, degraded, now)
	st.LastUpdate = prev.LastUpdate
	if !Equal(st, prev) {
		st.LastUpdate = &now
	}
	return st
}

// Equal compares two statuses ignoring lastUpdate (a status write is needed only when something else changed).
func Equal(a, b v1.NodeNetworkConfigStatus) bool {
	a.LastUpdate, b.LastUpdate = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

func setCondition(conds *[]metav1.Condition, c metav1.Condition, now metav1.Time) {
	c.LastTransitionTime = now
	meta.SetStatusCondition(conds, c)
}

func errMsg(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none: nothing applied yet)"
	}
	return s
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage-3] + "..."
}
