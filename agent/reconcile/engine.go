// Package reconcile is the node agent's core: it translates a NodeNetworkConfigSpec once (agent/desirednode: netlink
// objects, FRR model, BPF tables) and plans that against the node - nodenet's netlink actions, the FRR config
// (rendered and diffed), the eBPF router's attachments and table generation - then applies the plan in the order
// FRR and the kernel need:
//
//  1. netlink phase "vrfs": VRF devices, tables, rules
//  2. FRR: render and validate (step "frr"), then reload (step "frr-reload", skipped when identical): FRR must
//     know a VRF's VNI before its interfaces come up
//  3. netlink phase "interfaces": bridges, VXLANs, addresses, routes, up
//  4. attach the router to new interfaces, move the ones whose hook changed, attach anew to re-created devices
//     (the others keep their attachment: same link IDs), exactly as dataplane.PlanAttach planned it
//  5. one table generation with revision = the spec's map version
//  6. detach from interfaces no longer configured, netlink phase "removals"
//  7. health check (interfaces up, router attached everywhere, FRR answering, version map reads back), then the
//     state is saved as the last good one and reported
//
// When a step or the health check fails, the last good state (persisted, see package lastapplied) is planned and
// applied again - netlink, FRR and maps converge back to it - and the failure is recorded so the same spec is
// not applied again. A transient error (IsTransient: cancellation, an interrupted netlink dump, a Secret or the
// API server not answering) is none of that: nothing is recorded or restored, and the spec is tried again. The engine is used by both the Kubernetes controller and standalone mode.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/desirednode"
	"github.com/network-operator/network-operator/agent/frrmodel"
	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/metrics"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
)

// Netlink plans and applies the node's netlink objects (*nodenet.Manager).
type Netlink interface {
	// DesiredFor translates a spec (its lastapplied.SpecHash: key) into the node's netlink objects.
	DesiredFor(ctx context.Context, key string, spec *v1.NodeNetworkConfigSpec) (*nodenet.Desired, error)
	// PlanDesired plans them against the node.
	PlanDesired(ctx context.Context, key string, d *nodenet.Desired) (*nodenet.Plan, error)
	Apply(ctx context.Context, p *nodenet.Plan, ph nodenet.Phase) (*nodenet.Result, error)
}

// FRR validates, installs and reloads FRR configs (*frrreload.Reloader).
type FRR interface {
	// Prepare validates cfg; the Commit installs and reloads it.
	Prepare(ctx context.Context, cfg []byte) (frrreload.Commit, error)
	LastApplied() ([]byte, error)
	// PlanPath says how Apply would bring a config to FRR (the plan shows it).
	PlanPath(cfg []byte) (frrreload.Path, string)
	// Restarted reports whether FRR restarted since the last apply and lost that config (it then gets it again).
	Restarted(ctx context.Context) (bool, error)
}

// FRRStatus reads FRR's BGP state (frrvty.Target): the health check's "FRR answers" and the BGP metrics.
type FRRStatus interface {
	Summary(ctx context.Context) (frrvty.Summary, error)
}

// Links looks interfaces and their qdiscs up in the node's namespace (*netlink.Handle).
type Links interface {
	LinkByName(name string) (netlink.Link, error)
	QdiscList(link netlink.Link) ([]netlink.Qdisc, error)
}

// Dataplane is the eBPF router (*dataplane.Dataplane, or a *dataplane.View for dry runs). Ensure and Detach
// execute the steps of the plan's dataplane.AttachPlan.
type Dataplane interface {
	Ensure(ctx context.Context, steps []dataplane.AttachStep) ([]v1.InterfaceStatus, error)
	Detach(ctx context.Context, steps []dataplane.AttachStep) error
	Apply(ctx context.Context, t maps.Tables, revision string) (maps.Report, error)
	Version() (maps.Version, error)
	Verify(want []v1.DataPlaneInterface, links dataplane.LinkLookup) error
	Live(ctx context.Context) (maps.Snapshot, error)
	Counters() ([]maps.VRFCounters, error)
	Attachments() []loader.Attachment
}

