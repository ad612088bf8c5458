package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/nodespec"
	"github.com/network-operator/network-operator/operator/rollout"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// RolloutReconciler rolls the target revision out to the nodes. It has a single work item, so
// controller-runtime never runs two Reconciles at once and its fields need no lock.
type RolloutReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Opts     Options

	// written holds our last write of each NodeNetworkConfig until the cache shows it: a cache that
	// lags behind would otherwise show an assigned node as pending and the pace would be exceeded.
	written map[string]*v1.NodeNetworkConfig
	// failed holds revisions this process marked Failed, for the same reason.
	failed map[types.UID]bool
	// heldMsg remembers the last Event per held node, so a held node is announced once, not per reconcile.
	heldMsg map[string]string
	// progress measures the progress deadline on this process's clock.
	progress progressClock
}

// +kubebuilder:rbac:groups=network.network-operator.io,resources=networkconfigrevisions,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=network.network-operator.io,resources=networkconfigrevisions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=nodenetworkconfigs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=network.network-operator.io,resources=nodenetworkconfigs/status,verbs=get
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;update

// Reconcile plans one round of the rollout and carries it out.
func (r *RolloutReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	now := time.Now()
	var revList v1.NetworkConfigRevisionList
	var nodeList corev1.NodeList
	var nncList v1.NodeNetworkConfigList
	if err := r.Client.List(ctx, &revList); err != nil { // copies: statuses are changed in place
		return reconcile.Result{}, fmt.Errorf("list revisions: %w", err)
	}
	// Nodes and configurations are read only (a write starts from a copy): the cache's own objects, not a copy of
	// every Node and configuration per round.
	for what, l := range map[string]client.ObjectList{"nodes": &nodeList, "node configs": &nncList} {
		if err := r.Client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return reconcile.Result{}, fmt.Errorf("list %s: %w", what, err)
		}
	}
	nodes := make(map[string]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[nodeList.Items[i].Name] = &nodeList.Items[i]
	}
	nncs := r.withOwnWrites(nncList.Items)
	if err := r.collectOrphans(ctx, nodes, nncs); err != nil {
		return reconcile.Result{}, err
	}

	revs := make([]*v1.NetworkConfigRevision, len(revList.Items))
	for i := range revList.Items {
		rev := &revList.Items[i]
		if r.failed[rev.UID] {
			if rev.Status.Phase == v1.RevisionFailed {
				delete(r.failed, rev.UID) // the cache caught up
			} else {
				rev.Status.Phase = v1.RevisionFailed
			}
		}
		revs[i] = rev
	}
	byNewest(revs)
	if len(revs) > 0 {
		r.Opts.Metrics.RevisionSequence.Set(float64(revs[0].Spec.Sequence))
	}

	// Each failure makes an older revision the target; at most every revision fails once.
	for range len(revs) + 1 {
		tgt := target(revs)
		if tgt == nil {
			r.Opts.Metrics.TargetSequence.Set(0)
			return reconcile.Result{}, nil
		}
		res, retarget, err := r.rollOut(ctx, tgt, revs, nodes, nncs, now)
		if err != nil || !retarget {
			return res, err
		}
	}
	return reconcile.Result{}, errors.New("rollout: no target after marking every revision failed")
}

