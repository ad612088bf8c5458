package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/bpftables"
	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/desirednode"
	"github.com/network-operator/network-operator/agent/frrmodel"
	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/maps"
)

// Step names, in apply order (also the values the tests' beforeStep sees).
const (
	StepVRFs       = "vrfs"
	StepFRR        = "frr" // validation
	StepFRRReload  = "frr-reload"
	StepInterfaces = "interfaces"
	StepMirror     = "mirror"
	StepAttach     = "attach"
	StepMaps       = "maps"
	StepDetach     = "detach"
	StepRemovals   = "removals"
	StepStatus     = "status"
	// StepPlan (observing the node, rendering FRR, reading the live tables) and StepHealth are timed
	// (Outcome.Steps) but are not apply steps.
	StepPlan   = "plan"
	StepHealth = "health"
)

// Plan is everything one apply would do, in order. It is computed without changing anything.
type Plan struct {
	// Node is the spec translated once (agent/desirednode): every part below is planned from it.
	Node *desirednode.Node
	Spec *v1.NodeNetworkConfigSpec
	// SpecHash is lastapplied.SpecHash of Spec, computed once per plan (~2.5 ms for 1000 VRFs).
	SpecHash string
	// MapVersion is the revision of the table generation (the spec's MapVersion()).
	MapVersion string
	Netlink    *nodenet.Plan
	FRR        FRRStep
	// Attach is every attach, move, re-attach, keep and detach, decided by dataplane.PlanAttach; the apply
	// executes exactly these steps.
	Attach dataplane.AttachPlan
	Tables TablesStep
	// Mirror is the mirrors' part (nil: not applied); the apply plans it again against the node after the
	// interfaces exist.
	Mirror *mirror.Plan
	// Gate is what must work after the apply (health gate), decided from the node before it.
	Gate Gate
}

// FRRStep is the FRR part of a plan.
type FRRStep struct {
	// Skip says why FRR is not touched at all ("" when it is managed).
	Skip string
	// Config is the rendered frr.conf (with secrets: never print it). Changed is false when it equals the last
	// applied config (the reload is skipped).
	Config  []byte
	Changed bool
	// Added and Removed count the lines that differ from the last applied config (secrets redacted).
	Added, Removed []string
	Summary        string
	// Restarted: the config is the last applied one, but FRR restarted without it since.
	Restarted bool
	// Path is how the reload reaches FRR as far as the config decides (frrreload.Reloader.PlanPath), PathReason why
	// not by the delta.
	Path       frrreload.Path
	PathReason string
}

// TablesStep is the table generation of a plan.
type TablesStep struct {
	// Desired are the tables; interfaces nodenet creates in this apply have placeholder ifindexes (Pending).
	Desired maps.Tables
	Pending []string
	// Diff is against the live generation; NoOp when tables and revision are live already.
	Diff maps.Diff
	NoOp bool
}

// Empty reports whether applying the plan would change nothing.
func (p *Plan) Empty() bool {
	return p.Netlink.Empty() && !p.FRR.Changed && p.Attach.Empty() && p.Tables.NoOp && (p.Mirror == nil || p.Mirror.Empty())
}

// String prints the plan as numbered steps in apply order (what --dry-run shows).
func (p *Plan) String() string {
	var b strings.Builder
	w := &planWriter{b: &b}
	fmt.Fprintf(w.b, "plan for revision %q, map version %s\n", p.Spec.Revision, short(p.MapVersion))
	for _, a := range p.Netlink.PhaseActions(nodenet.PhaseVRFs) {
		w.line(StepVRFs, "%s", a)
	}
	p.writeFRR(w)
	for _, a := range p.Netlink.PhaseActions(nodenet.PhaseInterfaces) {
		w.line(StepInterfaces, "%s", a)
	}
	if p.Mirror != nil {
		for _, s := range p.Mirror.Steps() {
			w.line(StepMirror, "%s", s)
		}
	}
	p.writeAttach(w)
	if p.Tables.NoOp {
		w.line(StepMaps, "tables and revision live already (no new generation)")
	} else {
		d := p.Tables.Diff
		w.line(StepMaps, "new generation %s: interfaces %s, vrfs %s, redirects %s", short(p.MapVersion), d.Interfaces, d.VRFs, d.Redirects)
		if len(p.Tables.Pending) > 0 {
			fmt.Fprintf(w.b, "       (ifindexes of %s resolved after they are created)\n", strings.Join(p.Tables.Pending, ", "))
		}
	}
	for _, a := range p.Attach.Detach {
		w.line(StepDetach, "detach router from %s (%s)", a.Interface, a.Reason)
	}
	for _, a := range p.Netlink.PhaseActions(nodenet.PhaseRemovals) {
		w.line(StepRemovals, "%s", a)
	}
	w.line(StepStatus, "health check, then report appliedRevision %q, mapVersion %s", p.Spec.Revision, short(p.MapVersion))
	p.writeGate(w)
	for _, c := range p.Netlink.Conflicts {
		fmt.Fprintf(w.b, "conflict: %s\n", c)
	}
	for _, u := range p.Netlink.Unsupported {
		fmt.Fprintf(w.b, "unsupported: %s\n", u)
	}
	if p.Mirror != nil {
		for _, pr := range p.Mirror.Problems {
			fmt.Fprintf(w.b, "unsupported: %s\n", pr)
		}
	}
	for _, note := range p.Netlink.Notes {
		fmt.Fprintf(w.b, "note: %s\n", note)
	}
	return b.String()
}

