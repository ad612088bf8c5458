package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/metrics"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
)

// The fakes record every change in one log, so the tests see the order of the steps across parts.
type world struct {
	log   []string
	links map[string]int // name -> ifindex of the links that exist
	next  int

	failPhase map[string]nodenet.Phase // revision -> netlink phase that fails
	failFRR   map[string]string        // revision -> "validate" or "reload" fails, or "residual": FRR keeps a line otherwise
	failMaps  map[string]bool          // map version -> the generation write fails
	unhealthy bool                     // Verify fails
	current   string                   // revision being applied
	planErrs  []error                  // the next plans fail with these, one each
}

func newWorld() *world {
	return &world{links: map[string]int{"eth0": 2, "eth1": 3}, next: 100,
		failPhase: map[string]nodenet.Phase{}, failFRR: map[string]string{}, failMaps: map[string]bool{}}
}

func (w *world) logf(format string, args ...any) { w.log = append(w.log, fmt.Sprintf(format, args...)) }

// fakeNetlink plans with nodenet's real planner against what it "created" before.
type fakeNetlink struct {
	w       *world
	applied map[string]bool // link names that exist because of a previous apply
	done    map[string]bool // other actions applied before
}

func (f *fakeNetlink) DesiredFor(_ context.Context, _ string, spec *v1.NodeNetworkConfigSpec) (*nodenet.Desired, error) {
	return nodenet.BuildDesired(spec, nodenet.Settings{VTEPAddress: mustAddr("10.255.0.1")}, nodenet.Features{})
}

func (f *fakeNetlink) PlanDesired(_ context.Context, _ string, d *nodenet.Desired) (*nodenet.Plan, error) {
	if len(f.w.planErrs) > 0 {
		err := f.w.planErrs[0]
		f.w.planErrs = f.w.planErrs[1:]
		return nil, err
	}
	obs := &nodenet.Observed{}
	for name := range f.applied {
		for _, l := range d.Links {
			if l.Name == name {
				obs.Links = append(obs.Links, nodenet.LinkState{LinkSpec: l, Index: f.w.links[name], Up: true})
			}
		}
	}
	p := nodenet.ComputePlan(d, obs)
	p.Links = obs.Links // as nodenet.Manager's plans
	// The fake does not observe routes, rules or port flags: an action applied before counts as done.
	p.Actions = slices.DeleteFunc(p.Actions, func(a nodenet.Action) bool { return f.done[a.String()] })
	for name := range f.applied {
		if !slices.ContainsFunc(d.Links, func(l nodenet.LinkSpec) bool { return l.Name == name }) {
			p.Actions = append(p.Actions, deleteAction(name))
		}
	}
	return p, nil
}

// deleteAction gets a real DeleteLink action (with its phase set by the planner) for a link no longer desired.
func deleteAction(name string) nodenet.Action {
	d := &nodenet.Desired{}
	o := &nodenet.Observed{Links: []nodenet.LinkState{{LinkSpec: nodenet.LinkSpec{Name: name, Kind: nodenet.KindBridge,
		Alias: nodenet.Alias(nodenet.RoleL3Bridge, name)}, Index: 1}}}
	for _, a := range nodenet.ComputePlan(d, o).Actions {
		if _, e := a.Effect(); e == nodenet.LinkDeleted {
			return a
		}
	}
	panic("planner did not delete an owned link")
}

func (f *fakeNetlink) Apply(_ context.Context, p *nodenet.Plan, ph nodenet.Phase) (*nodenet.Result, error) {
	f.w.logf("netlink %s", ph)
	for _, a := range p.PhaseActions(ph) {
		if want, ok := f.w.failPhase[f.w.current]; ok && want == ph {
			f.w.logf("netlink %s failed", ph)
			return &nodenet.Result{Phase: ph, Failed: a}, &nodenet.ActionError{Action: a, Err: errors.New("file exists")}
		}
		switch link, e := a.Effect(); e {
		case nodenet.LinkCreated:
			f.w.links[link] = f.w.next
			f.w.next++
			f.applied[link] = true
		case nodenet.LinkDeleted:
			delete(f.w.links, link)
			delete(f.applied, link)
		default:
			f.done[a.String()] = true
		}
	}
	return &nodenet.Result{Phase: ph}, nil
}

