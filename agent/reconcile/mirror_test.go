package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// fakeMirror plans one filter per mirror of the spec, as long as the node does not have it yet.
type fakeMirror struct {
	w    *world
	have map[string]bool
}

func (f *fakeMirror) Plan(_ context.Context, spec *v1.NodeNetworkConfigSpec, _ *nodenet.Desired) (*mirror.Plan, error) {
	p := &mirror.Plan{}
	for _, m := range spec.Mirrors {
		if !f.have[m.Name] {
			p.AddRules = append(p.AddRules, mirror.Rule{Mirror: m.Name, Interface: "vx." + m.VRF, Family: 4, TargetDevice: "gm.t"})
		}
		p.Problems = append(p.Problems, mirror.Problem{Mirror: m.Name, Err: fmt.Errorf("ipv6 half: %w", mirror.ErrNotSupported)})
	}
	return p, nil
}

func (f *fakeMirror) Apply(_ context.Context, p *mirror.Plan) (*mirror.Result, error) {
	for _, r := range p.AddRules {
		f.w.logf("mirror %s", r.Mirror)
		f.have[r.Mirror] = true
	}
	return &mirror.Result{Problems: p.Problems}, nil
}

// Mirrors are applied after the interfaces exist and before the router attaches; the dry-run plan lists them
// and names what is left out; a kernel without GRE does not fail the apply.
func TestMirrorStep(t *testing.T) {
	r := newRig(t, t.TempDir())
	r.e.o.Mirror = &fakeMirror{w: r.w, have: map[string]bool{}}
	s := spec("r1", "red")
	s.Mirrors = []v1.NodeMirror{{Name: "m1", VRF: "red", Direction: v1.MirrorIngress}}
	p, err := r.e.Plan(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	str := p.String()
	if !strings.Contains(str, "mirror     add filter: mirror m1: vx.red egress ipv4 [all] -> gm.t") ||
		!strings.Contains(str, "unsupported: mirror m1: ipv6 half: not supported by this kernel") {
		t.Fatalf("plan:\n%s", str)
	}
	out, log := r.reconcile(s)
	if !out.Applied() {
		t.Fatalf("outcome %s: %v", out.Result, out.Err)
	}
	want := []string{"netlink vrfs", "frr validate", "frr reload", "netlink interfaces", "mirror m1", "attach br.red", "attach eth0"}
	if !slices.Equal(log[:len(want)], want) {
		t.Fatalf("steps\n got %q\nwant %q prefix", log, want)
	}
	if out, log := r.reconcile(s); out.Result != "unchanged" || slices.Contains(log, "mirror m1") {
		t.Fatalf("second reconcile: %s %q", out.Result, log)
	}
	if !errors.Is(p.Mirror.Problems[0].Err, mirror.ErrNotSupported) {
		t.Fatal("problem lost its cause")
	}
}

// refusingMirror applies every mirror except those into the targets the "kernel" refuses (no GRE).
type refusingMirror struct{ refuse map[string]bool }

func (f *refusingMirror) Plan(_ context.Context, spec *v1.NodeNetworkConfigSpec, _ *nodenet.Desired) (*mirror.Plan, error) {
	p := &mirror.Plan{}
	for _, m := range spec.Mirrors {
		p.Desired.Rules = append(p.Desired.Rules, mirror.Rule{Mirror: m.Name, TargetDevice: mirror.DeviceName(m.Target.Name)})
	}
	return p, nil
}

func (f *refusingMirror) Apply(_ context.Context, p *mirror.Plan) (*mirror.Result, error) {
	res := &mirror.Result{}
	for _, r := range p.Desired.Rules {
		if t := strings.TrimPrefix(r.TargetDevice, "gm."); f.refuse[t] {
			res.Problems = append(res.Problems, mirror.Problem{Mirror: r.Mirror, Err: fmt.Errorf("target %s: %w", t, mirror.ErrNotSupported)})
		}
	}
	return res, nil
}

// The outcome carries what the mirror step left running: a mirror into a target the kernel refuses is a
// problem of its own, the spec is applied all the same; after a rollback the mirrors are the good spec's.
func TestMirrorOutcome(t *testing.T) {
	r := newRig(t, t.TempDir())
	r.e.o.Mirror = &refusingMirror{refuse: map[string]bool{"gre": true}}
	s := spec("r1", "red")
	s.Mirrors = []v1.NodeMirror{{Name: "m1", VRF: "red", Target: v1.NodeMirrorTarget{Name: "gre"}},
		{Name: "m2", VRF: "red", Target: v1.NodeMirrorTarget{Name: "ok"}}}
	out, _ := r.reconcile(s)
	if !out.Applied() || out.Mirrors == nil {
		t.Fatalf("outcome %s: %v, mirrors %+v", out.Result, out.Err, out.Mirrors)
	}
	mo := out.Mirrors
	if len(mo.Mirrors) != 2 || mo.Err != nil || len(mo.Problems) != 1 || mo.Problems[0].Mirror != "m1" ||
		!errors.Is(mo.Problems[0].Err, mirror.ErrNotSupported) {
		t.Fatalf("mirror outcome %+v", mo)
	}
	// A later spec with another mirror fails at attach: the node runs r1 again, and so its mirrors.
	s2 := spec("r2", "red")
	s2.Mirrors = []v1.NodeMirror{{Name: "m3", VRF: "red", Target: v1.NodeMirrorTarget{Name: "ok"}}}
	r.e.beforeStep = func(step string, spec *v1.NodeNetworkConfigSpec) error {
		if step == StepAttach && spec.Revision == "r2" {
			return errors.New("attach refused")
		}
		return nil
	}
	out, _ = r.reconcile(s2)
	if out.Err == nil || out.Mirrors == nil {
		t.Fatalf("r2 applied: %+v", out)
	}
	if got := out.Mirrors.Mirrors; len(got) != 2 || got[0].Name != "m1" || got[1].Name != "m2" {
		t.Fatalf("after the rollback the mirrors are %+v, want r1's", got)
	}
}
