package dataplane

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// observation is a LinkLookup answering from a fixed view of the node: name -> (ifindex, up).
type observation map[string]struct {
	index int
	up    bool
}

func (o observation) LinkByName(name string) (netlink.Link, error) {
	d, ok := o[name]
	if !ok {
		return nil, errors.New("not observed")
	}
	var flags net.Flags
	if d.up {
		flags = net.FlagUp
	}
	return &netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: name, Index: d.index, Flags: flags}}, nil
}

// TestVerifyObserved: with an observation, Verify takes existence and up from it, and still asks the kernel
// whether our program is attached: the observation carries no XDP state, so eth1 (XDP) passes only because
// Verify reads its XDP program from the kernel.
func TestVerifyObserved(t *testing.T) {
	l := lab.New(t)
	ctx := context.Background()
	if err := l.Build(ctx, lab.Topology{Namespaces: []lab.Namespace{{Name: "node"}, {Name: "h"}},
		Veths: []lab.Veth{{A: lab.Port{NS: "node", Name: "eth0"}, B: lab.Port{NS: "h", Name: "eth0"}},
			{A: lab.Port{NS: "node", Name: "eth1"}, B: lab.Port{NS: "h", Name: "eth1"}}}}); err != nil {
		t.Fatal(err)
	}
	ns := l.NS("node")
	dp, err := Open(ctx, Options{PinDir: l.MustPinDir(), NetNS: ns.NsHandle(), Links: ns.Handle()})
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "a feature the router needs", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dp.Close() })
	want := []v1.DataPlaneInterface{{Name: "eth0", VRF: "red"}, {Name: "eth1", VRF: "red", Hook: v1.HookXDP}}
	idx, err := Ifindexes(ns.Handle(), want)
	if err != nil {
		t.Fatal(err)
	}
	p := PlanAttach(AttachInput{Want: want, Ifindex: idx})
	st, err := dp.Ensure(ctx, p.Attach)
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "XDP", err)
	}
	if err != nil {
		t.Fatalf("ensure: %v (%+v)", err, st)
	}
	obs := observation{"eth0": {idx["eth0"], true}, "eth1": {idx["eth1"], true}}
	if err := dp.Verify(want, obs); err != nil {
		t.Fatalf("attached, observed up: %v", err)
	}
	down := observation{"eth0": {idx["eth0"], false}, "eth1": {idx["eth1"], true}}
	if err := dp.Verify(want, down); err == nil || !strings.Contains(err.Error(), "eth0 is down") {
		t.Fatalf("observed down: %v", err)
	}
}