type fakeFRR struct {
	w    *world
	last []byte
	// down makes FRR not answer (its container not started yet, restarting).
	down bool
	// restarted makes FRR report one restart that lost the applied config.
	restarted bool
}

func (f *fakeFRR) Restarted(context.Context) (bool, error) {
	r := f.restarted
	if r {
		f.restarted, f.last = false, nil // a Reloader forgets the config FRR no longer runs
	}
	return r, nil
}

func (f *fakeFRR) Prepare(_ context.Context, cfg []byte) (frrreload.Commit, error) {
	if bytes.Equal(cfg, f.last) {
		return func(context.Context) (frrreload.Result, error) {
			f.w.logf("frr skipped")
			return frrreload.Result{Skipped: true, Hash: "0123456789abcdef"}, nil
		}, nil
	}
	rev := f.w.current
	if f.w.failFRR[rev] == "validate" {
		f.w.logf("frr validate failed")
		return nil, &frrreload.ValidationError{Check: "scratch load", Messages: []string{"% Unknown command"}}
	}
	f.w.logf("frr validate")
	return func(context.Context) (frrreload.Result, error) {
		if f.w.failFRR[rev] == "reload" {
			f.w.logf("frr reload failed")
			return frrreload.Result{}, frrreload.ErrReloadFailed
		}
		f.w.logf("frr reload")
		f.last = cfg
		if f.w.failFRR[rev] == "residual" {
			return frrreload.Result{Hash: "0123456789abcdef", Residual: []string{"+  set community no-export 65000:1"}}, nil
		}
		return frrreload.Result{Hash: "0123456789abcdef"}, nil
	}, nil
}

func (f *fakeFRR) LastApplied() ([]byte, error) {
	if f.last == nil {
		return nil, errors.New("none")
	}
	return f.last, nil
}

func (f *fakeFRR) PlanPath([]byte) (frrreload.Path, string) { return frrreload.PathDelta, "" }

func (f *fakeFRR) Summary(context.Context) (frrvty.Summary, error) {
	if f.down {
		return nil, errors.New("dial unix /var/run/frr/bgpd.vty: connect: no such file or directory")
	}
	return frrvty.Summary{}, nil
}

type fakeAttachment struct {
	ifindex int
	mode    loader.Mode
}

// fakeDataplane executes attach steps like the real one: the first mode of a step (auto is tcx here), nothing
// for keep.
type fakeDataplane struct {
	w        *world
	attached map[string]fakeAttachment
	tables   maps.Tables
	version  maps.Version
}

func (d *fakeDataplane) Ensure(_ context.Context, steps []dataplane.AttachStep) ([]v1.InterfaceStatus, error) {
	var out []v1.InterfaceStatus
	for _, s := range steps {
		if s.Changes() {
			mode := s.Modes[0]
			if mode == loader.ModeAuto {
				mode = loader.ModeTCX
			}
			if s.Action == dataplane.ActionMove {
				d.w.logf("move %s to %s", s.Interface, mode)
			} else {
				d.w.logf("%s %s", s.Action, s.Interface)
			}
			d.attached[s.Interface] = fakeAttachment{ifindex: d.w.links[s.Interface], mode: mode}
		}
		out = append(out, v1.InterfaceStatus{Name: s.Interface, Mode: dataplane.AttachMode(d.attached[s.Interface].mode)})
	}
	return out, nil
}

func (d *fakeDataplane) Detach(_ context.Context, steps []dataplane.AttachStep) error {
	for _, s := range steps {
		d.w.logf("detach %s", s.Interface)
		delete(d.attached, s.Interface)
	}
	return nil
}

func (d *fakeDataplane) Apply(_ context.Context, t maps.Tables, rev string) (maps.Report, error) {
	if d.w.failMaps[rev] {
		d.w.logf("maps failed")
		return maps.Report{}, errors.New("map full")
	}
	if t.Equal(d.tables) && rev == d.version.Revision {
		return maps.Report{NoOp: true}, nil
	}
	d.w.logf("maps %.8s", rev)
	d.tables, d.version.Revision, d.version.TablesHash = t, rev, t.Hash()
	d.version.Generation++
	return maps.Report{Generation: d.version.Generation}, nil
}