// rollOut runs one round for tgt. retarget says tgt was just marked Failed and the caller must plan
// again with the next target.
func (r *RolloutReconciler) rollOut(ctx context.Context, tgt *v1.NetworkConfigRevision, revs []*v1.NetworkConfigRevision,
	nodes map[string]*corev1.Node, nncs map[string]*v1.NodeNetworkConfig, now time.Time) (reconcile.Result, bool, error) {
	r.Opts.Metrics.TargetSequence.Set(float64(tgt.Spec.Sequence))
	settled := tgt.Status.Phase == v1.RevisionDone

	failedHashes := map[string]bool{}
	for _, rev := range revs {
		if rev.Status.Phase == v1.RevisionFailed && rev.Spec.Revision != tgt.Spec.Revision {
			failedHashes[rev.Spec.Revision] = true
		}
	}
	names := slices.Sorted(maps.Keys(nodes))
	specs, err := r.buildNodeSpecs(tgt, names, nodes, nncs, settled)
	if err != nil {
		return reconcile.Result{}, false, err
	}
	desired, states := r.nodeStates(tgt, names, nodes, nncs, specs, now)
	if len(specs.invalid) > 0 {
		return reconcile.Result{}, true, r.fail(ctx, tgt, revs, specs.invalid[0], nil, now)
	}

	maxUnavailable, muErr := rollout.ResolveMaxUnavailable(r.maxUnavailableFor(tgt), len(nodes))
	if muErr != nil {
		maxUnavailable, _ = rollout.ResolveMaxUnavailable(&r.Opts.MaxUnavailable, len(nodes))
	}
	paused := isTrue(tgt.Annotations[AnnotationPaused])
	plan := rollout.Compute(rollout.Input{
		Target:           tgt.Spec.Revision,
		Failed:           failedHashes,
		Nodes:            states,
		MaxUnavailable:   maxUnavailable,
		Paused:           paused,
		Settled:          settled,
		ProgressDeadline: r.Opts.ProgressDeadline,
		Now:              now,
	})
	if len(plan.Failures) > 0 {
		return reconcile.Result{}, true, r.fail(ctx, tgt, revs, plan.Failures[0], &plan.Counts, now)
	}

	var notes []string
	if muErr != nil {
		notes = append(notes, fmt.Sprintf("ignoring annotation %s: %v", AnnotationMaxUnavailable, muErr))
	}
	if err := r.writeRound(ctx, tgt, revs, plan, paused, specs.held, notes, nodes, nncs, desired, now); err != nil {
		return reconcile.Result{}, false, err
	}
	r.reportHeld(specs.held)
	r.recordNodeMetrics(plan)
	if err := r.prune(ctx, revs, tgt, nncs); err != nil {
		return reconcile.Result{}, false, err
	}
	return reconcile.Result{RequeueAfter: r.nextDeadline(plan, states, now)}, false, nil
}

// nodeSpecs are every node's desired spec for a revision (built), the nodes held back with why, and the nodes
// the revision does not fit (invalid: the revision fails, unless it already finished).
type nodeSpecs struct {
	built   map[string]*v1.NodeNetworkConfigSpec
	held    map[string]error
	invalid []rollout.Failure
}

// buildNodeSpecs builds every node's desired spec for the target: to write it, and to notice a node whose spec
// for the same revision is out of date (its labels or annotations changed).
func (r *RolloutReconciler) buildNodeSpecs(tgt *v1.NetworkConfigRevision, names []string, nodes map[string]*corev1.Node,
	nncs map[string]*v1.NodeNetworkConfig, settled bool) (nodeSpecs, error) {
	ns := nodeSpecs{built: make(map[string]*v1.NodeNetworkConfigSpec, len(nodes)), held: map[string]error{}}
	current := make(map[string]*v1.NodeNetworkConfigSpec, len(nncs))
	for _, name := range names {
		if nnc := nncs[name]; nnc != nil {
			current[name] = &nnc.Spec
		}
		spec, err := nodespec.Build(&tgt.Spec, nodes[name], current[name], r.Opts.NodeConfig)
		switch {
		case err == nil:
			ns.built[name] = &spec
		case errors.Is(err, fielderr.ErrInvalid) && !settled:
			ns.invalid = append(ns.invalid, rollout.Failure{Node: name, Reason: ReasonInvalidForNode, Message: err.Error()})
		default:
			// The Node itself is incomplete, or a node joined a finished rollout whose content does not
			// fit it: hold it back and say why, without failing the revision for everyone else.
			ns.held[name] = err
		}
	}
	// Loopback addresses are planned over all nodes at once, from the addresses the nodes carry now.
	shortages, err := nodespec.AssignLoopbackAddresses(&tgt.Spec, ns.built, current)
	if err != nil {
		return nodeSpecs{}, fmt.Errorf("loopback addresses for revision %s: %w", tgt.Name, err)
	}
	for _, s := range shortages {
		if !settled {
			ns.invalid = append(ns.invalid, rollout.Failure{Node: s.Unaddressed[0], Reason: ReasonLoopbackSubnetExhausted, Message: s.Error()})
			continue
		}
		for _, name := range s.Unaddressed { // joined a finished rollout: wait for a free address
			ns.held[name] = s
			delete(ns.built, name)
		}
	}
	// So are the peers of static flooding: every other node of the network, as the nodes are now.
	for _, e := range nodespec.AssignFloodPeers(&tgt.Spec, ns.built) {
		if !settled {
			ns.invalid = append(ns.invalid, rollout.Failure{Node: e.Node, Reason: ReasonInvalidForNode, Message: e.Error()})
			continue
		}
		ns.held[e.Node] = e
		delete(ns.built, e.Node)
	}
	return ns, nil
}

