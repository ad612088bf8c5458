package dataplane

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/testreq"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/netns/lab"
)

// Ensure attaches once and keeps the link while the hook allows it, moves hooks on request, re-attaches a
// re-created device; Verify asks the kernel; a View reads the same state without changing anything.
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

	want := []v1.DataPlaneInterface{{Name: "eth0", VRF: "red"}, {Name: "eth0", VLAN: 7, VRF: "red"}}
	if err := dp.Verify(want); !errors.Is(err, ErrNotAttached) {
		t.Fatalf("verify before attaching: %v, want ErrNotAttached", err)
	}
	st, err := dp.Ensure(ctx, want)
	mustf(err, "ensure")
	if len(st) != 1 || st[0].Mode != v1.AttachTCX {
		t.Fatalf("status %+v, want eth0 once, tcx", st)
	}
	mustf(dp.Verify(want), "verify")
	first := dp.Attachments()[0]

	// Again, and with hook tc: the same link.
	want[0].Hook = v1.HookTC
	_, err = dp.Ensure(ctx, want)
	mustf(err, "ensure again")
	if a := dp.Attachments()[0]; a.LinkID != first.LinkID {
		t.Fatalf("re-ensure changed the link %d -> %d", first.LinkID, a.LinkID)
	}

	// The read-only view sees the pinned link and the (empty) tables.
	v, err := OpenView(pin, ns.Handle())
	mustf(err, "view")
	if atts := v.Attachments(); len(atts) != 1 || atts[0].LinkID != first.LinkID || atts[0].Interface != "eth0" {
		t.Fatalf("view attachments %+v", atts)
	}
	if _, err := v.Apply(ctx, maps.Tables{}, "x"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("view apply: %v, want ErrReadOnly", err)
	}
	v.Close()

	// Hook xdp moves the attachment (native on veth, generic where native is refused).
	want[0].Hook = v1.HookXDP
	st, err = dp.Ensure(ctx, want)
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "XDP", err)
	}
	mustf(err, "ensure xdp")
	if st[0].Mode != v1.AttachXDPNative && st[0].Mode != v1.AttachXDPGeneric {
		t.Fatalf("mode %q after hook xdp", st[0].Mode)
	}
	mustf(dp.Verify(want), "verify xdp")

	mustf(dp.DetachExcept(ctx, nil), "detach")
	if err := dp.Verify(want); !errors.Is(err, ErrNotAttached) {
		t.Fatalf("verify after detach: %v, want ErrNotAttached", err)
	}
}
