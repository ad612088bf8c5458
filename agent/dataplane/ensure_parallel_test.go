package dataplane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// Ensure and Detach run many steps in parallel: the statuses and the joined errors come back in step order, a
// step failing in the middle is reported for its interface without stopping the others, every other step is
// done (Verify asks the kernel), and a cancelled context fails every step that calls the loader.
func TestEnsureManyStepsInOrder(t *testing.T) {
	l := lab.New(t)
	ctx := context.Background()
	ns, err := l.AddNamespace("node")
	if err != nil {
		t.Fatal(err)
	}
	// Several rounds of workers, so that steps finish out of order.
	const bridges = 12 * attachWorkers
	names := make([]string, bridges)
	for i := range names {
		names[i] = fmt.Sprintf("br%02d", i)
		if err := ns.Handle().LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: names[i]}}); err != nil {
			t.Fatalf("add %s: %v", names[i], err)
		}
		br, err := ns.Handle().LinkByName(names[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := ns.Handle().LinkSetUp(br); err != nil {
			t.Fatalf("set %s up: %v", names[i], err)
		}
	}
	dp, err := Open(ctx, Options{PinDir: l.MustPinDir(), NetNS: ns.NsHandle(), Links: ns.Handle()})
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "a feature the router needs", err)
	}
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { dp.Close() })

	step := func(name string, action AttachAction, from loader.Mode, modes ...loader.Mode) AttachStep {
		s := AttachStep{Interface: name, Action: action, From: from, Modes: modes}
		if action != ActionDetach {
			s.Hook = v1.HookTC
		}
		return s
	}
	// A row is one step and what Ensure (or Detach) must report for it: its mode, or that it fails.
	type row struct {
		step  AttachStep
		mode  v1.AttachMode
		fails bool
	}
	var attachAll, moveSome, detachAll, cancelled []row
	for i, n := range names {
		attachAll = append(attachAll, row{step: step(n, ActionAttach, "", loader.ModeTCX), mode: v1.AttachTCX})
		// Every third interface moves to legacy tc, the others are kept.
		if i%3 == 0 {
			moveSome = append(moveSome, row{step: step(n, ActionMove, loader.ModeTCX, loader.ModeTC), mode: v1.AttachTCLegacy})
		} else {
			moveSome = append(moveSome, row{step: step(n, ActionKeep, loader.ModeTCX), mode: v1.AttachTCX})
		}
		detachAll = append(detachAll, row{step: step(n, ActionDetach, "")})
		cancelled = append(cancelled, row{step: step(n, ActionAttach, "", loader.ModeTCX), mode: v1.AttachNone, fails: true})
	}
	mid := bridges / 2
	attachAll = insertRows(attachAll, mid,
		row{step: step("nosuchdev", ActionAttach, "", loader.ModeTCX), mode: v1.AttachNone, fails: true},
		row{step: step(names[0]+"x", ActionAttach, ""), mode: v1.AttachNone, fails: true}, // no mode to try
	)
	moveSome = insertRows(moveSome, mid,
		row{step: step("nosuchdev", ActionDetach, ""), mode: v1.AttachNone, fails: true}, // not an attach step
	)
	detachAll = insertRows(detachAll, mid,
		row{step: step(names[mid], ActionAttach, "", loader.ModeTCX), fails: true}, // not a detach step
		row{step: step("nosuchdev", ActionDetach, "")},                             // not attached: nothing to do
	)
	cancelledCtx, cancel := context.WithCancel(ctx)
	cancel()

	for _, tc := range []struct {
		name string
		ctx  context.Context
		rows []row
		// attached is every interface's mode after the steps (absent: not attached).
		attached func(i int) loader.Mode
	}{
		{"attach all, two failing steps in the middle", ctx, attachAll,
			func(int) loader.Mode { return loader.ModeTCX }},
		{"move every third to legacy tc, keep the others, a detach step in the middle", ctx, moveSome,
			func(i int) loader.Mode {
				if i%3 == 0 {
					return loader.ModeTC
				}
				return loader.ModeTCX
			}},
		{"detach all, an attach step in the middle", ctx, detachAll,
			func(int) loader.Mode { return "" }},
		{"attach with a cancelled context", cancelledCtx, cancelled,
			func(int) loader.Mode { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := make([]AttachStep, len(tc.rows))
			var failing []string
			for i, r := range tc.rows {
				steps[i] = r.step
				if r.fails {
					failing = append(failing, r.step.Interface)
				}
			}
			detach := steps[0].Action == ActionDetach
			var err error
			if detach {
				err = dp.Detach(tc.ctx, steps)
			} else {
				var st []v1.InterfaceStatus
				st, err = dp.Ensure(tc.ctx, steps)
				if len(st) != len(tc.rows) {
					t.Fatalf("%d statuses for %d steps", len(st), len(tc.rows))
				}
				for i, r := range tc.rows {
					if st[i].Name != r.step.Interface || st[i].Mode != r.mode || (st[i].Error != "") != r.fails {
						t.Errorf("status %d: %+v, want %s mode %q failing %v", i, st[i], r.step.Interface, r.mode, r.fails)
					}
					if r.fails && !strings.Contains(st[i].Error, r.step.Interface) {
						t.Errorf("status %d: error %q does not name %s", i, st[i].Error, r.step.Interface)
					}
				}
			}
			checkJoined(t, err, failing)
			if tc.ctx.Err() != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}

			got := map[string]loader.Mode{}
			for _, a := range dp.Attachments() {
				got[a.Interface] = a.Mode
			}
			var want []v1.DataPlaneInterface
			for i, n := range names {
				if got[n] != tc.attached(i) {
					t.Errorf("%s attached with %q, want %q", n, got[n], tc.attached(i))
				}
				if tc.attached(i) != "" {
					want = append(want, v1.DataPlaneInterface{Name: n, VRF: "red"})
				}
				delete(got, n)
			}
			if len(got) != 0 {
				t.Errorf("attached to interfaces no step made: %v", got)
			}
			if err := dp.Verify(want, nil); err != nil {
				t.Errorf("verify: %v", err)
			}
		})
	}
}

// checkJoined checks that err joins exactly one error per failing step, in step order, each naming its interface.
func checkJoined(t *testing.T, err error, failing []string) {
	t.Helper()
	var errs []error
	if err != nil {
		joined, ok := err.(interface{ Unwrap() []error })
		if !ok {
			t.Fatalf("error %v does not join the steps' errors", err)
		}
		errs = joined.Unwrap()
	}
	if len(errs) != len(failing) {
		t.Fatalf("%d errors %v, want one for each of %v", len(errs), err, failing)
	}
	for i, e := range errs {
		if !strings.Contains(e.Error(), failing[i]) {
			t.Errorf("error %d %q, want %s's", i, e, failing[i])
		}
	}
}

func insertRows[T any](rows []T, at int, extra ...T) []T {
	return append(rows[:at:at], append(extra, rows[at:]...)...)
}