// nodeStates are the planner's view of every node, and the specs to write, by node.
func (r *RolloutReconciler) nodeStates(tgt *v1.NetworkConfigRevision, names []string, nodes map[string]*corev1.Node,
	nncs map[string]*v1.NodeNetworkConfig, specs nodeSpecs, now time.Time) (map[string]v1.NodeNetworkConfigSpec, []rollout.NodeState) {
	desired := make(map[string]v1.NodeNetworkConfigSpec, len(specs.built))
	states := make([]rollout.NodeState, 0, len(nodes))
	for _, name := range names {
		nnc := nncs[name]
		stale := false
		if spec := specs.built[name]; spec != nil {
			desired[name] = *spec
			stale = nnc != nil && nnc.Spec.Revision == tgt.Spec.Revision && !sameSpec(&nnc.Spec, spec)
		}
		s := nodeState(nodes[name], nnc, r.Opts.TopologyLabel, stale)
		s.Held = specs.held[name] != nil
		r.progress.restamp(&s, nnc, now)
		states = append(states, s)
	}
	r.progress.forget(func(name string) bool { return nodes[name] != nil })
	return desired, states
}

// writeRound writes one round of the plan: the revisions' status, the rollbacks, then the rollout's node configs.
func (r *RolloutReconciler) writeRound(ctx context.Context, tgt *v1.NetworkConfigRevision, revs []*v1.NetworkConfigRevision,
	plan rollout.Plan, paused bool, held map[string]error, notes []string, nodes map[string]*corev1.Node,
	nncs map[string]*v1.NodeNetworkConfig, desired map[string]v1.NodeNetworkConfigSpec, now time.Time) error {
	// The status only depends on the plan: write it while the node configurations are written, which
	// saves one API round trip per round (rounds are serial, so their latency paces the rollout).
	// (updateStatuses patches tgt in place: the writers get a copy of its identity.)
	ref := revisionRef{name: tgt.Name, uid: tgt.UID}
	statusErr := make(chan error, 1)
	go func() { statusErr <- r.updateStatuses(ctx, tgt, revs, plan, paused, held, notes, now) }()
	// Rollbacks go out in parallel (their order does not matter, their speed does); rollout writes go one
	// by one, so the API sees nodes updated exactly in rollout order.
	writeErr := r.writeConfigs(ctx, tagged(plan.Rollback, "rollback"), maxParallelWrites, nodes, nncs, desired, ref, now)
	if writeErr == nil {
		writeErr = r.writeConfigs(ctx, tagged(plan.Assign, "rollout"), 1, nodes, nncs, desired, ref, now)
	}
	return errors.Join(writeErr, <-statusErr)
}

type nodeWrite struct{ node, reason string }

// revisionRef identifies the revision a configuration is written from.
type revisionRef struct {
	name string
	uid  types.UID
}

// maxParallelWrites bounds the rollback writes in flight at once.
const maxParallelWrites = 16

func tagged(nodes []string, reason string) []nodeWrite {
	out := make([]nodeWrite, len(nodes))
	for i, n := range nodes {
		out[i] = nodeWrite{n, reason}
	}
	return out
}

