package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/debounce"
)

// The Applied condition of a MirrorSelector (das-schiff's) and of a MirrorTarget: True when the mirror (for a
// target: every mirror into it) runs on every node that has it, and on one node at least; False with reason
// ConditionReasonNotApplied naming the nodes where it does not, each with the first reason the node gave; or
// ConditionReasonPending while no node reports it.
const (
	ConditionApplied          = "Applied"
	ConditionReasonApplied    = "Applied"
	ConditionReasonNotApplied = "NotApplied"
	ConditionReasonPending    = "Pending"
)

// maxNamedNodes bounds the nodes an Applied=False message names.
const maxNamedNodes = 5

var mirrorStatusRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "mirrorstatus"}}

// MirrorStatusReconciler fills the MirrorSelector and MirrorTarget status from what the agents report in their
// NodeNetworkConfig's status.mirrors: a selector's activeNodes counts the nodes where its mirror runs, a target's
// activeSelectors the MirrorSelectors that reference it and activeNodes the nodes where a mirror into it runs;
// both get the condition Applied.
type MirrorStatusReconciler struct {
	Client client.Client
	Opts   Options
}

// +kubebuilder:rbac:groups=network.network-operator.io,resources=mirrortargets;mirrorselectors;nodenetworkconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=mirrortargets/status;mirrorselectors/status,verbs=get;update;patch

// Reconcile counts once over all objects and writes the statuses that changed.
func (r *MirrorStatusReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var nncs v1.NodeNetworkConfigList
	if err := r.Client.List(ctx, &nncs); err != nil {
		return reconcile.Result{}, fmt.Errorf("list NodeNetworkConfigs: %w", err)
	}
	var sels v1.MirrorSelectorList
	if err := r.Client.List(ctx, &sels); err != nil {
		return reconcile.Result{}, fmt.Errorf("list MirrorSelectors: %w", err)
	}
	var targets v1.MirrorTargetList
	if err := r.Client.List(ctx, &targets); err != nil {
		return reconcile.Result{}, fmt.Errorf("list MirrorTargets: %w", err)
	}
	c := countMirrors(nncs.Items, sels.Items)
	var errs []error
	for i := range sels.Items {
		s := &sels.Items[i]
		st := *s.Status.DeepCopy()
		st.ActiveNodes = int32(c.selectors[s.Name].running())
		meta.SetStatusCondition(&st.Conditions, c.selectors[s.Name].appliedCondition(s.Generation, "the mirror"))
		if equality.Semantic.DeepEqual(st, s.Status) {
			continue
		}
		s.Status = st
		errs = append(errs, writeStatus(ctx, r.Client, s))
	}
	for i := range targets.Items {
		t := &targets.Items[i]
		st := *t.Status.DeepCopy()
		st.ActiveSelectors, st.ActiveNodes = int32(c.targetSelectors[t.Name]), int32(c.targets[t.Name].running())
		meta.SetStatusCondition(&st.Conditions, c.targets[t.Name].appliedCondition(t.Generation, "a mirror into the target"))
		if equality.Semantic.DeepEqual(st, t.Status) {
			continue
		}
		t.Status = st
		errs = append(errs, writeStatus(ctx, r.Client, t))
	}
	// A conflict (the cache was behind, or the config controller wrote Resolved) is retried with fresh objects.
	return reconcile.Result{}, errors.Join(errs...)
}

// writeStatus updates o's status; an object deleted meanwhile is no error. The status controllers' one write.
func writeStatus(ctx context.Context, c client.Client, o client.Object) error {
	if err := c.Status().Update(ctx, o); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of %T %s: %w", o, o.GetName(), err)
	}
	return nil
}

// mirrorCounts are the agents' reports summed up.
type mirrorCounts struct {
	selectors       map[string]*nodeReports // selector -> the nodes that report it
	targets         map[string]*nodeReports // target -> the nodes that report a mirror into it
	targetSelectors map[string]int          // target -> selectors referencing it
}