// Mirror plans and applies the spec's mirrors (*mirror.Manager) given nodenet's objects of the spec.
type Mirror interface {
	Plan(ctx context.Context, spec *v1.NodeNetworkConfigSpec, nd *nodenet.Desired) (*mirror.Plan, error)
	Apply(ctx context.Context, p *mirror.Plan) (*mirror.Result, error)
}

// Options configure an Engine.
type Options struct {
	Netlink   Netlink
	Dataplane Dataplane
	// FRR is nil when the agent does not manage FRR (--frr=none); FRRStatus is then unused.
	FRR       FRR
	FRRStatus FRRStatus
	// RenderFRR turns the translated config into frr.conf; nil is frr.Render (the whole file). The agent's
	// --frr-base-config renders into the host's own base config instead (frr.RenderBrownfield).
	RenderFRR func(cfg *frr.NodeConfig) ([]byte, error)
	// FRRVersion is the FRR release configs are validated and rendered for (the one FRR runs); zero: frr.Shipped.
	FRRVersion frr.Version
	// GracefulRestart goes into every rendered FRR config (the node a graceful-restart speaker); nil: none.
	GracefulRestart *frr.GracefulRestart
	// GateTimeout bounds the health gate after a changed spec is applied (Gate); 0: DefaultGateTimeout,
	// negative: no gate.
	GateTimeout time.Duration
	// Probes must answer in the gate besides the spec's HealthProbes (the agent adds the API server).
	Probes []Probe
	// Dial opens the spec's TCP probes in the node's namespace; nil: the agent's own namespace.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Mirror applies the spec's mirrors; nil: mirrors are not applied.
	Mirror Mirror
	// Links resolves interface names in the node's namespace.
	Links Links
	Store *lastapplied.Store
	// Metrics may be nil.
	Metrics *metrics.Metrics
	Logger  *slog.Logger
}

// Engine plans and applies node configurations. Reconcile calls are serialised.
type Engine struct {
	o   Options
	log *slog.Logger

	mu        sync.Mutex
	state     lastapplied.State
	names     map[uint32]string // BPF VRF id -> name of the applied spec (metrics labels)
	attachErr map[string]string // interface -> error of the last attach attempt
	mirrors   *MirrorOutcome    // the last mirror step's result
	// beforeStep, set by this package's tests only, runs before each apply step; its error fails the apply
	// there, exactly like a kernel error would.
	beforeStep func(step string, spec *v1.NodeNetworkConfigSpec) error
	ready      bool // result of the last reconcile, for /readyz
	readyMsg   string
	nmu        sync.RWMutex
	// steps collects the step times of the running Reconcile (nil outside one; guarded by mu).
	steps *[]StepTime
	// frrRendered is the last FRR rendering, lastNode the last translation of a spec (guarded by mu).
	frrRendered *renderedFRR
	lastNode    *desirednode.Node
	// stateErr is why the state file could not be read at start (it was moved aside); cleared by the next save.
	stateErr error
	// adopting: no readable record of a good state, but the node holds objects of ours (a lost or corrupt state
	// file, found at the first plan): a failure then leaves the node as it is instead of restoring "nothing".
	adopting  bool
	firstPlan bool // the first plan has not run yet (guarded by mu)
}

// StepTime is how long one part of a reconcile took.
type StepTime struct {
	Name string
	Took time.Duration
}

// FormatSteps prints step times as "name duration, ..." (logs).
func FormatSteps(steps []StepTime) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.Name + " " + s.Took.Round(time.Millisecond).String()
	}
	return strings.Join(parts, ", ")
}

// timed runs fn as the step name of the running Reconcile.
func (e *Engine) timed(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	if e.steps != nil {
		*e.steps = append(*e.steps, StepTime{Name: name, Took: time.Since(start)})
	}
	return err
}