func isTrue(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b
}

func (r *RolloutReconciler) maxUnavailableFor(tgt *v1.NetworkConfigRevision) *intstr.IntOrString {
	if s, ok := tgt.Annotations[AnnotationMaxUnavailable]; ok {
		v := intstr.Parse(s)
		return &v
	}
	return &r.Opts.MaxUnavailable
}

// sameSpec compares specs as the API server stores them (nil and empty lists alike).
func sameSpec(a, b *v1.NodeNetworkConfigSpec) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// withOwnWrites indexes the cached configurations, replacing those older than our last write of them.
func (r *RolloutReconciler) withOwnWrites(items []v1.NodeNetworkConfig) map[string]*v1.NodeNetworkConfig {
	nncs := make(map[string]*v1.NodeNetworkConfig, len(items))
	for i := range items {
		nncs[items[i].Name] = &items[i]
	}
	for name, w := range r.written {
		cached, ok := nncs[name]
		if ok && cached.Generation >= w.Generation {
			delete(r.written, name)
			continue
		}
		own := w.DeepCopy()
		if ok {
			own.Status = *cached.Status.DeepCopy()
		}
		nncs[name] = own
	}
	return nncs
}

// collectOrphans deletes the configurations of Nodes that no longer exist. (Their Node owner reference
// alone does not do it: the revision owner keeps them alive, and test clusters have no garbage collector.)
func (r *RolloutReconciler) collectOrphans(ctx context.Context, nodes map[string]*corev1.Node, nncs map[string]*v1.NodeNetworkConfig) error {
	for name, nnc := range nncs {
		if _, ok := nodes[name]; ok {
			continue
		}
		if err := r.Client.Delete(ctx, nnc); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete NodeNetworkConfig %s of deleted node: %w", name, err)
		}
		delete(nncs, name)
		delete(r.written, name)
		delete(r.heldMsg, name)
		r.Opts.Metrics.NodeConfigsCollected.Inc()
		log.FromContext(ctx).Info("collected configuration of deleted node", "node", name)
	}
	return nil
}

// writeConfigs writes the configurations, up to parallel at once, and records what was written.
func (r *RolloutReconciler) writeConfigs(ctx context.Context, writes []nodeWrite, parallel int, nodes map[string]*corev1.Node,
	nncs map[string]*v1.NodeNetworkConfig, desired map[string]v1.NodeNetworkConfigSpec, tgt revisionRef, now time.Time) error {
	writes = slices.DeleteFunc(writes, func(w nodeWrite) bool {
		_, ok := desired[w.node]
		return !ok // held: nothing to write
	})
	results := make([]*v1.NodeNetworkConfig, len(writes))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, w := range writes {
		g.Go(func() error {
			nnc, err := r.writeConfig(gctx, nodes[w.node], nncs[w.node], tgt, desired[w.node], now)
			results[i] = nnc
			return err
		})
	}
	err := g.Wait()
	if r.written == nil {
		r.written = map[string]*v1.NodeNetworkConfig{}
	}
	logger := log.FromContext(ctx)
	for i, w := range writes {
		if results[i] == nil {
			continue // failed (err says why) or cancelled
		}
		nncs[w.node], r.written[w.node] = results[i], results[i].DeepCopy()
		r.Opts.Metrics.NodesUpdated.WithLabelValues(w.reason).Inc()
		logger.V(1).Info("assigned revision", "node", w.node, "revision", tgt.name, "reason", w.reason)
	}
	return err
}

