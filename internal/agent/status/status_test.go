package status

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/agent/laststate"
	"github.com/network-operator/network-operator/internal/agent/reconcile"
)

func specRev(rev string) *v1.NodeNetworkConfigSpec {
	return &v1.NodeNetworkConfigSpec{Revision: rev, VRFs: []v1.NodeVRF{{Name: "red", ID: 1, TableID: 100, VNI: 100}}}
}

func good(s *v1.NodeNetworkConfigSpec) *laststate.Good {
	return &laststate.Good{Revision: s.Revision, MapVersion: s.MapVersion(), SpecHash: laststate.SpecHash(s), Spec: *s}
}

func TestBuild(t *testing.T) {
	r1, r2 := specRev("r1"), specRev("r2")
	r2.VRFs[0].VNI = 200
	fail2 := &laststate.Failure{Revision: "r2", SpecHash: laststate.SpecHash(r2), Error: "boom"}
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cases := []struct {
		name                    string
		out                     *reconcile.Outcome
		applied, failed, mv     string
		ready, readyReason, deg string
		lastErrSet              bool
	}{
		{"applied", &reconcile.Outcome{Spec: r1, Good: good(r1), Healthy: true, MapVersion: r1.MapVersion()},
			"r1", "", r1.MapVersion(), "True", ReasonApplied, "False", false},
		{"rolled back", &reconcile.Outcome{Spec: r2, Good: good(r1), Failure: fail2, Healthy: true, MapVersion: r1.MapVersion(),
			Err: &reconcile.StepError{Step: "interfaces", Err: errors.New("file exists")}},
			"r1", "r2", r1.MapVersion(), "False", ReasonApplyFailed, "True", true},
		{"invalid", &reconcile.Outcome{Spec: r2, Good: good(r1), Failure: fail2, Healthy: true, MapVersion: r1.MapVersion(),
			Err: fmt.Errorf("%w: bad", reconcile.ErrPlan)},
			"r1", "r2", r1.MapVersion(), "False", ReasonInvalid, "True", true},
		{"restore failed", &reconcile.Outcome{Spec: r2, Good: good(r1), Failure: fail2, Err: errors.New("a"), RestoreErr: errors.New("b")},
			"r1", "r2", "", "False", ReasonRestoreFailed, "True", true},
		{"unhealthy later", &reconcile.Outcome{Spec: r1, Good: good(r1), HealthErr: errors.New("eth0 down"), MapVersion: r1.MapVersion()},
			"r1", "", r1.MapVersion(), "False", ReasonUnhealthy, "True", true},
		{"failure of an older spec is not reported once its content applied", &reconcile.Outcome{Spec: r2, Good: good(r2),
			Failure: fail2, Healthy: true, MapVersion: r2.MapVersion()},
			"r2", "", r2.MapVersion(), "True", ReasonApplied, "False", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Build(tc.out, v1.NodeNetworkConfigStatus{}, 7, now)
			if st.AppliedRevision != tc.applied || st.FailedRevision != tc.failed || st.MapVersion != tc.mv {
				t.Errorf("applied %q failed %q mapVersion %q", st.AppliedRevision, st.FailedRevision, st.MapVersion)
			}
			ready := meta.FindStatusCondition(st.Conditions, v1.ConditionReady)
			deg := meta.FindStatusCondition(st.Conditions, v1.ConditionDegraded)
			if ready == nil || string(ready.Status) != tc.ready || ready.Reason != tc.readyReason || ready.ObservedGeneration != 7 {
				t.Errorf("ready %+v", ready)
			}
			if deg == nil || string(deg.Status) != tc.deg {
				t.Errorf("degraded %+v", deg)
			}
			if (st.LastError != "") != tc.lastErrSet {
				t.Errorf("lastError %q", st.LastError)
			}
			// Building again from the result changes nothing: no status write, transition times kept.
			later := metav1.NewTime(now.Add(time.Hour))
			again := Build(tc.out, st, 7, later)
			if !Equal(again, st) || !again.LastUpdate.Equal(st.LastUpdate) {
				t.Errorf("rebuild differs:\n%+v\n%+v", again, st)
			}
			if c := meta.FindStatusCondition(again.Conditions, v1.ConditionReady); !c.LastTransitionTime.Equal(&now) {
				t.Errorf("transition time moved to %v", c.LastTransitionTime)
			}
		})
	}
}