// planWriter numbers the steps of a printed plan.
type planWriter struct {
	b *strings.Builder
	n int
}

func (w *planWriter) line(step, format string, args ...any) {
	w.n++
	fmt.Fprintf(w.b, "%3d. %-10s %s\n", w.n, step, fmt.Sprintf(format, args...))
}

// writeFRR prints the FRR step: not managed, unchanged, or how it reloads and the lines that change.
func (p *Plan) writeFRR(w *planWriter) {
	switch {
	case p.FRR.Skip != "":
		w.line(StepFRR, "not managed: %s", p.FRR.Skip)
	case p.FRR.Changed:
		how := string(p.FRR.Path)
		if p.FRR.PathReason != "" {
			how += " (" + p.FRR.PathReason + ")"
		}
		if p.FRR.Restarted {
			how += ", FRR restarted without the applied config"
		}
		w.line(StepFRR, "render, validate and reload FRR (%s) by %s: %d lines added, %d removed", p.FRR.Summary, how,
			len(p.FRR.Added), len(p.FRR.Removed))
		for _, l := range p.FRR.Removed {
			fmt.Fprintf(w.b, "       - %s\n", l)
		}
		for _, l := range p.FRR.Added {
			fmt.Fprintf(w.b, "       + %s\n", l)
		}
	default:
		w.line(StepFRR, "FRR config unchanged (reload skipped)")
	}
}

// writeAttach prints the router's attachments: attached, moved and re-attached interfaces, then the kept ones.
func (p *Plan) writeAttach(w *planWriter) {
	for _, a := range p.Attach.Attach {
		switch a.Action {
		case dataplane.ActionMove:
			w.line(StepAttach, "move router on %s from %s to hook %s (%s)", a.Interface, a.From, a.Hook, a.Reason)
		case dataplane.ActionReattach:
			w.line(StepAttach, "re-attach router to %s (hook %s): %s", a.Interface, a.Hook, a.Reason)
		case dataplane.ActionAttach:
			w.line(StepAttach, "attach router to %s (hook %s)", a.Interface, a.Hook)
		}
	}
	if kept := p.Attach.Kept(); len(kept) > 0 {
		fmt.Fprintf(w.b, "     (kept attached: %s)\n", strings.Join(kept, ", "))
	}
}