// New loads the persisted state. The dataplane is expected to be open (adopting what a previous agent left).
func New(o Options) (*Engine, error) {
	if o.Netlink == nil || o.Dataplane == nil || o.Links == nil || o.Store == nil {
		return nil, errors.New("reconcile: Netlink, Dataplane, Links and Store are required")
	}
	if o.FRR != nil && o.FRRStatus == nil {
		return nil, errors.New("reconcile: FRR needs FRRStatus")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{o: o, log: o.Logger, firstPlan: true}
	st, err := o.Store.Load()
	if err != nil {
		// Never a crash loop over the record: the node keeps forwarding what it runs, the agent reports the
		// problem (Degraded) and adopts what it owns until the next good revision writes a new record.
		e.stateErr, e.adopting = err, true
		aside, merr := o.Store.MoveAside()
		o.Logger.Error("state file unreadable; adopting what the node runs until a revision applies", "err", err,
			"movedTo", aside, "moveErr", merr)
	}
	e.state = st
	if st.Good != nil {
		e.setNames(&st.Good.Spec)
	}
	if o.Metrics != nil {
		o.Metrics.SetCounterSource(o.Dataplane, e.VRFNames)
		if o.FRR != nil {
			o.Metrics.SetBGPSource(o.FRRStatus)
		}
	}
	return e, nil
}

// ownsLinks tells whether a plan's observation holds links nodenet made (its alias).
func ownsLinks(p *nodenet.Plan) bool {
	for _, l := range p.Links {
		if nodenet.OwnedAlias(l.Alias) {
			return true
		}
	}
	return false
}

// StateErr is why the state file could not be read at start, until a revision applies (nil: it was read).
func (e *Engine) StateErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stateErr
}

// State returns the persisted state (last good, last failure).
func (e *Engine) State() lastapplied.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state
}

// VRFNames maps BPF VRF ids to the names of the applied spec.
func (e *Engine) VRFNames() map[uint32]string {
	e.nmu.RLock()
	defer e.nmu.RUnlock()
	return e.names
}

// Ready reports whether the last reconcile left the node running its spec, healthy, and why not.
func (e *Engine) Ready() (bool, string) {
	e.nmu.RLock()
	defer e.nmu.RUnlock()
	if !e.ready && e.readyMsg == "" {
		return false, "no reconcile yet"
	}
	return e.ready, e.readyMsg
}

func (e *Engine) setReady(out *Outcome) {
	e.nmu.Lock()
	defer e.nmu.Unlock()
	e.ready = out.Applied()
	switch {
	case e.ready:
		e.readyMsg = "revision " + out.Spec.Revision + " applied"
	case out.Err != nil:
		e.readyMsg = out.Err.Error()
	case out.HealthErr != nil:
		e.readyMsg = out.HealthErr.Error()
	default:
		e.readyMsg = "not applied"
	}
}

func (e *Engine) setNames(spec *v1.NodeNetworkConfigSpec) {
	names := make(map[uint32]string, len(spec.VRFs))
	for _, v := range spec.VRFs {
		names[uint32(v.ID)] = v.Name
	}
	e.nmu.Lock()
	e.names = names
	e.nmu.Unlock()
}

