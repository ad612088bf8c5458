package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/metrics"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/loader"
)

// StepError says which step of an apply failed.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %s: %v", e.Step, e.Err) }

func (e *StepError) Unwrap() error { return e.Err }

// apply runs a plan's steps in order and stops at the first failure. A cancelled ctx stops it between steps: the
// step that runs finishes under stepContext, so the node is never left with half a step.
func (e *Engine) apply(parent context.Context, p *Plan) error {
	ctx, cancel := stepContext(parent)
	defer cancel()
	netlinkPhase := func(ph nodenet.Phase) func() error {
		return func() error {
			if len(p.Netlink.PhaseActions(ph)) == 0 {
				return nil
			}
			_, err := e.o.Netlink.Apply(ctx, p.Netlink, ph)
			return err
		}
	}
	var commit frrreload.Commit
	steps := []step{
		{StepVRFs, netlinkPhase(nodenet.PhaseVRFs)},
		{StepFRR, func() (err error) { commit, err = e.prepareFRR(ctx, p); return err }},
		{StepFRRReload, func() error { return e.commitFRR(ctx, commit) }},
		{StepInterfaces, netlinkPhase(nodenet.PhaseInterfaces)},
		{StepMirror, func() error { return e.applyMirror(ctx, p) }},
		{StepAttach, func() error {
			st, err := e.o.Dataplane.Ensure(ctx, p.Attach.Attach)
			e.setAttachStatus(st)
			return err
		}},
		{StepMaps, func() error { return e.applyTables(ctx, p) }},
		{StepDetach, func() error { return e.o.Dataplane.Detach(ctx, p.Attach.Detach) }},
		{StepRemovals, netlinkPhase(nodenet.PhaseRemovals)},
	}
	for _, s := range steps {
		if e.beforeStep != nil {
			if err := e.beforeStep(s.name, p.Spec); err != nil {
				return &StepError{Step: s.name, Err: err}
			}
		}
		if err := parent.Err(); err != nil {
			return &StepError{Step: s.name, Err: err}
		}
		if err := e.timed(s.name, s.fn); err != nil {
			return &StepError{Step: s.name, Err: err}
		}
	}
	return nil
}

// step is one named step of an apply.
type step struct {
	name string
	fn   func() error
}

// applyMirror plans the mirrors again against the node (the interfaces now exist, re-created ones lost their
// filters) and applies that; when the netlink plan changed nothing, the plan's own mirror part is applied. A mirror the kernel cannot carry (no GRE) is logged and reported (Outcome.Mirrors),
// not an error.
func (e *Engine) applyMirror(ctx context.Context, p *Plan) error {
	if e.o.Mirror == nil {
		return nil
	}
	mo := &MirrorOutcome{Mirrors: slices.Clone(p.Spec.Mirrors)}
	defer e.setMirrorOutcome(mo)
	mp := p.Mirror // the node's links are as planned when netlink changed nothing
	if mp == nil || !p.Netlink.Empty() {
		var err error
		if mp, err = e.o.Mirror.Plan(ctx, p.Spec, p.Netlink.Desired); err != nil {
			mo.Err = err
			return err
		}
	}
	res, err := e.o.Mirror.Apply(ctx, mp)
	mo.Err = err
	if res != nil {
		mo.Problems = res.Problems
		for _, pr := range res.Problems {
			e.log.Warn("mirror not applied", "mirror", pr.Mirror, "err", pr.Err)
		}
	}
	if err == nil && !mp.Empty() {
		e.log.Info("mirrors applied", "steps", len(mp.Steps()))
	}
	return err
}

// MirrorOutcome is what the mirror step of the last apply left on the node: the mirrors of the spec it applied
// (the spec asked for, or the last good one after a rollback) and those left out.
type MirrorOutcome struct {
	Mirrors []v1.NodeMirror
	// Problems are mirrors left out and why (mirror.ErrNotSupported: the kernel lacks GRE).
	Problems []mirror.Problem
	// Err is the step's own failure: none of Mirrors is known to run.
	Err error
}

func (e *Engine) setMirrorOutcome(mo *MirrorOutcome) {
	e.nmu.Lock()
	defer e.nmu.Unlock()
	e.mirrors = mo
}

func (e *Engine) mirrorOutcome() *MirrorOutcome {
	e.nmu.RLock()
	defer e.nmu.RUnlock()
	return e.mirrors
}

// prepareFRR validates the plan's FRR config (StepFRR: nothing of FRR changes yet); the Commit it returns reloads
// it (StepFRRReload; nil: FRR is not managed). Timing the two apart shows where an FRR apply spends its time.
func (e *Engine) prepareFRR(ctx context.Context, p *Plan) (frrreload.Commit, error) {
	if p.FRR.Skip != "" || e.o.FRR == nil {
		return nil, nil
	}
	commit, err := e.o.FRR.Prepare(ctx, p.FRR.Config)
	if err != nil && e.o.Metrics != nil {
		e.o.Metrics.FRRReload(metrics.FRRFailed)
	}
	return commit, err
}

// ErrFRRDiffers: after the reload FRR runs something else than the rendered config.
var ErrFRRDiffers = errors.New("FRR runs something else than the applied config")