// writeGate prints what the health gate requires after the change (or why there is none).
func (p *Plan) writeGate(w *planWriter) {
	if g := p.Gate; g.Skip != "" {
		fmt.Fprintf(w.b, "     (no health gate: %s)\n", g.Skip)
	} else {
		var what []string
		for _, s := range g.Sessions {
			what = append(what, "session "+s.String())
		}
		for _, f := range g.Families {
			what = append(what, "a fabric session in "+f)
		}
		for _, pr := range g.Probes {
			what = append(what, "probe "+pr)
		}
		fmt.Fprintf(w.b, "     (health gate within %s: %s)\n", g.Timeout, strings.Join(what, ", "))
	}
	if len(p.Gate.Unrequired) > 0 {
		fmt.Fprintf(w.b, "     (not answering before the change, so not required after it: %s)\n", strings.Join(p.Gate.Unrequired, "; "))
	}
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// ErrPlan wraps every error found while planning: nothing was changed.
var ErrPlan = errors.New("configuration refused before any change")

// Plan computes what Reconcile would do for spec, changing nothing (--dry-run).
func (e *Engine) Plan(ctx context.Context, spec *v1.NodeNetworkConfigSpec, passwords frrmodel.PasswordFunc) (*Plan, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.plan(ctx, spec, "", passwords)
}

// plan plans spec; hash is its lastapplied.SpecHash when the caller has it ("": computed here).
func (e *Engine) plan(ctx context.Context, spec *v1.NodeNetworkConfigSpec, hash string, passwords frrmodel.PasswordFunc) (p *Plan, err error) {
	err = e.timed(StepPlan, func() error {
		if hash == "" {
			hash = lastapplied.SpecHash(spec)
		}
		p, err = e.planSteps(ctx, spec, hash, passwords)
		return err
	})
	return p, err
}

func (e *Engine) planSteps(ctx context.Context, spec *v1.NodeNetworkConfigSpec, hash string, passwords frrmodel.PasswordFunc) (*Plan, error) {
	fail := func(what string, err error) error { return fmt.Errorf("%w: %s: %w", ErrPlan, what, err) }
	node, err := e.desiredNode(ctx, spec, hash, passwords)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPlan, err)
	}
	p := &Plan{Node: node, Spec: spec, SpecHash: hash, MapVersion: node.MapVersion}
	if p.Netlink, err = e.o.Netlink.PlanDesired(ctx, hash, node.Netlink); err != nil {
		return nil, fail("netlink", err)
	}
	if m := e.o.Metrics; m != nil && p.Netlink.ObservedReused {
		m.ObserveNetlinkReused()
	} else if m != nil {
		o := p.Netlink.Observed
		m.ObserveNetlink(o.Links, o.Addresses, o.Routes, o.Rules)
	}
	if err := p.Netlink.Err(); err != nil {
		return p, fail("netlink", err)
	}
	if err := e.planFRR(ctx, p); err != nil {
		return p, fail("frr", err)
	}
	if e.o.Mirror != nil {
		if p.Mirror, err = e.planMirror(ctx, spec, p.Netlink); err != nil {
			return p, fail("mirror", err)
		}
	}
	if err := e.planAttach(p); err != nil {
		return p, fail("attach", err)
	}
	if err := e.planTables(ctx, p); err != nil {
		return p, fail("bpf tables", err)
	}
	if err := e.planGateFor(ctx, p); err != nil {
		return p, fail("health gate", err)
	}
	return p, nil
}

// desiredNode translates spec (desirednode.Build), reusing the last translation for the same spec when nothing
// else goes into it: no Secret (a password may change under the same spec).
func (e *Engine) desiredNode(ctx context.Context, spec *v1.NodeNetworkConfigSpec, hash string, passwords frrmodel.PasswordFunc) (*desirednode.Node, error) {
	reusable := !desirednode.NeedsSecrets(spec)
	if n := e.lastNode; reusable && n != nil && n.Hash == hash {
		return n, nil
	}
	in := desirednode.Inputs{Netlink: e.o.Netlink.DesiredFor}
	if e.o.FRR != nil {
		in.FRR = &desirednode.FRR{Passwords: passwords, Version: e.o.FRRVersion, GracefulRestart: e.o.GracefulRestart}
	}
	n, err := desirednode.Build(ctx, spec, hash, in)
	if err != nil {
		return nil, err
	}
	e.lastNode = nil
	if reusable {
		e.lastNode = n
	}
	return n, nil
}

func (e *Engine) planFRR(ctx context.Context, p *Plan) error {
	if p.Node.FRR == nil {
		p.FRR.Skip = p.Node.FRRSkip
		return nil
	}
	rendered, summary, err := e.renderFRR(p.Node)
	if err != nil {
		return err
	}
	p.FRR.Config, p.FRR.Summary = rendered, summary
	last, err := e.o.FRR.LastApplied()
	if err != nil {
		last = nil // nothing applied yet: everything is added
	}
	p.FRR.Changed = !bytes.Equal(last, rendered)
	if !p.FRR.Changed {
		// FRR runs apart from the agent (its own DaemonSet or container): it may have restarted since the last
		// apply, from a config without ours.
		restarted, err := e.o.FRR.Restarted(ctx)
		if err != nil {
			return Transient(fmt.Errorf("FRR restarted, its running config unreadable: %w", err))
		}
		if restarted {
			p.FRR.Changed, p.FRR.Restarted = true, true
		}
	}
	if p.FRR.Changed && e.o.FRRStatus != nil {
		// FRR runs in a container or DaemonSet of its own that may start after the agent or restart (an
		// upgrade): a reload now would fail for no fault of the spec, so the spec waits for it instead.
		if err := frrAlive(ctx, e.o.FRRStatus); err != nil {
			return Transient(fmt.Errorf("FRR does not answer (starting or restarting): %w", err))
		}
	}
	if p.FRR.Changed {
		p.FRR.Added, p.FRR.Removed = lineDiff(last, rendered)
		p.FRR.Path, p.FRR.PathReason = e.o.FRR.PlanPath(rendered)
	}
	return nil
}