// Outcome is the result of one Reconcile, what status reporting needs.
type Outcome struct {
	// Result is one of the metrics.Result* values.
	Result string
	// Spec is the spec asked for; Plan what was planned for it (nil when planning failed).
	Spec *v1.NodeNetworkConfigSpec
	Plan *Plan
	// Err is why the spec is not applied (nil: it is); the node runs the last good state then.
	Err error
	// RestoreErr is set when restoring the last good state failed too.
	RestoreErr error
	// Good is the state the node runs now (nil: nothing was ever applied), Failure the last failed spec.
	Good    *lastapplied.Good
	Failure *lastapplied.Failure
	// MapVersion is read back from the live version map.
	MapVersion string
	Interfaces []v1.InterfaceStatus
	// Mirrors is what the last mirror step left running (nil: none ran yet, or mirrors are not applied).
	Mirrors *MirrorOutcome
	// NodeRead says how the plan saw the node: NodeReadFull (a netlink read of every link, route and rule) or
	// NodeReadReused (the last read: no change notified since); empty when nothing was planned.
	NodeRead string
	// StateErr is why the state file could not be read at start (until a revision applies).
	StateErr error
	// Healthy is the result of the health check after the reconcile; HealthErr why not.
	Healthy   bool
	HealthErr error
	Duration  time.Duration
	// Steps are the times of the reconcile's parts in the order they ran: StepPlan (observing the node and
	// computing the plan), the apply steps that ran, StepHealth. A restore after a failure adds its own.
	Steps []StepTime

	healthDone bool   // the health check ran after the last change
	specHash   string // lastapplied.SpecHash of Spec, once computed
}

// How a reconcile's plan saw the node (Outcome.NodeRead).
const (
	NodeReadFull   = "full"
	NodeReadReused = "reused"
)

// Applied reports whether the node runs spec now and is healthy.
func (o *Outcome) Applied() bool {
	if o.Err != nil || !o.Healthy || o.Good == nil || o.Spec == nil {
		return false
	}
	if o.specHash == "" {
		o.specHash = lastapplied.SpecHash(o.Spec)
	}
	return o.Good.SpecHash == o.specHash
}

// ErrKnownBad marks a spec that failed before (same content): it is not applied again.
var ErrKnownBad = errors.New("this configuration failed before; keeping the last good state")

// Reconcile brings the node to spec, or back to the last good state when that fails. passwords may be nil when
// no BGP peer names a Secret.
func (e *Engine) Reconcile(ctx context.Context, spec *v1.NodeNetworkConfigSpec, passwords frrmodel.PasswordFunc) *Outcome {
	e.mu.Lock()
	defer e.mu.Unlock()
	start := time.Now()
	out := &Outcome{Spec: spec}
	e.steps = &out.Steps
	defer e.finish(ctx, out, start)

	hash := lastapplied.SpecHash(spec)
	out.specHash = hash
	if f := e.state.Failure; f != nil && f.SpecHash == hash {
		e.keepLastGood(ctx, out, f, passwords)
		return out
	}

	plan, err := e.plan(ctx, spec, hash, passwords)
	e.notePlan(out, plan)
	if err != nil && IsTransient(ctx, err) {
		e.retryLater(out, err)
		return out
	}
	if err != nil {
		e.failAndRestore(ctx, out, hash, err, metrics.ResultInvalid, passwords)
		return out
	}
	changed := !plan.Empty()
	err = e.applyAndVerify(ctx, plan)
	if err != nil && IsTransient(ctx, err) {
		// The steps that ran stay (each one whole): the retry plans from the node as it is and converges.
		e.retryLater(out, err)
		return out
	}
	if err != nil {
		e.log.Error("apply failed, restoring the last good state", "revision", spec.Revision, "err", err)
		e.failAndRestore(ctx, out, hash, err, metrics.ResultRolledBack, passwords)
		return out
	}
	out.Healthy, out.healthDone = true, true
	if err := e.recordGood(spec, plan.MapVersion, hash); err != nil {
		// The node runs spec; only the record is missing. Report it, a later reconcile saves again.
		out.Err = fmt.Errorf("applied, but saving the last good state failed: %w", err)
		out.Result = metrics.ResultFailed
		return out
	}
	e.setNames(spec)
	out.Result = metrics.ResultUnchanged
	if changed {
		out.Result = metrics.ResultApplied
	}
	return out
}

