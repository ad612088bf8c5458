package dataplane

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// Ensure executes the planned steps: it attaches once and keeps the link while the hook allows it, moves hooks
// when the plan says so, re-attaches a re-created device; Verify asks the kernel; a View reads the same state
// without changing anything, so a dry run plans the same steps. Issue 11's case: eth0 attached with tcx, the spec
// asks for xdp on its VLAN 7 entry - the plan (dry run or not) moves eth0 to XDP and the apply does exactly that.
func TestEnsureVerifyView(t *testing.T) {
	l := lab.New(t)
	ctx := context.Background()
	mustf := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mustf(l.Build(ctx, lab.Topology{Namespaces: []lab.Namespace{{Name: "node"}, {Name: "h"}},
		Veths: []lab.Veth{{A: lab.Port{NS: "node", Name: "eth0"}, B: lab.Port{NS: "h", Name: "eth0"}}}}), "topology")
	ns := l.NS("node")
	pin := l.MustPinDir()
	dp, err := Open(ctx, Options{PinDir: pin, NetNS: ns.NsHandle(), Links: ns.Handle()})
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "a feature the router needs", err)
	}
	mustf(err, "open")
	t.Cleanup(func() { dp.Close() })

	// plan observes like the agent does (attachments from dp, or from a View for a dry run) and decides.
	plan := func(want []v1.DataPlaneInterface, attached []loader.Attachment) AttachPlan {
		t.Helper()
		idx, err := Ifindexes(ns.Handle(), want)
		mustf(err, "ifindexes")
		return PlanAttach(AttachInput{Want: want, Attached: attached, Ifindex: idx})
	}
	actions := func(steps []AttachStep) []string {
		var out []string
		for _, s := range steps {
			out = append(out, s.Interface+" "+string(s.Action))
		}
		return out
	}
	expect := func(p AttachPlan, attach, detach []string) {
		t.Helper()
		if got := actions(p.Attach); !slices.Equal(got, attach) {
			t.Fatalf("attach steps %q, want %q (%+v)", got, attach, p.Attach)
		}
		if got := actions(p.Detach); !slices.Equal(got, detach) {
			t.Fatalf("detach steps %q, want %q", got, detach)
		}
	}
	dryRunPlan := func(want []v1.DataPlaneInterface) AttachPlan {
		t.Helper()
		v, err := OpenView(ctx, pin, ns.NsHandle())
		mustf(err, "view")
		defer v.Close()
		return plan(want, v.Attachments())
	}

	want := []v1.DataPlaneInterface{{Name: "eth0", VRF: "red"}, {Name: "eth0", VLAN: 7, VRF: "red"}}
	if err := dp.Verify(want, nil); !errors.Is(err, ErrNotAttached) {
		t.Fatalf("verify before attaching: %v, want ErrNotAttached", err)
	}
	p := plan(want, dp.Attachments())
	expect(p, []string{"eth0 attach"}, nil)
	st, err := dp.Ensure(ctx, p.Attach)
	mustf(err, "ensure")
	if len(st) != 1 || st[0].Mode != v1.AttachTCX {
		t.Fatalf("status %+v, want eth0 once, tcx", st)
	}
	mustf(dp.Verify(want, nil), "verify")
	first := dp.Attachments()[0]

	// Again, and with hook tc: kept, the same link.
	want[0].Hook = v1.HookTC
	p = plan(want, dp.Attachments())
	expect(p, []string{"eth0 keep"}, nil)
	st, err = dp.Ensure(ctx, p.Attach)
	mustf(err, "ensure again")
	if a := dp.Attachments()[0]; a.LinkID != first.LinkID || st[0].Mode != v1.AttachTCX {
		t.Fatalf("keep changed the link %d -> %d (status %+v)", first.LinkID, a.LinkID, st)
	}

	// The read-only view sees the pinned link and the (empty) tables, and refuses changes.
	v, err := OpenView(ctx, pin, ns.NsHandle())
	mustf(err, "view")
	if atts := v.Attachments(); len(atts) != 1 || atts[0].LinkID != first.LinkID || atts[0].Interface != "eth0" ||
		atts[0].Mode != loader.ModeTCX {
		t.Fatalf("view attachments %+v", atts)
	}
	if _, err := v.Apply(ctx, maps.Tables{}, "x"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("view apply: %v, want ErrReadOnly", err)
	}
	if _, err := v.Ensure(ctx, p.Attach); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("view ensure: %v, want ErrReadOnly", err)
	}
	v.Close()

	// Issue 11: the first entry says nothing, the VLAN 7 entry asks for xdp. The dry run and the apply plan the
	// same move, and the apply makes exactly it (native on veth, generic where native is refused).
	want = []v1.DataPlaneInterface{{Name: "eth0", VRF: "red"}, {Name: "eth0", VLAN: 7, VRF: "red", Hook: v1.HookXDP}}
	p = plan(want, dp.Attachments())
	expect(p, []string{"eth0 move"}, nil)
	if s := p.Attach[0]; s.From != loader.ModeTCX || s.Hook != v1.HookXDP || p.Empty() {
		t.Fatalf("move step %+v, want from tcx to hook xdp", s)
	}
	if dry := dryRunPlan(want); !equalPlans(dry, p) {
		t.Fatalf("dry-run plan %+v differs from the agent's %+v", dry, p)
	}
	st, err = dp.Ensure(ctx, p.Attach)
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "XDP", err)
	}
	mustf(err, "ensure xdp")
	if st[0].Mode != v1.AttachXDPNative && st[0].Mode != v1.AttachXDPGeneric {
		t.Fatalf("mode %q after hook xdp", st[0].Mode)
	}
	if atts := dp.Attachments(); len(atts) != 1 || !atts[0].Mode.IsXDP() || AttachMode(atts[0].Mode) != st[0].Mode {
		t.Fatalf("attachments after the move %+v, status %+v", atts, st)
	}
	mustf(dp.Verify(want, nil), "verify xdp")
	p = plan(want, dp.Attachments())
	expect(p, []string{"eth0 keep"}, nil)
	if dry := dryRunPlan(want); !equalPlans(dry, p) || !p.Empty() {
		t.Fatalf("after the move: dry-run plan %+v, agent's %+v, want both keep", dry, p)
	}

	// A device re-created under the same name: planned (dry run too) and executed as a re-attach.
	mustf(ns.Handle().LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}), "add br0")
	setUp := func() {
		t.Helper()
		br, err := ns.Handle().LinkByName("br0")
		mustf(err, "br0")
		mustf(ns.Handle().LinkSetUp(br), "br0 up")
	}
	setUp()
	want = append(want, v1.DataPlaneInterface{Name: "br0", VRF: "red"})
	p = plan(want, dp.Attachments())
	expect(p, []string{"br0 attach", "eth0 keep"}, nil)
	_, err = dp.Ensure(ctx, p.Attach)
	mustf(err, "ensure br0")
	old, err := ns.Ifindex("br0")
	mustf(err, "br0 ifindex")
	br, err := ns.Handle().LinkByName("br0")
	mustf(err, "br0")
	mustf(ns.Handle().LinkDel(br), "delete br0")
	mustf(ns.Handle().LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}), "re-create br0")
	setUp()
	if err := dp.Verify(want, nil); !errors.Is(err, ErrNotAttached) {
		t.Fatalf("verify with br0 re-created: %v, want ErrNotAttached", err)
	}
	p = plan(want, dp.Attachments())
	expect(p, []string{"br0 reattach", "eth0 keep"}, nil)
	// A View reads the pins as the next agent's Load adopts them: it drops br0's defunct link, so a dry run
	// attaches br0 - the same loader call.
	expect(dryRunPlan(want), []string{"br0 attach", "eth0 keep"}, nil)
	_, err = dp.Ensure(ctx, p.Attach)
	mustf(err, "re-attach br0")
	if a := attachmentOf(t, dp.Attachments(), "br0"); a.Ifindex == old {
		t.Fatalf("br0 still attached to the old ifindex %d", old)
	}
	mustf(dp.Verify(want, nil), "verify re-attached")

	// Nothing configured: the plan detaches everything, the apply does exactly that.
	p = plan(nil, dp.Attachments())
	expect(p, nil, []string{"br0 detach", "eth0 detach"})
	if dry := dryRunPlan(nil); !equalPlans(dry, p) {
		t.Fatalf("dry-run plan %+v differs from the agent's %+v", dry, p)
	}
	mustf(dp.Detach(ctx, p.Detach), "detach")
	if err := dp.Verify(want, nil); !errors.Is(err, ErrNotAttached) {
		t.Fatalf("verify after detach: %v, want ErrNotAttached", err)
	}
	if atts := dp.Attachments(); len(atts) != 0 {
		t.Fatalf("attachments left: %+v", atts)
	}
}

func attachmentOf(t *testing.T, atts []loader.Attachment, name string) loader.Attachment {
	t.Helper()
	for _, a := range atts {
		if a.Interface == name {
			return a
		}
	}
	t.Fatalf("no attachment of %s in %+v", name, atts)
	return loader.Attachment{}
}

func equalPlans(a, b AttachPlan) bool {
	eq := func(x, y AttachStep) bool {
		return x.Interface == y.Interface && x.Action == y.Action && x.Hook == y.Hook && x.From == y.From &&
			x.Reason == y.Reason && slices.Equal(x.Modes, y.Modes)
	}
	return slices.EqualFunc(a.Attach, b.Attach, eq) && slices.EqualFunc(a.Detach, b.Detach, eq)
}