func (r *RolloutReconciler) writeConfig(ctx context.Context, node *corev1.Node, cur *v1.NodeNetworkConfig,
	tgt revisionRef, spec v1.NodeNetworkConfigSpec, now time.Time) (*v1.NodeNetworkConfig, error) {
	owners := []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID},
		{APIVersion: v1.GroupVersion.String(), Kind: "NetworkConfigRevision", Name: tgt.name, UID: tgt.uid},
	}
	var nnc *v1.NodeNetworkConfig
	if cur == nil {
		nnc = &v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: node.Name, OwnerReferences: owners}, Spec: spec}
	} else {
		nnc = cur.DeepCopy()
		nnc.Spec, nnc.OwnerReferences = spec, owners
	}
	metav1.SetMetaDataAnnotation(&nnc.ObjectMeta, AnnotationAssignedAt, now.UTC().Format(time.RFC3339Nano))
	metav1.SetMetaDataAnnotation(&nnc.ObjectMeta, AnnotationRevisionName, tgt.name)
	if cur == nil {
		if err := r.Client.Create(ctx, nnc); err != nil {
			return nil, fmt.Errorf("create NodeNetworkConfig %s: %w", node.Name, err)
		}
	} else if err := r.Client.Patch(ctx, nnc, client.MergeFrom(cur)); err != nil {
		return nil, fmt.Errorf("update NodeNetworkConfig %s to revision %s: %w", node.Name, tgt.name, err)
	}
	return nnc, nil
}

// fail marks rev Failed with the counts at that moment (nil: no node was planned); the next planning
// round targets the previous revision and rolls back.
func (r *RolloutReconciler) fail(ctx context.Context, rev *v1.NetworkConfigRevision, revs []*v1.NetworkConfigRevision,
	f rollout.Failure, counts *rollout.Counts, now time.Time) error {
	orig := rev.DeepCopy()
	if counts != nil {
		setCounts(&rev.Status, *counts)
	}
	rev.Status.Failed = max(rev.Status.Failed, 1)
	rev.Status.Phase = v1.RevisionFailed
	rev.Status.FailedNode = f.Node
	rev.Status.Message = fmt.Sprintf("%s on node %s: %s", f.Reason, f.Node, f.Message)
	rev.Status.Time = &metav1.Time{Time: now}
	if err := r.Client.Status().Patch(ctx, rev, client.MergeFrom(orig)); err != nil {
		*rev = *orig
		return fmt.Errorf("mark revision %s failed: %w", rev.Name, err)
	}
	if r.failed == nil {
		r.failed = map[types.UID]bool{}
	}
	r.failed[rev.UID] = true
	r.Opts.Metrics.RolloutFailures.WithLabelValues(f.Reason).Inc()
	r.Recorder.Eventf(rev, nil, corev1.EventTypeWarning, "RolloutFailed", "Rollout", "%s", rev.Status.Message)

	logger := log.FromContext(ctx)
	if next := target(revs); next != nil {
		r.Opts.Metrics.Rollbacks.Inc()
		r.Recorder.Eventf(next, rev, corev1.EventTypeWarning, "RollingBack", "Rollback",
			"revision %s failed (%s on node %s): every node carrying it goes back to revision %s", rev.Name, f.Reason, f.Node, next.Name)
		logger.Info("revision failed, rolling back", "failed", rev.Name, "node", f.Node, "reason", f.Reason, "to", next.Name, "message", f.Message)
	} else {
		r.Recorder.Eventf(rev, nil, corev1.EventTypeWarning, "NoRollbackTarget", "Rollback",
			"revision %s failed and no earlier revision is left to roll back to; nodes keep their configuration", rev.Name)
		logger.Info("revision failed, nothing to roll back to", "failed", rev.Name, "node", f.Node, "reason", f.Reason)
	}
	return nil
}

func (r *RolloutReconciler) reportHeld(held map[string]error) {
	if r.heldMsg == nil {
		r.heldMsg = map[string]string{}
	}
	for name := range r.heldMsg {
		if held[name] == nil {
			delete(r.heldMsg, name)
		}
	}
	for name, err := range held {
		if r.heldMsg[name] == err.Error() {
			continue
		}
		r.heldMsg[name] = err.Error()
		ref := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		ref.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
		r.Recorder.Eventf(ref, nil, corev1.EventTypeWarning, "NodeConfigHeld", "BuildNodeNetworkConfig", "%s", err.Error())
	}
}