func (d *fakeDataplane) Version() (maps.Version, error) { return d.version, nil }

func (d *fakeDataplane) Verify(want []v1.DataPlaneInterface, _ dataplane.LinkLookup) error {
	if d.w.unhealthy {
		return errors.New("interface eth0 is down")
	}
	for _, i := range want {
		if _, ok := d.attached[i.Name]; !ok {
			return fmt.Errorf("%s not attached", i.Name)
		}
	}
	return nil
}

func (d *fakeDataplane) Live(context.Context) (maps.Snapshot, error) {
	return maps.Snapshot{Version: d.version, Tables: d.tables}, nil
}

func (d *fakeDataplane) Counters() ([]maps.VRFCounters, error) { return nil, nil }

func (d *fakeDataplane) Attachments() []loader.Attachment {
	var out []loader.Attachment
	for name, a := range d.attached {
		out = append(out, loader.Attachment{Interface: name, Ifindex: a.ifindex, Mode: a.mode})
	}
	return out
}

type fakeLinks struct{ w *world }

func (l fakeLinks) LinkByName(name string) (netlink.Link, error) {
	idx, ok := l.w.links[name]
	if !ok {
		return nil, netlink.LinkNotFoundError{}
	}
	return &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name, Index: idx, NetNsID: -1}}, nil
}

func (l fakeLinks) QdiscList(netlink.Link) ([]netlink.Qdisc, error) { return nil, nil }

// current is the revision being applied, so fakes can fail one revision only.
func (w *world) setCurrent(rev string) { w.current = rev }

type rig struct {
	w      *world
	e      *Engine
	store  *lastapplied.Store
	frr    *fakeFRR
	dp     *fakeDataplane
	passwd []string
}

func newRig(t *testing.T, dir string) *rig {
	t.Helper()
	w := newWorld()
	r := &rig{w: w, store: lastapplied.New(filepath.Join(dir, "state.yaml")), frr: &fakeFRR{w: w},
		dp: &fakeDataplane{w: w, attached: map[string]fakeAttachment{}}}
	var err error
	r.e, err = New(Options{Netlink: &fakeNetlink{w: w, applied: map[string]bool{}, done: map[string]bool{}}, Dataplane: r.dp, FRR: r.frr, FRRStatus: r.frr,
		Links: fakeLinks{w}, Store: r.store, Metrics: metrics.New()})
	if err != nil {
		t.Fatal(err)
	}
	r.e.beforeStep = func(step string, spec *v1.NodeNetworkConfigSpec) error { w.setCurrent(spec.Revision); return nil }
	return r
}

