// Package nodestatus turns the outcome of a reconcile into the NodeNetworkConfig status the operator's rollout reads:
// appliedRevision and mapVersion (read back from the live version map) confirm a revision, Ready=False with
// failedRevision makes the operator roll the revision back, Degraded says the node runs but something is off.
// A transient error (reason Retrying) sets no failedRevision: the operator waits while the agent retries.
// mirrors (with the condition MirrorsApplied) says which traffic mirrors run; the operator counts them into the
// MirrorSelector and MirrorTarget status. They never touch Ready: a mirror left out is not a node failure.
package nodestatus

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/reconcile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Condition reasons.
const (
	ReasonApplied           = "Applied"
	ReasonApplyFailed       = "ApplyFailed"   // the spec failed; the last good state was restored
	ReasonInvalid           = "Invalid"       // the spec was refused before any change
	ReasonRestoreFailed     = "RestoreFailed" // the spec failed and the last good state could not be restored
	ReasonUnhealthy         = "Unhealthy"     // the applied state fails its health check
	ReasonHealthy           = "Healthy"
	ReasonRolledBack        = "RolledBack"
	ReasonRetrying          = "Retrying"          // a transient error: the same revision is tried again, nothing rolled back
	ReasonStateUnreadable   = "StateUnreadable"   // the state file was unreadable at start: the node's objects are adopted
	ReasonMirrorsNotApplied = "MirrorsNotApplied" // MirrorsApplied=False: some mirrors are left out
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
	case out.Retrying():
		// Not a failure of the revision: no failedRevision and not Degraded (the node runs its last good state,
		// healthy; the operator fails a rollout on Degraded), so the operator waits instead of rolling back.
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonRetrying, truncate(out.Err.Error())
		degraded.Status, degraded.Reason = metav1.ConditionFalse, ReasonRetrying
		degraded.Message = "running revision " + quoteOrNone(st.AppliedRevision) + " until the retry of " +
			out.Spec.Revision + " succeeds"
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
	if out.StateErr != nil {
		degraded.Status, degraded.Reason = metav1.ConditionTrue, ReasonStateUnreadable
		degraded.Message = truncate("the state file was unreadable (moved aside); keeping what the node runs until a revision applies: " +
			out.StateErr.Error())
	}
	if ready.Status == metav1.ConditionFalse && st.LastError == "" {
		st.LastError = ready.Message
	}
	setCondition(&st.Conditions, ready, now)
	setCondition(&st.Conditions, degraded, now)
	// A mirror left out is reported, not a node failure (das-schiff's meaning): Ready does not look at it.
	st.Mirrors = mirrorStatus(out.Mirrors)
	if c, ok := mirrorsCondition(st.Mirrors, generation); ok {
		setCondition(&st.Conditions, c, now)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, v1.ConditionMirrorsApplied)
	}
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

func truncate(s string) string { return truncateTo(s, maxMessage) }

func truncateTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// maxMirrorMessage bounds a mirror's message (the CRD's maxLength).
const maxMirrorMessage = 1024

// mirrorStatus reports every mirror the last mirror step applied, sorted by name: applied, or why not.
func mirrorStatus(mo *reconcile.MirrorOutcome) []v1.NodeMirrorStatus {
	if mo == nil || len(mo.Mirrors) == 0 {
		return nil
	}
	problems := map[string]error{}
	for _, p := range mo.Problems {
		if _, ok := problems[p.Mirror]; !ok {
			problems[p.Mirror] = p.Err // the first is the cause; later ones follow from it
		}
	}
	out := make([]v1.NodeMirrorStatus, 0, len(mo.Mirrors))
	for _, m := range mo.Mirrors {
		s := v1.NodeMirrorStatus{Name: m.Name, Target: m.Target.Name, Applied: true}
		switch err := problems[m.Name]; {
		case mo.Err != nil:
			s.Applied, s.Reason, s.Message = false, v1.MirrorReasonApplyFailed, mo.Err.Error()
		case err == nil:
		case errors.Is(err, mirror.ErrNotSupported):
			s.Applied, s.Reason, s.Message = false, v1.MirrorReasonNotSupported, err.Error()
		default:
			s.Applied, s.Reason, s.Message = false, v1.MirrorReasonInvalid, err.Error()
		}
		s.Message = truncateTo(s.Message, maxMirrorMessage)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b v1.NodeMirrorStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// mirrorsCondition is MirrorsApplied for the mirrors; false when there are none (no condition then).
func mirrorsCondition(ms []v1.NodeMirrorStatus, generation int64) (metav1.Condition, bool) {
	if len(ms) == 0 {
		return metav1.Condition{}, false
	}
	c := metav1.Condition{Type: v1.ConditionMirrorsApplied, ObservedGeneration: generation, Status: metav1.ConditionTrue,
		Reason: ReasonApplied, Message: fmt.Sprintf("%d mirrors applied", len(ms))}
	var left []string
	for _, m := range ms {
		if !m.Applied {
			left = append(left, m.Name+" ("+m.Reason+")")
		}
	}
	if len(left) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonMirrorsNotApplied
		c.Message = truncate(fmt.Sprintf("%d of %d mirrors not applied: %s", len(left), len(ms), strings.Join(left, ", ")))
	}
	return c, true
}
