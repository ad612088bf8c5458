package mirror_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// The GRE step: the target's tunnel is created (gretap for l2gre, with its key), the mirror's filters copy into
// it, and everything goes when the mirror does. Where the kernel has no GRE the apply reports the mirror as
// not supported (ErrNotSupported) without failing, and the next plan leaves it out without trying again.
func TestMirrorGRETunnel(t *testing.T) {
	testreq.Root(t)
	l := newLab(t)
	node := l.NS("node")
	m := mirror.New(node.Handle(), node.NsHandle())
	spec := &v1.NodeNetworkConfigSpec{Mirrors: []v1.NodeMirror{{Name: "sel", Layer2: "l2a", Direction: v1.MirrorIngress,
		Target: v1.NodeMirrorTarget{Name: "collector", Type: v1.MirrorTargetL2GRE, DestinationIP: "10.0.0.2", Key: ptr(int64(7)),
			VRF: "default"}}}}
	ctx := context.Background()
	p, err := m.Plan(ctx, spec, desiredWithSource())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.AddTunnels) != 1 || !strings.HasPrefix(p.AddTunnels[0], "gretap gm.collector") {
		t.Fatalf("want one gretap tunnel, plan:\n%s", strings.Join(p.Steps(), "\n"))
	}
	res, err := m.Apply(ctx, p)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if len(res.Problems) > 0 {
		err := res.Problems[0].Err
		if !errors.Is(err, mirror.ErrNotSupported) || res.Problems[0].Mirror != "sel" {
			t.Fatalf("problem is not ErrNotSupported of mirror sel: %v", res.Problems[0])
		}
		again, perr := m.Plan(ctx, spec, desiredWithSource())
		if perr != nil || !again.Empty() || len(again.Problems) == 0 {
			t.Fatalf("after detection: want an empty plan naming the problem, got %v %+v", perr, again)
		}
		if obs, oerr := m.Observe(ctx); oerr != nil || len(obs.Filters) != 0 || len(obs.Tunnels) != 0 {
			t.Fatalf("nothing may be left of a mirror whose tunnel failed: %+v %v", obs, oerr)
		}
		testreq.KernelLacks(t, "GRE TAP tunnels", err)
	}
	lk, err := node.Link("gm.collector")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(lk.Attrs().Alias, mirror.AliasPrefix) || lk.Type() != "gretap" {
		t.Fatalf("tunnel: type %s alias %q", lk.Type(), lk.Attrs().Alias)
	}
	obs, err := m.Observe(ctx)
	if err != nil || len(obs.Filters) != 2 {
		t.Fatalf("want the two filters (IPv4, IPv6) into the tunnel: %+v %v", obs, err)
	}
	if again, err := m.Plan(ctx, spec, desiredWithSource()); err != nil || !again.Empty() {
		t.Fatalf("not converged: %v %v", err, again.Steps())
	}
	p, err = m.Plan(ctx, &v1.NodeNetworkConfigSpec{}, &nodenet.Desired{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	if obs, err := m.Observe(ctx); err != nil || len(obs.Filters) != 0 || len(obs.Tunnels) != 0 {
		t.Fatalf("left after removal: %+v %v", obs, err)
	}
}