func (r *rig) reconcile(spec *v1.NodeNetworkConfigSpec) (*Outcome, []string) {
	r.w.log = nil
	out := r.e.Reconcile(context.Background(), spec, nil)
	return out, r.w.log
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func spec(rev string, vrfs ...string) *v1.NodeNetworkConfigSpec {
	s := &v1.NodeNetworkConfigSpec{Revision: rev,
		Underlay: v1.UnderlaySpec{ASN: 65000, RouterID: "10.255.0.1", VTEPAddress: "10.255.0.1"}}
	for i, name := range vrfs {
		vni := int32(100 * (i + 1))
		s.VRFs = append(s.VRFs, v1.NodeVRF{Name: name, ID: int32(i + 1), TableID: 1_000_000_000 + vni, VNI: vni})
		s.DataPlane.Interfaces = append(s.DataPlane.Interfaces, v1.DataPlaneInterface{Name: "br." + name, VRF: name})
	}
	s.DataPlane.Interfaces = append(s.DataPlane.Interfaces, v1.DataPlaneInterface{Name: "eth0", VRF: vrfs[0]})
	return s
}

// The steps run in the order FRR and the kernel need, and a second reconcile of the same spec changes nothing.
func TestApplyOrder(t *testing.T) {
	r := newRig(t, t.TempDir())
	out, log := r.reconcile(spec("r1", "red"))
	if !out.Applied() || out.Result != metrics.ResultApplied {
		t.Fatalf("outcome %s: %v / %v", out.Result, out.Err, out.HealthErr)
	}
	want := []string{"netlink vrfs", "frr validate", "frr reload", "netlink interfaces", "attach br.red", "attach eth0", "maps " + out.Spec.MapVersion()[:8]}
	if !slices.Equal(log, want) {
		t.Fatalf("steps\n got %q\nwant %q", log, want)
	}
	if out.MapVersion != out.Spec.MapVersion() || out.Good.Revision != "r1" {
		t.Fatalf("map version %q good %+v", out.MapVersion, out.Good)
	}
	out, log = r.reconcile(spec("r1", "red"))
	if out.Result != metrics.ResultUnchanged || !slices.Equal(log, []string{"frr skipped"}) {
		t.Fatalf("second reconcile: %s, steps %q", out.Result, log)
	}

	// A new VRF: created before FRR hears of it; the removed VRF's links go only after the new generation.
	out, log = r.reconcile(spec("r2", "blue"))
	if !out.Applied() {
		t.Fatalf("r2: %v", out.Err)
	}
	mv := out.Spec.MapVersion()[:8]
	want = []string{"netlink vrfs", "frr validate", "frr reload", "netlink interfaces", "attach br.blue", "maps " + mv, "detach br.red", "netlink removals"}
	if !slices.Equal(log, want) {
		t.Fatalf("r2 steps\n got %q\nwant %q", log, want)
	}
}

// A failure at any step restores the last good state and records the failure; the failed spec is not tried
// again until it changes.
func TestFailureRestoresLastGood(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(w *world, bad *v1.NodeNetworkConfigSpec)
		step   string
	}{
		{"netlink interfaces", func(w *world, bad *v1.NodeNetworkConfigSpec) { w.failPhase["r2"] = nodenet.PhaseInterfaces }, StepInterfaces},
		{"frr validation", func(w *world, bad *v1.NodeNetworkConfigSpec) { w.failFRR["r2"] = "validate" }, StepFRR},
		{"frr reload", func(w *world, bad *v1.NodeNetworkConfigSpec) { w.failFRR["r2"] = "reload" }, StepFRRReload},
		{"frr runs something else", func(w *world, bad *v1.NodeNetworkConfigSpec) { w.failFRR["r2"] = "residual" }, StepFRRReload},
		{"maps", func(w *world, bad *v1.NodeNetworkConfigSpec) { w.failMaps[bad.MapVersion()] = true }, StepMaps},
		{"health", func(w *world, bad *v1.NodeNetworkConfigSpec) { w.unhealthy = true }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := newRig(t, dir)
			good := spec("r1", "red")
			if out, _ := r.reconcile(good); !out.Applied() {
				t.Fatal(out.Err)
			}
			bad := spec("r2", "red", "blue")
			tc.break_(r.w, bad)
			out, log := r.reconcile(bad)
			if out.Err == nil || out.Result != metrics.ResultRolledBack && out.Result != metrics.ResultFailed {
				t.Fatalf("outcome %s err %v, want a rollback", out.Result, out.Err)
			}
			var se *StepError
			if tc.step != "" && (!errors.As(out.Err, &se) || se.Step != tc.step) {
				t.Errorf("error %v, want a StepError of step %s", out.Err, tc.step)
			}
			if tc.step == "" && !errors.Is(out.Err, ErrUnhealthy) {
				t.Errorf("error %v, want ErrUnhealthy", out.Err)
			}
			if out.Good.Revision != "r1" || out.Failure == nil || out.Failure.Revision != "r2" {
				t.Fatalf("good %+v failure %+v", out.Good, out.Failure)
			}
			r.w.unhealthy = false
			// The node is back on r1: blue's links are gone, the version map says r1.
			if _, ok := r.w.links["br.blue"]; ok {
				t.Errorf("br.blue survived the rollback; steps %q", log)
			}
			if r.dp.version.Revision != good.MapVersion() {
				t.Errorf("live map version %.8s, want r1's %.8s", r.dp.version.Revision, good.MapVersion())
			}
			// The same bad spec: refused without touching anything.
			out, log = r.reconcile(bad)
			if !errors.Is(out.Err, ErrKnownBad) || slices.ContainsFunc(log, func(s string) bool { return strings.Contains(s, "blue") }) {
				t.Fatalf("known-bad spec: err %v steps %q", out.Err, log)
			}
			// A restarted engine knows the last good and the failed spec.
			r2 := newRig(t, dir)
			st := r2.e.State()
			if st.Good == nil || st.Good.Revision != "r1" || st.Failure == nil || st.Failure.Revision != "r2" {
				t.Fatalf("persisted state %+v", st)
			}
		})
	}
}