// commitFRR reloads what prepareFRR validated (StepFRRReload).
func (e *Engine) commitFRR(ctx context.Context, commit frrreload.Commit) error {
	if commit == nil {
		return nil
	}
	res, err := commit(ctx)
	if e.o.Metrics != nil {
		switch {
		case err != nil:
			e.o.Metrics.FRRReload(metrics.FRRFailed)
		case res.Skipped:
			e.o.Metrics.FRRReload(metrics.FRRSkipped)
		default:
			e.o.Metrics.FRRReload(metrics.FRRApplied)
		}
	}
	if err != nil {
		return err
	}
	if len(res.Residual) > 0 {
		// FRR runs something else than the file says (it shows these lines in another form, or not at all), and
		// every reload would find the same difference again. A rendered config must converge: that is a failure
		// of the content. A host's own base config (brownfield) may hold lines FRR never shows: logged.
		if e.o.RenderFRR == nil {
			return fmt.Errorf("%w; still differing after the reload: %s", ErrFRRDiffers, strings.Join(res.Residual, "; "))
		}
		e.log.Warn("FRR still differs from the applied config after the reload", "lines", res.Residual)
	}
	if !res.Skipped {
		attrs := []any{"hash", short(res.Hash), "added", len(res.Diff.Add), "deleted", len(res.Diff.Delete),
			"validate", res.Validate, "reload", res.Reload, "path", res.Path, "steps", stepTimes(res.Steps)}
		if res.PathReason != "" {
			attrs = append(attrs, "pathReason", res.PathReason)
		}
		e.log.Info("FRR reloaded", attrs...)
	}
	return nil
}

// stepTimes prints an FRR apply's steps as "name duration, ..." for the log.
func stepTimes(steps []frrreload.Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.Name + " " + s.Took.Round(time.Millisecond).String()
	}
	return strings.Join(parts, ", ")
}

func (e *Engine) applyTables(ctx context.Context, p *Plan) error {
	links := e.o.Links // interfaces may have been created: their ifindexes are the kernel's now
	if p.Netlink.Empty() {
		links = e.observedLinks(p.Netlink)
	}
	t, err := p.Node.Tables.Resolve(liveLinks(links))
	if err != nil {
		return err
	}
	rep, err := e.o.Dataplane.Apply(ctx, t, p.MapVersion)
	if err != nil {
		return err
	}
	if !rep.NoOp {
		e.log.Info("table generation applied", "report", rep.String())
		if e.o.Metrics != nil {
			e.o.Metrics.ObserveSwap(rep.Duration, rep.Generation)
		}
	}
	return nil
}

func (e *Engine) setAttachStatus(st []v1.InterfaceStatus) {
	e.nmu.Lock()
	defer e.nmu.Unlock()
	e.attachErr = map[string]string{}
	for _, s := range st {
		if s.Error != "" {
			e.attachErr[s.Name] = s.Error
		}
	}
}

// interfaceStatus reports the attach state of the wanted interfaces from the loader (and the error of the last
// attach attempt of those that are not attached).
func (e *Engine) interfaceStatus(want []v1.DataPlaneInterface) []v1.InterfaceStatus {
	atts := map[string]loader.Attachment{}
	for _, a := range e.o.Dataplane.Attachments() {
		atts[a.Interface] = a
	}
	e.nmu.RLock()
	defer e.nmu.RUnlock()
	var out []v1.InterfaceStatus
	seen := map[string]bool{}
	for _, i := range want {
		if seen[i.Name] {
			continue
		}
		seen[i.Name] = true
		st := v1.InterfaceStatus{Name: i.Name, Mode: v1.AttachNone}
		if a, ok := atts[i.Name]; ok {
			st.Mode = dataplane.AttachMode(a.Mode)
		} else {
			st.Error = e.attachErr[i.Name]
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b v1.InterfaceStatus) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// frrAnswers checks that FRR answers, with the cheaper check when the status source has one (frrvty.Target).
func frrAnswers(ctx context.Context, st FRRStatus) error {
	if a, ok := st.(interface{ Answering(context.Context) error }); ok {
		return a.Answering(ctx)
	}
	_, err := st.Summary(ctx)
	return err
}

// frrAlive checks that FRR's daemons run, whatever their config, with that check when the status source has it
// (frrvty.Target).
func frrAlive(ctx context.Context, st FRRStatus) error {
	if a, ok := st.(interface{ Alive(context.Context) error }); ok {
		return a.Alive(ctx)
	}
	_, err := st.Summary(ctx)
	return err
}

// ErrUnhealthy wraps every health check failure.
var ErrUnhealthy = errors.New("health check failed")

// health checks the node runs spec: every data-plane interface exists, is up and has the router attached (asked
// from the kernel), the version map reads back mapVersion, and FRR answers.
func (e *Engine) health(ctx context.Context, spec *v1.NodeNetworkConfigSpec, mapVersion string) error {
	return e.healthOf(ctx, spec, mapVersion, nil)
}

// healthOf is health with the devices looked up in links (nil: the kernel); see Dataplane.Verify.
func (e *Engine) healthOf(ctx context.Context, spec *v1.NodeNetworkConfigSpec, mapVersion string, links dataplane.LinkLookup) error {
	return e.timed(StepHealth, func() error { return e.healthCheck(ctx, spec, mapVersion, links) })
}

func (e *Engine) healthCheck(ctx context.Context, spec *v1.NodeNetworkConfigSpec, mapVersion string, links dataplane.LinkLookup) error {
	var errs []error
	if err := e.o.Dataplane.Verify(spec.DataPlane.Interfaces, links); err != nil {
		errs = append(errs, err)
	}
	v, err := e.o.Dataplane.Version()
	switch {
	case err != nil:
		errs = append(errs, err)
	case v.Revision != mapVersion:
		errs = append(errs, fmt.Errorf("version map holds %q, want %q", short(v.Revision), short(mapVersion)))
	}
	if e.o.FRR != nil && spec.Underlay.ASN != 0 {
		if err := frrAnswers(ctx, e.o.FRRStatus); err != nil {
			errs = append(errs, fmt.Errorf("FRR: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrUnhealthy, err)
	}
	return nil
}
