package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/frrmodel"
	"github.com/network-operator/network-operator/agent/metrics"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr"
)

// retried checks an outcome of a transient failure: nothing recorded against the spec, the node still on r1,
// and the next reconcile (with a fresh context) applies the spec.
func retried(t *testing.T, r *rig, out *Outcome, bad *v1.NodeNetworkConfigSpec, passwords frrmodel.PasswordFunc) {
	t.Helper()
	if !out.Retrying() || !errors.Is(out.Err, ErrTransient) || out.Result != metrics.ResultRetry {
		t.Fatalf("outcome %s err %v, want a retry", out.Result, out.Err)
	}
	if st := r.e.State(); st.Failure != nil || st.Good == nil || st.Good.Revision != "r1" {
		t.Fatalf("state after a transient error: good %+v failure %+v, want r1 and no failure", st.Good, st.Failure)
	}
	if out.RestoreErr != nil {
		t.Errorf("restore error %v", out.RestoreErr)
	}
	r.w.log = nil
	next := r.e.Reconcile(context.Background(), bad, passwords)
	if !next.Applied() || next.Good.Revision != bad.Revision {
		t.Fatalf("retry: %s %v / %v; steps %q", next.Result, next.Err, next.HealthErr, r.w.log)
	}
	if r.dp.version.Revision != bad.MapVersion() {
		t.Errorf("live map version %.8s after the retry, want %.8s", r.dp.version.Revision, bad.MapVersion())
	}
}

// A cancelled reconcile (the agent's SIGTERM) stops between steps - at every step - and is no failure of the
// spec: nothing is restored, and the next reconcile converges from where it stopped.
func TestCancelAtEveryStep(t *testing.T) {
	for _, stop := range []string{StepVRFs, StepFRR, StepFRRReload, StepInterfaces, StepMirror, StepAttach, StepMaps,
		StepDetach, StepRemovals} {
		t.Run(stop, func(t *testing.T) {
			r := newRig(t, t.TempDir())
			if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
				t.Fatal(out.Err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ran []string
			r.e.beforeStep = func(step string, s *v1.NodeNetworkConfigSpec) error {
				r.w.setCurrent(s.Revision)
				ran = append(ran, step)
				if step == stop {
					cancel() // SIGTERM arrives as this step is about to run
				}
				return nil
			}
			r.w.log = nil
			bad := spec("r2", "blue")
			out := r.e.Reconcile(ctx, bad, nil)
			if ran[len(ran)-1] != stop {
				t.Fatalf("steps %q ran on after the cancellation at %s", ran, stop)
			}
			var se *StepError
			if !errors.As(out.Err, &se) || se.Step != stop || !errors.Is(out.Err, context.Canceled) {
				t.Errorf("error %v, want the cancellation at step %s", out.Err, stop)
			}
			if slices.Contains(r.w.log, "detach br.blue") || slices.Contains(r.w.log, "frr skipped") {
				t.Errorf("steps %q: a restore ran", r.w.log)
			}
			r.e.beforeStep = func(step string, s *v1.NodeNetworkConfigSpec) error { r.w.setCurrent(s.Revision); return nil }
			retried(t, r, out, bad, nil)
		})
	}
}

// A step that runs when the cancellation arrives finishes (never half a netlink phase or half an FRR reload):
// its context is not cancelled with the reconcile's.
func TestCancelDuringStepFinishesIt(t *testing.T) {
	r := newRig(t, t.TempDir())
	if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
		t.Fatal(out.Err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stepCtxErr error
	r.e.o.Dataplane = &cancellingDataplane{fakeDataplane: r.dp, cancel: cancel, seen: &stepCtxErr}
	bad := spec("r2", "blue")
	out := r.e.Reconcile(ctx, bad, nil)
	if stepCtxErr != nil {
		t.Errorf("the attach step's context was cancelled with the reconcile's: %v", stepCtxErr)
	}
	var se *StepError
	if !errors.As(out.Err, &se) || se.Step != StepMaps {
		t.Errorf("error %v, want the stop before the step after attach (%s)", out.Err, StepMaps)
	}
	if _, ok := r.dp.attached["br.blue"]; !ok {
		t.Errorf("the attach step did not finish: %v", r.dp.attached)
	}
	r.e.o.Dataplane = r.dp
	retried(t, r, out, bad, nil)
}

type cancellingDataplane struct {
	*fakeDataplane
	cancel context.CancelFunc
	seen   *error
}

func (d *cancellingDataplane) Ensure(ctx context.Context, steps []dataplane.AttachStep) ([]v1.InterfaceStatus, error) {
	d.cancel()
	*d.seen = ctx.Err()
	return d.fakeDataplane.Ensure(ctx, steps)
}

// Faults while planning - an interrupted netlink dump, a Secret not there yet or not readable - are retried, not
// recorded against the spec.
func TestTransientPlanErrors(t *testing.T) {
	withPassword := func(s *v1.NodeNetworkConfigSpec) *v1.NodeNetworkConfigSpec {
		s.BGPPeers = []v1.NodeBGPPeer{{Name: "tenant.peer", VRF: "blue", RemoteASN: 65100, Addresses: []string{"10.1.1.2"},
			PasswordSecretRef: &v1.SecretKeyReference{Namespace: "tenant", Name: "pw", Key: "password"}}}
		return s
	}
	// secretAfter reads the password with err until the Secret is "there" (the test says so after the first try).
	secretAfter := func(err error) func(there *bool) frrmodel.PasswordFunc {
		return func(there *bool) frrmodel.PasswordFunc {
			return func(context.Context, v1.SecretKeyReference) (string, error) {
				if !*there {
					return "", err
				}
				return "s3cret", nil
			}
		}
	}
	cases := []struct {
		name      string
		spec      *v1.NodeNetworkConfigSpec
		planErr   error
		passwords func(there *bool) frrmodel.PasswordFunc
	}{
		{name: "interrupted netlink dump", spec: spec("r2", "blue"),
			planErr: fmt.Errorf("observe: list links: %w", netlink.ErrDumpInterrupted)},
		{name: "Secret created late", spec: withPassword(spec("r2", "blue")),
			passwords: secretAfter(errors.New(`secrets "pw" not found`))},
		{name: "API server unreachable", spec: withPassword(spec("r2", "blue")),
			passwords: secretAfter(errors.New("dial tcp 10.96.0.1:443: connect: connection refused"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, t.TempDir())
			if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
				t.Fatal(out.Err)
			}
			var passwords frrmodel.PasswordFunc
			secretThere := false
			if tc.passwords != nil {
				passwords = tc.passwords(&secretThere)
			}
			if tc.planErr != nil {
				r.w.planErrs = []error{tc.planErr}
			}
			r.w.log = nil
			out := r.e.Reconcile(context.Background(), tc.spec, passwords)
			if !errors.Is(out.Err, ErrPlan) && !errors.Is(out.Err, netlink.ErrDumpInterrupted) {
				t.Errorf("error %v, want the plan's", out.Err)
			}
			if len(r.w.log) != 0 {
				t.Errorf("steps %q ran after a failed plan", r.w.log)
			}
			secretThere = true
			retried(t, r, out, tc.spec, passwords)
		})
	}
}

// FRR keeping a line in another form fails a rendered config (it would differ after every reload), but not one
// rendered into the host's own base config, which may hold lines FRR never shows.
func TestFRRResidual(t *testing.T) {
	for _, brownfield := range []bool{false, true} {
		r := newRig(t, t.TempDir())
		if brownfield {
			r.e.o.RenderFRR = frr.Render
		}
		if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
			t.Fatal(out.Err)
		}
		r.w.failFRR["r2"] = "residual"
		out, _ := r.reconcile(spec("r2", "red", "blue"))
		if failed := errors.Is(out.Err, ErrFRRDiffers); failed == brownfield || out.Applied() == !brownfield {
			t.Errorf("brownfield %v: outcome %s %v", brownfield, out.Result, out.Err)
		}
	}
}