// A config FRR refuses stops the apply before any link or attachment is made.
func TestFRRRefusedBeforeLinks(t *testing.T) {
	r := newRig(t, t.TempDir())
	if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
		t.Fatal(out.Err)
	}
	r.w.failFRR["r2"] = "validate"
	out, log := r.reconcile(spec("r2", "red", "blue"))
	var se *StepError
	if !errors.As(out.Err, &se) || se.Step != StepFRR || !errors.Is(out.Err, frrreload.ErrRejected) {
		t.Fatalf("outcome %s %v, want a refusal at step %s", out.Result, out.Err, StepFRR)
	}
	i := slices.Index(log, "frr validate failed")
	if i < 0 || slices.Contains(log[:i], "netlink interfaces") || slices.Contains(log, "attach br.blue") || slices.Contains(log, "frr reload") {
		t.Fatalf("steps %q: want the refusal before any link, attachment or reload", log)
	}
}

// Refused before any change: nothing is applied for the bad spec, and it is reported as invalid.
func TestPlanErrorChangesNothing(t *testing.T) {
	r := newRig(t, t.TempDir())
	if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
		t.Fatal(out.Err)
	}
	bad := spec("r2", "red", "blue")
	bad.DataPlane.Interfaces = append(bad.DataPlane.Interfaces, v1.DataPlaneInterface{Name: "eth1", VRF: "nosuch"})
	out, log := r.reconcile(bad)
	if !errors.Is(out.Err, ErrPlan) || out.Result != metrics.ResultInvalid || !strings.Contains(out.Err.Error(), `"nosuch"`) {
		t.Fatalf("outcome %s %v", out.Result, out.Err)
	}
	if len(log) != 1 || log[0] != "frr skipped" {
		t.Fatalf("steps %q, want only the no-op restore of r1", log)
	}
}

// Without a last good state, a failed first apply removes what it created.
func TestFirstApplyFailsBackToNothing(t *testing.T) {
	r := newRig(t, t.TempDir())
	r.w.failPhase["r1"] = nodenet.PhaseInterfaces
	out, _ := r.reconcile(spec("r1", "red"))
	if out.Err == nil || out.Good != nil {
		t.Fatalf("outcome %v good %+v", out.Err, out.Good)
	}
	for name := range r.w.links {
		if name != "eth0" && name != "eth1" {
			t.Errorf("link %s left behind", name)
		}
	}
	if len(r.dp.attached) != 0 {
		t.Errorf("attachments left: %v", r.dp.attached)
	}
}