// renderedFRR is the FRR config of the Node with hash specHash, kept for the next plan: rendering 1000 VRFs
// takes ~100 ms, the rest of a no-op reconcile less.
type renderedFRR struct {
	specHash, summary string
	config            []byte
}

// renderFRR renders the Node's FRR model, reusing the last rendering when the Node is the same one and nothing
// else goes into it: the default renderer (--frr-base-config reads its base at every render).
func (e *Engine) renderFRR(n *desirednode.Node) (cfg []byte, summary string, err error) {
	cacheable := e.o.RenderFRR == nil && !desirednode.NeedsSecrets(n.Spec)
	if cacheable {
		if c := e.frrRendered; c != nil && c.specHash == n.Hash {
			return c.config, c.summary, nil
		}
	}
	render := e.o.RenderFRR
	if render == nil {
		render = frr.Render
	}
	if cfg, err = render(n.FRR); err != nil {
		return nil, "", err
	}
	summary = frrmodel.Describe(n.FRR)
	if cacheable {
		e.frrRendered = &renderedFRR{specHash: n.Hash, summary: summary, config: cfg}
	}
	return cfg, summary, nil
}

// lineDiff lists the lines only in b (added) and only in a (removed), secrets redacted. FRR configs are
// line-oriented and their order is fixed by the renderer, so a set difference is what a reader needs.
func lineDiff(a, b []byte) (added, removed []string) {
	count := func(data []byte) map[string]int {
		m := map[string]int{}
		for l := range strings.SplitSeq(string(data), "\n") {
			m[l]++
		}
		return m
	}
	ca, cb := count(a), count(b)
	for l := range strings.SplitSeq(string(b), "\n") {
		if ca[l] > 0 {
			ca[l]--
			continue
		}
		if strings.TrimSpace(l) != "" {
			added = append(added, frr.Redact(l))
		}
	}
	for l := range strings.SplitSeq(string(a), "\n") {
		if cb[l] > 0 {
			cb[l]--
			continue
		}
		if strings.TrimSpace(l) != "" {
			removed = append(removed, frr.Redact(l))
		}
	}
	return added, removed
}

// planAttach observes the attachments and the wanted devices (predicting the ones nodenet re-creates) and lets
// dataplane.PlanAttach decide; the apply hands the same steps to the dataplane.
func (e *Engine) planAttach(p *Plan) error {
	want := p.Spec.DataPlane.Interfaces
	idx, err := dataplane.Ifindexes(e.observedLinks(p.Netlink), want)
	if err != nil {
		return err
	}
	re := map[string]bool{}
	for _, i := range want {
		if recreated(p.Netlink, i.Name) {
			re[i.Name] = true
		}
	}
	p.Attach = dataplane.PlanAttach(dataplane.AttachInput{Want: want, Attached: e.o.Dataplane.Attachments(),
		Ifindex: idx, Recreated: re, MirroredIngress: mirroredIngress(p.Mirror)})
	return nil
}

// planMirror plans the mirrors with the netlink plan's observation of the node's links when the mirror manager
// takes one (no second dump of every link).
func (e *Engine) planMirror(ctx context.Context, spec *v1.NodeNetworkConfigSpec, np *nodenet.Plan) (*mirror.Plan, error) {
	po, ok := e.o.Mirror.(interface {
		PlanObserved(context.Context, *v1.NodeNetworkConfigSpec, *nodenet.Desired, []mirror.Link) (*mirror.Plan, error)
	})
	if !ok || np.Links == nil {
		return e.o.Mirror.Plan(ctx, spec, np.Desired)
	}
	links := make([]mirror.Link, len(np.Links))
	for i, l := range np.Links {
		links[i] = mirror.Link{Name: l.Name, Alias: l.Alias, Index: l.Index}
	}
	return po.PlanObserved(ctx, spec, np.Desired, links)
}