// finish completes an Outcome when Reconcile returns: its duration and state, the report, readiness, metrics.
func (e *Engine) finish(ctx context.Context, out *Outcome, start time.Time) {
	out.Duration = time.Since(start)
	out.Good, out.Failure, out.StateErr = e.state.Good, e.state.Failure, e.stateErr
	e.report(ctx, out)
	e.steps = nil
	e.setReady(out)
	if e.o.Metrics != nil {
		e.o.Metrics.ObserveReconcile(out.Result, out.Duration)
		e.o.Metrics.SetReady(out.Applied())
		for _, s := range out.Steps {
			e.o.Metrics.ObserveStep(s.Name, s.Took)
		}
	}
}

// keepLastGood answers a spec that already failed on this node: it is not applied again; the last good state
// stays in place (repairs drift; normally a no-op).
func (e *Engine) keepLastGood(ctx context.Context, out *Outcome, f *lastapplied.Failure, passwords frrmodel.PasswordFunc) {
	out.Err = fmt.Errorf("%w: %s", ErrKnownBad, f.Error)
	out.Result = metrics.ResultUnchanged
	if changed, err := e.restore(ctx, passwords); err != nil {
		out.RestoreErr, out.Result = err, metrics.ResultFailed
	} else if changed {
		out.Result = metrics.ResultRolledBack
	}
}

// notePlan records what a plan says about the node: how its links were read and, on the first plan without a
// record of a good state, whether the agent adopts links of its own it finds.
func (e *Engine) notePlan(out *Outcome, plan *Plan) {
	out.Plan = plan
	if plan == nil || plan.Netlink == nil {
		return
	}
	if e.firstPlan {
		e.firstPlan = false
		if e.state.Good == nil && ownsLinks(plan.Netlink) {
			e.adopting = true
			e.log.Warn("no record of a good state, but the node holds links of ours: adopting them (a failure leaves them)")
		}
	}
	out.NodeRead = NodeReadFull
	if plan.Netlink.ObservedReused {
		out.NodeRead = NodeReadReused
	}
}

// failAndRestore records err against the spec (it is not applied again) and puts the last good state back.
func (e *Engine) failAndRestore(ctx context.Context, out *Outcome, hash string, err error, result string, passwords frrmodel.PasswordFunc) {
	out.Err = err
	out.Result = result
	e.recordFailure(out.Spec, hash, err)
	if _, rerr := e.restore(ctx, passwords); rerr != nil {
		out.RestoreErr, out.Result = rerr, metrics.ResultFailed
	}
}

// applyAndVerify applies plan, then checks the node's health and runs the health gate.
func (e *Engine) applyAndVerify(ctx context.Context, plan *Plan) error {
	if err := e.apply(ctx, plan); err != nil {
		return err
	}
	// After an apply that changed no netlink object, the plan's observation is the node's state: the devices are
	// looked up there instead of one kernel request per interface (1000: ~30 ms).
	var links dataplane.LinkLookup
	if plan.Netlink != nil && plan.Netlink.Empty() {
		links = e.observedLinks(plan.Netlink)
	}
	if err := e.healthOf(ctx, plan.Spec, plan.MapVersion, links); err != nil {
		return err
	}
	return e.runGate(ctx, plan)
}

// recordGood saves spec as the last good state unless the record already says so.
func (e *Engine) recordGood(spec *v1.NodeNetworkConfigSpec, mapVersion, hash string) error {
	if g := e.state.Good; g != nil && g.SpecHash == hash && g.Revision == spec.Revision {
		return nil
	}
	good := &lastapplied.Good{Revision: spec.Revision, MapVersion: mapVersion, SpecHash: hash,
		AppliedAt: time.Now().UTC().Truncate(time.Second), Spec: *spec.DeepCopy()}
	next := lastapplied.State{Good: good, Failure: e.state.Failure}
	if err := e.o.Store.Save(next); err != nil {
		return err
	}
	e.state = next
	e.stateErr, e.adopting = nil, false
	return nil
}

// retryLater reports a transient failure: nothing is recorded against the spec, nothing is restored.
func (e *Engine) retryLater(out *Outcome, err error) {
	e.log.Warn("transient error, the revision is retried", "revision", out.Spec.Revision, "err", err)
	if !errors.Is(err, ErrTransient) {
		err = Transient(err)
	}
	out.Err, out.Result = err, metrics.ResultRetry
}