func TestPlanString(t *testing.T) {
	r := newRig(t, t.TempDir())
	p, err := r.e.Plan(context.Background(), spec("r1", "red"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := p.String()
	order := []string{"vrfs       add rule", "frr        render", "interfaces create bridge br.red", "attach     attach router to br.red",
		"maps       new generation", "status"}
	pos := 0
	for _, o := range order {
		i := strings.Index(s[pos:], o)
		if i < 0 {
			t.Fatalf("plan lacks %q after %d:\n%s", o, pos, s)
		}
		pos += i
	}
	if p.Empty() {
		t.Fatal("plan of a fresh node is empty")
	}
	if !strings.Contains(s, ") by delta: ") {
		t.Errorf("the FRR step does not say how the reload reaches FRR:\n%s", s)
	}
}

func TestLineDiff(t *testing.T) {
	added, removed := lineDiff([]byte("a\nb\n neighbor x password old\n"), []byte("a\nc\n neighbor x password new\n"))
	if !slices.Equal(added, []string{"c", " neighbor x password <redacted>"}) || !slices.Equal(removed, []string{"b", " neighbor x password <redacted>"}) {
		t.Fatalf("added %q removed %q", added, removed)
	}
}

func attachStep(p *Plan, name string) (dataplane.AttachStep, bool) {
	for _, s := range p.Attach.Attach {
		if s.Interface == name {
			return s, true
		}
	}
	return dataplane.AttachStep{}, false
}

// Issue 11's reproduced case: eth0 is attached with tcx, then the spec asks for hook xdp on its second entry
// (VLAN 7) and changes nothing else. The dry-run plan shows the move, the apply makes exactly that move, and the
// reconcile counts as applied, not unchanged; the next one keeps the XDP attachment.
func TestHookChangePlannedAsApplied(t *testing.T) {
	r := newRig(t, t.TempDir())
	s1 := spec("r1", "red")
	s1.DataPlane.Interfaces = append(s1.DataPlane.Interfaces, v1.DataPlaneInterface{Name: "eth0", VLAN: 7, VRF: "red"})
	if out, _ := r.reconcile(s1); !out.Applied() || r.dp.attached["eth0"].mode != loader.ModeTCX {
		t.Fatalf("r1: %s %v, eth0 %+v", out.Result, out.Err, r.dp.attached["eth0"])
	}

	s2 := s1.DeepCopy()
	s2.Revision = "r2"
	s2.DataPlane.Interfaces[2].Hook = v1.HookXDP
	p, err := r.e.Plan(context.Background(), s2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Netlink.Empty() || p.FRR.Changed || !p.Tables.NoOp {
		t.Fatalf("r2 changes more than the hook; the test needs the attach step to be the only change:\n%s", p)
	}
	step, ok := attachStep(p, "eth0")
	if !ok || step.Action != dataplane.ActionMove || step.From != loader.ModeTCX || step.Hook != v1.HookXDP || p.Empty() {
		t.Fatalf("plan step of eth0 %+v (empty %t), want a move from tcx to hook xdp", step, p.Empty())
	}
	if s := p.String(); !strings.Contains(s, "move router on eth0 from tcx to hook xdp") {
		t.Fatalf("printed plan lacks the move:\n%s", s)
	}

	out, log := r.reconcile(s2)
	if !out.Applied() || out.Result != metrics.ResultApplied {
		t.Fatalf("r2: result %s (%v), want %s", out.Result, out.Err, metrics.ResultApplied)
	}
	attachLog := slices.DeleteFunc(slices.Clone(log), func(l string) bool { return strings.HasPrefix(l, "frr ") })
	if want := []string{"move eth0 to xdp-native"}; !slices.Equal(attachLog, want) {
		t.Fatalf("r2 steps %q, want %q", log, want)
	}
	if !slices.Equal(out.Plan.Attach.Kept(), []string{"br.red"}) {
		t.Fatalf("kept %q, want br.red", out.Plan.Attach.Kept())
	}
	for _, i := range out.Interfaces {
		if i.Name == "eth0" && i.Mode != v1.AttachXDPNative {
			t.Fatalf("eth0 status mode %q, want %q", i.Mode, v1.AttachXDPNative)
		}
	}

	out, log = r.reconcile(s2)
	if out.Result != metrics.ResultUnchanged || slices.ContainsFunc(log, func(l string) bool { return !strings.HasPrefix(l, "frr ") }) {
		t.Fatalf("r2 again: %s, steps %q", out.Result, log)
	}
	if step, _ := attachStep(out.Plan, "eth0"); step.Action != dataplane.ActionKeep || step.From != loader.ModeXDPNative {
		t.Fatalf("r2 again: eth0 step %+v, want keep xdp-native", step)
	}
}

// A device re-created behind the agent's back (new ifindex) is planned as a re-attach and re-attached; the
// reconcile counts as applied.
func TestRecreatedDevicePlannedAsApplied(t *testing.T) {
	r := newRig(t, t.TempDir())
	s := spec("r1", "red")
	if out, _ := r.reconcile(s); !out.Applied() {
		t.Fatal(out.Err)
	}
	r.w.links["eth0"] = 50
	out, log := r.reconcile(s)
	if !out.Applied() || out.Result != metrics.ResultApplied {
		t.Fatalf("result %s (%v), want %s", out.Result, out.Err, metrics.ResultApplied)
	}
	step, _ := attachStep(out.Plan, "eth0")
	if step.Action != dataplane.ActionReattach || !strings.Contains(step.Reason, "ifindex 2 -> 50") {
		t.Fatalf("eth0 step %+v, want a re-attach naming the ifindexes", step)
	}
	if !slices.Contains(log, "reattach eth0") || r.dp.attached["eth0"].ifindex != 50 {
		t.Fatalf("steps %q, eth0 %+v", log, r.dp.attached["eth0"])
	}
}

// The FRR release of Options reaches the rendering and its validation (EVPN with an IPv6 VTEP needs 10.6), and
// the default renderer with a release set still reuses the last rendering of an unchanged spec.
func TestFRRVersionRendered(t *testing.T) {
	ipv6VTEP := func() *v1.NodeNetworkConfigSpec {
		s := spec("r1", "red")
		s.Underlay.VTEPAddress = "fd00::1"
		return s
	}
	for _, tc := range []struct {
		version frr.Version
		refused bool
	}{
		{frr.Version{}, true}, // the shipped 10.3
		{frr.Version{Major: 10, Minor: 3}, true},
		{frr.Version{Major: 10, Minor: 6}, false},
	} {
		t.Run(tc.version.String(), func(t *testing.T) {
			r := newRig(t, t.TempDir())
			r.e.o.FRRVersion = tc.version
			_, err := r.e.Plan(context.Background(), ipv6VTEP(), nil)
			if refused := err != nil && strings.Contains(err.Error(), "needs FRR 10.6"); refused != tc.refused {
				t.Fatalf("FRR %s, IPv6 VTEP: err = %v, want refused %v", tc.version, err, tc.refused)
			}
		})
	}
	r := newRig(t, t.TempDir())
	r.e.o.FRRVersion = frr.Version{Major: 8, Minor: 4}
	s := spec("r1", "red")
	first, err := r.e.Plan(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.e.frrRendered == nil || r.e.frrRendered.specHash != first.SpecHash {
		t.Fatalf("the rendering of %s is not kept for the next plan", first.SpecHash)
	}
	second, err := r.e.Plan(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if &second.FRR.Config[0] != &first.FRR.Config[0] {
		t.Error("the second plan of the same spec rendered FRR again")
	}
}

// A spec is translated once (desirednode): every part of the plan comes from that Node, and the next plan of the
// same spec reuses it, unless the translation reads a Secret, which may change under the same spec.
func TestPlanTranslatesOnce(t *testing.T) {
	r := newRig(t, t.TempDir())
	s := spec("r1", "red")
	first, err := r.e.Plan(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Node == nil || first.Node.Spec != s || first.Node.Hash != first.SpecHash || first.Node.MapVersion != first.MapVersion {
		t.Fatalf("plan's node %+v does not match the plan (hash %s, map version %s)", first.Node, first.SpecHash, first.MapVersion)
	}
	if first.Netlink.Desired != first.Node.Netlink {
		t.Error("the netlink plan is not of the node's translation")
	}
	second, err := r.e.Plan(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Node != first.Node {
		t.Error("the second plan of the same spec translated it again")
	}

	reads := 0
	passwords := func(context.Context, v1.SecretKeyReference) (string, error) { reads++; return "secret", nil }
	withSecret := spec("r2", "red")
	withSecret.BGPPeers = []v1.NodeBGPPeer{{Name: "p", VRF: "red", Addresses: []string{"192.0.2.7"}, RemoteASN: 65100,
		PasswordSecretRef: &v1.SecretKeyReference{Namespace: "ns", Name: "s", Key: "k"}}}
	a, err := r.e.Plan(context.Background(), withSecret, passwords)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.e.Plan(context.Background(), withSecret, passwords)
	if err != nil {
		t.Fatal(err)
	}
	if a.Node == b.Node || reads != 2 {
		t.Errorf("a spec with a password: translated anew %v, Secret read %d times; want a new translation and 2 reads", a.Node != b.Node, reads)
	}
}
