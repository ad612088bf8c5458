package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/reconcile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func specRev(rev string) *v1.NodeNetworkConfigSpec {
	return &v1.NodeNetworkConfigSpec{Revision: rev, VRFs: []v1.NodeVRF{{Name: "red", ID: 1, TableID: 100, VNI: 100}}}
}

func good(s *v1.NodeNetworkConfigSpec) *lastapplied.Good {
	return &lastapplied.Good{Revision: s.Revision, MapVersion: s.MapVersion(), SpecHash: lastapplied.SpecHash(s), Spec: *s}
}

func TestBuild(t *testing.T) {
	r1, r2 := specRev("r1"), specRev("r2")
	r2.VRFs[0].VNI = 200
	fail2 := &lastapplied.Failure{Revision: "r2", SpecHash: lastapplied.SpecHash(r2), Error: "boom"}
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
		{"retrying: no failedRevision", &reconcile.Outcome{Spec: r2, Good: good(r1), Healthy: true, MapVersion: r1.MapVersion(),
			Err: reconcile.Transient(errors.New("secret ns/pw: connection refused"))},
			"r1", "", r1.MapVersion(), "False", ReasonRetrying, "False", true},
		{"interrupted by the agent's shutdown: no failedRevision", &reconcile.Outcome{Spec: r2, Good: good(r1), Healthy: true,
			MapVersion: r1.MapVersion(), Err: reconcile.Transient(&reconcile.StepError{Step: "frr", Err: context.Canceled})},
			"r1", "", r1.MapVersion(), "False", ReasonRetrying, "False", true},
		{"state file unreadable, a failure keeps the node", &reconcile.Outcome{Spec: r2, Failure: fail2,
			Err: errors.New("step interfaces: file exists"), RestoreErr: reconcile.ErrNothingToRestore, StateErr: errors.New("unexpected end of JSON input")},
			"", "r2", "", "False", ReasonRestoreFailed, "True", true},
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

// Mirrors: one the kernel cannot carry (no GRE) and one whose source is missing are reported applied=false with
// the reason, the others applied; MirrorsApplied=False names the left-out ones, Ready stays True. Without
// mirrors the list and the condition go away.
func TestBuildMirrors(t *testing.T) {
	s := specRev("r1")
	s.Mirrors = []v1.NodeMirror{
		{Name: "m-gre", VRF: "red", Target: v1.NodeMirrorTarget{Name: "collector"}},
		{Name: "a-ok", VRF: "red", Target: v1.NodeMirrorTarget{Name: "collector2"}},
		{Name: "m-src", Layer2: "gone", Target: v1.NodeMirrorTarget{Name: "collector2"}},
	}
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	out := &reconcile.Outcome{Spec: s, Good: good(s), Healthy: true, MapVersion: s.MapVersion(),
		Mirrors: &reconcile.MirrorOutcome{Mirrors: s.Mirrors, Problems: []mirror.Problem{
			{Mirror: "m-gre", Err: fmt.Errorf("target collector: %w: gretap tunnels", mirror.ErrNotSupported)},
			{Mirror: "m-gre", Err: errors.New("target collector has no device")},
			{Mirror: "m-src", Err: errors.New("layer2 gone: no source interface")},
		}}}
	st := Build(out, v1.NodeNetworkConfigStatus{}, 3, now)
	want := []v1.NodeMirrorStatus{
		{Name: "a-ok", Target: "collector2", Applied: true},
		{Name: "m-gre", Target: "collector", Reason: v1.MirrorReasonNotSupported,
			Message: "target collector: not supported by this kernel: gretap tunnels"},
		{Name: "m-src", Target: "collector2", Reason: v1.MirrorReasonInvalid, Message: "layer2 gone: no source interface"},
	}
	if !reflect.DeepEqual(st.Mirrors, want) {
		t.Fatalf("mirrors\n got %+v\nwant %+v", st.Mirrors, want)
	}
	if c := meta.FindStatusCondition(st.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("a left-out mirror changed Ready: %+v", c)
	}
	c := meta.FindStatusCondition(st.Conditions, v1.ConditionMirrorsApplied)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonMirrorsNotApplied || c.ObservedGeneration != 3 ||
		c.Message != "2 of 3 mirrors not applied: m-gre (NotSupported), m-src (Invalid)" {
		t.Fatalf("MirrorsApplied %+v", c)
	}
	if again := Build(out, st, 3, metav1.NewTime(now.Add(time.Minute))); !Equal(again, st) {
		t.Fatalf("rebuild differs:\n%+v\n%+v", again, st)
	}

	// The kernel learnt GRE, the source came: all applied.
	out.Mirrors.Problems = nil
	st = Build(out, st, 3, now)
	if c := meta.FindStatusCondition(st.Conditions, v1.ConditionMirrorsApplied); c == nil || c.Status != metav1.ConditionTrue ||
		c.Message != "3 mirrors applied" || len(st.Mirrors) != 3 || !st.Mirrors[1].Applied {
		t.Fatalf("all applied: %+v %+v", c, st.Mirrors)
	}
	// The mirror step failed: nothing is known to run.
	out.Mirrors.Err = errors.New("netlink: permission denied")
	st = Build(out, st, 3, now)
	for _, m := range st.Mirrors {
		if m.Applied || m.Reason != v1.MirrorReasonApplyFailed || m.Message != "netlink: permission denied" {
			t.Fatalf("failed step: %+v", m)
		}
	}
	// No mirrors any more.
	out.Mirrors = &reconcile.MirrorOutcome{}
	st = Build(out, st, 4, now)
	if st.Mirrors != nil || meta.FindStatusCondition(st.Conditions, v1.ConditionMirrorsApplied) != nil {
		t.Fatalf("without mirrors: %+v %+v", st.Mirrors, st.Conditions)
	}
}
