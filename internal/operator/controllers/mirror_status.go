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
	"github.com/network-operator/network-operator/internal/operator/debounce"
)

// A MirrorSelector's Applied condition (das-schiff's): True when the mirror runs on every node that has it
// (and on one at least), False with reason ConditionReasonNotApplied naming the nodes where it does not, or
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
// activeSelectors the MirrorSelectors that reference it and activeNodes the nodes where a mirror into it runs.
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
		st.ActiveNodes = int32(c.selectorNodes[s.Name])
		meta.SetStatusCondition(&st.Conditions, c.appliedCondition(s.Name, s.Generation))
		if equality.Semantic.DeepEqual(st, s.Status) {
			continue
		}
		s.Status = st
		errs = append(errs, r.writeStatus(ctx, s))
	}
	for i := range targets.Items {
		t := &targets.Items[i]
		st := *t.Status.DeepCopy()
		st.ActiveSelectors, st.ActiveNodes = int32(c.targetSelectors[t.Name]), int32(len(c.targetNodes[t.Name]))
		if equality.Semantic.DeepEqual(st, t.Status) {
			continue
		}
		t.Status = st
		errs = append(errs, r.writeStatus(ctx, t))
	}
	// A conflict (the cache was behind, or the config controller wrote Resolved) is retried with fresh objects.
	return reconcile.Result{}, errors.Join(errs...)
}

func (r *MirrorStatusReconciler) writeStatus(ctx context.Context, o client.Object) error {
	if err := r.Client.Status().Update(ctx, o); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of %T %s: %w", o, o.GetName(), err)
	}
	return nil
}

// mirrorCounts are the agents' reports summed up.
type mirrorCounts struct {
	selectorNodes   map[string]int                 // selector -> nodes where it runs
	notApplied      map[string][]string            // selector -> "node: reason: message" where it does not
	targetSelectors map[string]int                 // target -> selectors referencing it
	targetNodes     map[string]map[string]struct{} // target -> nodes where a mirror into it runs
}

func countMirrors(nncs []v1.NodeNetworkConfig, sels []v1.MirrorSelector) mirrorCounts {
	c := mirrorCounts{selectorNodes: map[string]int{}, notApplied: map[string][]string{}, targetSelectors: map[string]int{},
		targetNodes: map[string]map[string]struct{}{}}
	for _, s := range sels {
		c.targetSelectors[s.Spec.MirrorTarget.Name]++
	}
	for _, n := range nncs {
		for _, m := range n.Status.Mirrors {
			if !m.Applied {
				c.notApplied[m.Name] = append(c.notApplied[m.Name], n.Name+" ("+m.Reason+": "+m.Message+")")
				continue
			}
			c.selectorNodes[m.Name]++
			if c.targetNodes[m.Target] == nil {
				c.targetNodes[m.Target] = map[string]struct{}{}
			}
			c.targetNodes[m.Target][n.Name] = struct{}{}
		}
	}
	return c
}

func (c mirrorCounts) appliedCondition(selector string, generation int64) metav1.Condition {
	cond := metav1.Condition{Type: ConditionApplied, ObservedGeneration: generation}
	on, off := c.selectorNodes[selector], c.notApplied[selector]
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
		cond.Message = "no node reports the mirror running (yet)"
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