// updateStatuses writes the target's progress and marks older revisions Superseded.
func (r *RolloutReconciler) updateStatuses(ctx context.Context, tgt *v1.NetworkConfigRevision, revs []*v1.NetworkConfigRevision,
	plan rollout.Plan, paused bool, held map[string]error, notes []string, now time.Time) error {
	st := tgt.Status.DeepCopy()
	c := plan.Counts
	setCounts(st, c)
	switch {
	case st.Phase == v1.RevisionDone:
	case plan.Complete():
		rolling := tgt.CreationTimestamp.Time
		if st.Phase == v1.RevisionRolling && st.Time != nil {
			rolling = st.Time.Time // a revision targeted again after a rollback counts from then
		}
		r.Opts.Metrics.RolloutDuration.Observe(now.Sub(rolling).Seconds())
		st.Phase, st.Time = v1.RevisionDone, &metav1.Time{Time: now}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionRolledOut, Status: metav1.ConditionTrue,
			Reason: "AllNodesUpdated", Message: fmt.Sprintf("%d nodes run the revision", c.Total)})
		r.Recorder.Eventf(tgt, nil, corev1.EventTypeNormal, "RolloutComplete", "Rollout", "%d nodes run revision %s", c.Total, tgt.Name)
	case st.Phase != v1.RevisionRolling:
		st.Phase, st.Time = v1.RevisionRolling, &metav1.Time{Time: now}
	}
	if paused || meta.FindStatusCondition(st.Conditions, ConditionPaused) != nil {
		cond := metav1.Condition{Type: ConditionPaused, Status: metav1.ConditionFalse, Reason: "Resumed", Message: "the rollout proceeds"}
		if paused {
			cond = metav1.Condition{Type: ConditionPaused, Status: metav1.ConditionTrue, Reason: "Annotation",
				Message: AnnotationPaused + " is set: no node receives the revision until it is removed (rollbacks still happen)"}
		}
		meta.SetStatusCondition(&st.Conditions, cond)
	}
	if len(plan.NotReady) > 0 {
		notes = append(notes, fmt.Sprintf("%d NotReady nodes (not counted as updated): %s", len(plan.NotReady), listNames(plan.NotReady)))
	}
	for _, name := range slices.Sorted(maps.Keys(held)) {
		notes = append(notes, fmt.Sprintf("node %s held: %v", name, held[name]))
	}
	st.Message = strings.Join(notes, "; ")
	if err := r.patchStatus(ctx, tgt, st); err != nil {
		return err
	}

	for _, rev := range revs {
		if rev == tgt || rev.Status.Phase == v1.RevisionFailed || rev.Status.Phase == v1.RevisionSuperseded {
			continue
		}
		st := rev.Status.DeepCopy()
		st.Phase, st.Time = v1.RevisionSuperseded, &metav1.Time{Time: now}
		st.Message = "superseded by revision " + tgt.Name
		if err := r.patchStatus(ctx, rev, st); err != nil {
			return err
		}
	}
	return nil
}

// setCounts fills the status counts; pending is every node neither updated nor failed (in flight,
// waiting, NotReady or held), so total = updated + pending + failed.
func setCounts(st *v1.NetworkConfigRevisionStatus, c rollout.Counts) {
	st.Total, st.Updated, st.Failed = int32(c.Total), int32(c.Updated), int32(c.Failed)
	st.Pending = int32(c.Total - c.Updated - c.Failed)
}

func (r *RolloutReconciler) patchStatus(ctx context.Context, rev *v1.NetworkConfigRevision, st *v1.NetworkConfigRevisionStatus) error {
	if equality.Semantic.DeepEqual(&rev.Status, st) {
		return nil
	}
	orig := rev.DeepCopy()
	rev.Status = *st
	if err := r.Client.Status().Patch(ctx, rev, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("update status of revision %s: %w", rev.Name, err)
	}
	return nil
}

func listNames(names []string) string {
	const limit = 10
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:limit], ", "), len(names)-limit)
}