// Retrying reports whether the spec is not applied because of a transient error (it is tried again).
func (o *Outcome) Retrying() bool { return errors.Is(o.Err, ErrTransient) }

func (e *Engine) recordFailure(spec *v1.NodeNetworkConfigSpec, hash string, err error) {
	if e.state.Good != nil && e.state.Good.SpecHash == hash {
		// The good state itself failed to converge (drift that could not be repaired): not a bad spec.
		return
	}
	next := lastapplied.State{Good: e.state.Good, Failure: &lastapplied.Failure{
		Revision: spec.Revision, SpecHash: hash, Error: err.Error(), At: time.Now().UTC().Truncate(time.Second)}}
	if serr := e.o.Store.Save(next); serr != nil {
		e.log.Error("saving the failure record failed", "err", serr)
	}
	e.state = next
}

// ErrNothingToRestore: a failure on a node whose good state is unknown (lost or corrupt state file) but which
// holds objects of ours leaves the node as it is: restoring "nothing" would tear down what it forwards with.
var ErrNothingToRestore = errors.New("no record of a good state to restore (the node's objects are kept)")

// restore applies the last good spec again (or, when there is none, the empty spec: everything the failed
// apply created goes away - unless the engine adopts a node it has no record of). It reports whether anything
// had to change.
func (e *Engine) restore(ctx context.Context, passwords frrmodel.PasswordFunc) (bool, error) {
	if e.state.Good == nil && e.adopting {
		return false, ErrNothingToRestore
	}
	spec := &v1.NodeNetworkConfigSpec{}
	if e.state.Good != nil {
		spec = &e.state.Good.Spec
	}
	plan, err := e.plan(ctx, spec, "", passwords)
	if err != nil {
		return false, fmt.Errorf("plan the last good state: %w", err)
	}
	if err := e.apply(ctx, plan); err != nil {
		return true, fmt.Errorf("restore the last good state: %w", err)
	}
	if e.state.Good != nil {
		e.setNames(spec)
		if err := e.health(ctx, spec, plan.MapVersion); err != nil {
			return !plan.Empty(), fmt.Errorf("last good state restored, but unhealthy: %w", err)
		}
	}
	return !plan.Empty(), nil
}

// Check runs the health check against the applied state (periodic checks); nil when healthy.
func (e *Engine) Check(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state.Good == nil {
		return errors.New("no configuration applied yet")
	}
	return e.health(ctx, &e.state.Good.Spec, e.state.Good.MapVersion)
}

// report fills the read-back fields of an outcome: the live map version, the attachments, the health.
func (e *Engine) report(ctx context.Context, out *Outcome) {
	if v, err := e.o.Dataplane.Version(); err == nil {
		out.MapVersion = v.Revision
		if e.o.Metrics != nil {
			e.o.Metrics.SetGeneration(v.Generation)
		}
	}
	want := []v1.DataPlaneInterface(nil)
	if e.state.Good != nil {
		want = e.state.Good.Spec.DataPlane.Interfaces
	}
	if out.Err == nil && out.Spec != nil {
		want = out.Spec.DataPlane.Interfaces
	}
	out.Interfaces = e.interfaceStatus(want)
	out.Mirrors = e.mirrorOutcome()
	if e.o.Metrics != nil {
		modes := map[string]string{}
		for _, s := range out.Interfaces {
			modes[s.Name] = string(s.Mode)
		}
		e.o.Metrics.SetAttachments(modes)
	}
	switch {
	case out.healthDone:
	case out.RestoreErr != nil:
		out.HealthErr = out.RestoreErr
	case e.state.Good == nil:
		out.HealthErr = errors.New("no configuration applied yet")
	default:
		out.HealthErr = e.health(ctx, &e.state.Good.Spec, e.state.Good.MapVersion)
	}
	out.Healthy = out.HealthErr == nil
}