// observedLinks looks names up in the plan's observation of the node (one netlink dump for every interface of
// the plan, instead of a request per name: 1000 interfaces cost ~30 ms that way), falling back to the kernel
// for names it does not hold. Valid while the node is as observed: during planning, and after an apply whose
// netlink plan changed nothing.
func (e *Engine) observedLinks(p *nodenet.Plan) Links {
	if p == nil || p.Ifindexes == nil {
		return e.o.Links
	}
	down, elsewhere := map[string]bool{}, map[string]bool{}
	for _, l := range p.Links {
		if !l.Up {
			down[l.Name] = true
		}
		if l.PeerElsewhere {
			elsewhere[l.Name] = true
		}
	}
	return observed{idx: p.Ifindexes, down: down, peerElsewhere: elsewhere, Links: e.o.Links}
}

// observed is Links answered from an observation: a device with its name, ifindex and whether it is up, or a veth
// whose peer is in another namespace (IFLA_LINK_NETNSID set); qdiscs are asked from the kernel.
type observed struct {
	idx                 map[string]int
	down, peerElsewhere map[string]bool
	Links
}

func (o observed) LinkByName(name string) (netlink.Link, error) {
	if i, ok := o.idx[name]; ok {
		attrs := netlink.LinkAttrs{Name: name, Index: i, NetNsID: -1}
		if !o.down[name] {
			attrs.Flags = net.FlagUp
		}
		if o.peerElsewhere[name] {
			attrs.NetNsID = 0
			return &netlink.Veth{LinkAttrs: attrs}, nil
		}
		return &netlink.Device{LinkAttrs: attrs}, nil
	}
	return o.Links.LinkByName(name)
}

func (e *Engine) planTables(ctx context.Context, p *Plan) error {
	created := map[string]bool{}
	for _, l := range p.Netlink.Desired.Links {
		created[l.Name] = true
		if l.Peer != "" {
			created[l.Peer] = true
		}
	}
	var pending bpftables.Placeholders
	live := liveLinks(e.observedLinks(p.Netlink))
	links := func(name string) (bpftables.Link, bool) {
		if l, _ := live(name); l.Ifindex != 0 && !recreated(p.Netlink, name) {
			return l, true
		}
		if !created[name] {
			return bpftables.Link{}, false
		}
		return bpftables.Link{Ifindex: pending.Ifindex(name)}, true
	}
	t, err := p.Node.Tables.Resolve(links)
	if err != nil {
		return err
	}
	p.Tables.Desired, p.Tables.Pending = t, pending.Names
	snap, err := e.o.Dataplane.Live(ctx)
	if err != nil {
		return fmt.Errorf("read live tables: %w", err)
	}
	p.Tables.Diff = maps.DiffTables(snap.Tables, t)
	p.Tables.NoOp = len(p.Tables.Pending) == 0 && p.Tables.Diff.Zero() && snap.Version.Revision == p.MapVersion &&
		snap.Version.TablesHash == t.Hash()
	return nil
}

// mirroredIngress names the interfaces whose ingress one of the plan's mirrors copies (the first mirror by
// name), so that the router is attached behind the mirror's filters (dataplane.AttachInput.MirroredIngress).
func mirroredIngress(p *mirror.Plan) map[string]string {
	if p == nil {
		return nil
	}
	out := map[string]string{}
	for _, r := range p.Desired.Rules {
		if cur, ok := out[r.Interface]; r.Ingress && (!ok || r.Mirror < cur) {
			out[r.Interface] = r.Mirror
		}
	}
	return out
}

// recreated reports whether the plan deletes and re-creates a link (its ifindex changes).
func recreated(p *nodenet.Plan, name string) bool { return p.DeletesLink(name) }

// liveLinks resolves names to the links as they are now (ifindex, bpftables.PeerLink).
func liveLinks(links Links) bpftables.Links {
	return func(name string) (bpftables.Link, bool) {
		l, err := links.LinkByName(name)
		if err != nil {
			return bpftables.Link{}, false
		}
		return bpftables.LinkOf(l, links.QdiscList), true
	}
}

// TablesFor computes the tables and revision of a spec as they would be applied now (the loader's rebuild after
// a map migration uses it with the last good spec): the same translation as a plan's, without FRR.
func TablesFor(ctx context.Context, spec *v1.NodeNetworkConfigSpec, nc *nodenet.Manager, links Links) (maps.Tables, string, error) {
	n, err := desirednode.Build(ctx, spec, lastapplied.SpecHash(spec), desirednode.Inputs{Netlink: nc.DesiredFor})
	if err != nil {
		return maps.Tables{}, "", fmt.Errorf("revision %q: %w", spec.Revision, err)
	}
	t, err := n.Tables.Resolve(liveLinks(links))
	if err != nil {
		return maps.Tables{}, "", fmt.Errorf("tables of revision %q: %w", spec.Revision, err)
	}
	return t, n.MapVersion, nil
}