func (r *RolloutReconciler) recordNodeMetrics(plan rollout.Plan) {
	c := plan.Counts
	for state, n := range map[string]int{"updated": c.Updated, "in_flight": c.InFlight, "pending": c.Pending + c.Held,
		"failed": c.Failed, "not_ready": c.NotReady} {
		r.Opts.Metrics.RolloutNodes.WithLabelValues(state).Set(float64(n))
	}
}

// prune deletes revisions no longer needed (see prunable).
func (r *RolloutReconciler) prune(ctx context.Context, revs []*v1.NetworkConfigRevision, tgt *v1.NetworkConfigRevision, nncs map[string]*v1.NodeNetworkConfig) error {
	referenced := map[types.UID]bool{}
	for _, nnc := range nncs {
		for _, o := range nnc.OwnerReferences {
			if o.Kind == "NetworkConfigRevision" {
				referenced[o.UID] = true
			}
		}
	}
	for _, rev := range prunable(revs, tgt, referenced, r.Opts.KeepRevisions) {
		if err := r.Client.Delete(ctx, rev, client.Preconditions{UID: &rev.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("prune revision %s: %w", rev.Name, err)
		}
		r.Opts.Metrics.RevisionsPruned.Inc()
		log.FromContext(ctx).V(1).Info("pruned revision", "revision", rev.Name, "sequence", rev.Spec.Sequence)
	}
	return nil
}

// nextDeadline is when the first in-flight node exceeds the progress deadline (0: no node in flight).
func (r *RolloutReconciler) nextDeadline(plan rollout.Plan, states []rollout.NodeState, now time.Time) time.Duration {
	var next time.Duration
	for _, s := range states {
		if plan.Buckets[s.Name] != rollout.BucketInFlight || s.Config == nil {
			continue
		}
		since := s.Config.AssignedAt
		if s.ReadySince.After(since) {
			since = s.ReadySince
		}
		d := max(since.Add(r.Opts.ProgressDeadline).Sub(now), 0) + 10*time.Millisecond
		if next == 0 || d < next {
			next = d
		}
	}
	return next
}

// SetupWithManager registers the controller. Every relevant change maps to the one work item.
func (r *RolloutReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Opts = r.Opts.withDefaults()
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("network-operator-rollout")
	}
	cache := mgr.GetCache()
	return ctrl.NewControllerManagedBy(mgr).
		Named("rollout").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		WatchesRawSource(source.Kind(cache, &v1.NetworkConfigRevision{}, toRollout[*v1.NetworkConfigRevision](),
			// Our own status writes need no new round; new revisions, annotations (pause) and deletes do.
			predicate.Or[*v1.NetworkConfigRevision](predicate.TypedGenerationChangedPredicate[*v1.NetworkConfigRevision]{},
				predicate.TypedAnnotationChangedPredicate[*v1.NetworkConfigRevision]{}))).
		WatchesRawSource(source.Kind(cache, &corev1.Node{}, toRollout[*corev1.Node](), nodeChanged())).
		WatchesRawSource(source.Kind(cache, &v1.NodeNetworkConfig{}, toRollout[*v1.NodeNetworkConfig]())).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(rolloutRequest)
			return nil
		})).
		Complete(r)
}

func toRollout[T client.Object]() handler.TypedEventHandler[T, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(context.Context, T) []reconcile.Request {
		return []reconcile.Request{rolloutRequest}
	})
}

// nodeChanged passes Node updates that matter to a rollout, not the periodic status heartbeats.
func nodeChanged() predicate.TypedPredicate[*corev1.Node] {
	return predicate.TypedFuncs[*corev1.Node]{
		UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Node]) bool {
			o, n := e.ObjectOld, e.ObjectNew
			ro, so := nodeReady(o)
			rn, sn := nodeReady(n)
			return ro != rn || !so.Equal(sn) || !maps.Equal(o.Labels, n.Labels) ||
				!maps.Equal(o.Annotations, n.Annotations) || !equality.Semantic.DeepEqual(o.Status.Addresses, n.Status.Addresses)
		},
	}
}