// nodeReports are the nodes that report one selector, or the mirrors into one target: a node is in runningNodes
// when (one of) its mirror(s) runs there, in notApplied when (one of) its mirror(s) does not. A target's node can
// be in both: the tunnel carries copies there, but not all it should. A nil *nodeReports is nothing reported.
type nodeReports struct {
	runningNodes map[string]struct{}
	notApplied   map[string]string // node -> "Reason: Message" of its first mirror that does not run
}

func (r *nodeReports) add(node string, m v1.NodeMirrorStatus) {
	if m.Applied {
		r.runningNodes[node] = struct{}{}
	} else if _, ok := r.notApplied[node]; !ok {
		r.notApplied[node] = m.Reason + ": " + m.Message
	}
}

// running is the number of nodes where (a mirror into) it runs: activeNodes.
func (r *nodeReports) running() int {
	if r == nil {
		return 0
	}
	return len(r.runningNodes)
}

func countMirrors(nncs []v1.NodeNetworkConfig, sels []v1.MirrorSelector) mirrorCounts {
	c := mirrorCounts{selectors: map[string]*nodeReports{}, targets: map[string]*nodeReports{},
		targetSelectors: map[string]int{}}
	for _, s := range sels {
		c.targetSelectors[s.Spec.MirrorTarget.Name]++
	}
	reports := func(m map[string]*nodeReports, key string) *nodeReports {
		if m[key] == nil {
			m[key] = &nodeReports{runningNodes: map[string]struct{}{}, notApplied: map[string]string{}}
		}
		return m[key]
	}
	for _, n := range nncs {
		for _, m := range n.Status.Mirrors { // sorted by name: a node's first reason is its first mirror's
			reports(c.selectors, m.Name).add(n.Name, m)
			reports(c.targets, m.Target).add(n.Name, m)
		}
	}
	return c
}

// appliedCondition is the Applied condition of a selector or target (what names it in the Pending message): every
// node that reports it must run all of it. The message names at most maxNamedNodes nodes, sorted, with the first
// reason each gave, so it changes only with the reports.
func (r *nodeReports) appliedCondition(generation int64, what string) metav1.Condition {
	cond := metav1.Condition{Type: ConditionApplied, ObservedGeneration: generation}
	var on int
	var off []string
	if r != nil {
		for node := range r.runningNodes {
			if _, ok := r.notApplied[node]; !ok {
				on++
			}
		}
		for node, why := range r.notApplied {
			off = append(off, node+" ("+why+")")
		}
	}
	switch {
	case len(off) > 0:
		slices.Sort(off)
		named := off[:min(len(off), maxNamedNodes)]
		more := ""
		if len(off) > len(named) {
			more = fmt.Sprintf(" and %d more", len(off)-len(named))
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, ConditionReasonNotApplied
		cond.Message = fmt.Sprintf("runs on %d of %d nodes; not on %s%s", on, on+len(off), strings.Join(named, ", "), more)
		if len(cond.Message) > 4096 {
			cond.Message = cond.Message[:4093] + "..."
		}
	case on == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ConditionReasonPending
		cond.Message = "no node reports " + what + " running (yet)"
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, ConditionReasonApplied
		cond.Message = fmt.Sprintf("runs on %d nodes", on)
	}
	return cond
}

// SetupWithManager registers the controller: every change of a NodeNetworkConfig, MirrorSelector or
// MirrorTarget schedules one debounced count.
func (r *MirrorStatusReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Opts = r.Opts.withDefaults()
	d := r.Opts.Debounce
	cache := mgr.GetCache()
	return ctrl.NewControllerManagedBy(mgr).
		Named("mirrorstatus").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		WatchesRawSource(source.Kind(cache, &v1.NodeNetworkConfig{}, debounce.Handler[*v1.NodeNetworkConfig](mirrorStatusRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.MirrorSelector{}, debounce.Handler[*v1.MirrorSelector](mirrorStatusRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.MirrorTarget{}, debounce.Handler[*v1.MirrorTarget](mirrorStatusRequest, d))).
		Complete(r)
}