// FRR not answering when its config is to change (its container or DaemonSet starts after the agent, or
// restarts) is a fault, not the spec's: retried, nothing recorded, nothing restored; once FRR answers, the
// spec applies.
func TestFRRNotAnsweringIsRetried(t *testing.T) {
	r := newRig(t, t.TempDir())
	if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
		t.Fatal(out.Err)
	}
	r.frr.down = true
	next := spec("r2", "blue")
	out, log := r.reconcile(next)
	if !out.Retrying() || !strings.Contains(out.Err.Error(), "FRR does not answer") {
		t.Fatalf("outcome %s err %v, want a retry because FRR does not answer", out.Result, out.Err)
	}
	if len(log) > 0 {
		t.Errorf("steps ran while FRR did not answer: %q", log)
	}
	r.frr.down = false
	retried(t, r, out, next, nil)
}

// FRR restarted without the applied config (its DaemonSet pod replaced, a crash): the next reconcile of the same
// spec reloads FRR, and the plan says why; with FRR as it was, a resync leaves it alone.
func TestFRRRestartIsReloaded(t *testing.T) {
	r := newRig(t, t.TempDir())
	if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
		t.Fatal(out.Err)
	}
	if _, log := r.reconcile(spec("r1", "red")); !slices.Equal(log, []string{"frr skipped"}) {
		t.Fatalf("resync steps %q, want FRR left alone", log)
	}
	r.frr.restarted = true
	out, log := r.reconcile(spec("r1", "red"))
	if !out.Applied() || !slices.Contains(log, "frr reload") || !out.Plan.FRR.Restarted ||
		!strings.Contains(out.Plan.String(), "FRR restarted without the applied config") {
		t.Fatalf("after FRR's restart: %s %v, steps %q, plan:\n%s", out.Result, out.Err, log, out.Plan)
	}
}
