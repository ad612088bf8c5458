package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
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

var linkStatusRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "linkstatus"}}

// LinkStatusReconciler fills the Link status from the NodeNetworkConfigs: matchedNodes are the nodes whose spec has
// the Link, and the condition Ready says whether each of them applied that spec and is Ready.
type LinkStatusReconciler struct {
	Client client.Client
	Opts   Options
}

// +kubebuilder:rbac:groups=network.network-operator.io,resources=links;nodenetworkconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=links/status,verbs=get;update;patch

// Reconcile looks at every node once and writes the statuses that changed.
func (r *LinkStatusReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var nncs v1.NodeNetworkConfigList
	if err := r.Client.List(ctx, &nncs); err != nil {
		return reconcile.Result{}, fmt.Errorf("list NodeNetworkConfigs: %w", err)
	}
	var links v1.LinkList
	if err := r.Client.List(ctx, &links); err != nil {
		return reconcile.Result{}, fmt.Errorf("list Links: %w", err)
	}
	nodes := linkNodes(nncs.Items)
	var errs []error
	for i := range links.Items {
		l := &links.Items[i]
		st := *l.Status.DeepCopy()
		st.MatchedNodes, st.Conditions = nil, slices.Clone(st.Conditions)
		var notReady []string
		for _, n := range nodes[l.Name] {
			st.MatchedNodes = append(st.MatchedNodes, n.node)
			if n.notReady != "" {
				notReady = append(notReady, n.node+" ("+n.notReady+")")
			}
		}
		meta.SetStatusCondition(&st.Conditions, linkReady(l.Generation, len(st.MatchedNodes), notReady))
		if equality.Semantic.DeepEqual(st, l.Status) {
			continue
		}
		l.Status = st
		errs = append(errs, writeStatus(ctx, r.Client, l))
	}
	// A conflict (the cache was behind, or the config controller wrote Resolved) is retried with fresh objects.
	return reconcile.Result{}, errors.Join(errs...)
}

// linkNode is one node whose spec has a Link; notReady says why the node does not run that spec ("": it does).
type linkNode struct{ node, notReady string }

// linkNodes maps each Link to the nodes whose spec has it, by node name.
func linkNodes(nncs []v1.NodeNetworkConfig) map[string][]linkNode {
	out := map[string][]linkNode{}
	slices.SortFunc(nncs, func(a, b v1.NodeNetworkConfig) int { return strings.Compare(a.Name, b.Name) })
	for i := range nncs {
		n := &nncs[i]
		why := ""
		ready := meta.FindStatusCondition(n.Status.Conditions, v1.ConditionReady)
		switch {
		case n.Status.AppliedRevision != n.Spec.Revision || ready == nil || ready.ObservedGeneration < n.Generation:
			why = "applying"
		case ready.Status != metav1.ConditionTrue:
			why = "not Ready: " + ready.Message
		}
		for _, l := range n.Spec.Links {
			out[l.Name] = append(out[l.Name], linkNode{n.Name, why})
		}
	}
	return out
}

// linkReady is the Ready condition of a Link on matched nodes, notReady naming those that do not run it yet.
func linkReady(generation int64, matched int, notReady []string) metav1.Condition {
	c := metav1.Condition{Type: v1.LinkConditionReady, ObservedGeneration: generation}
	switch {
	case matched == 0:
		c.Status, c.Reason = metav1.ConditionFalse, v1.LinkReasonNoNodes
		c.Message = "no node's configuration has the Link: its nodeSelector selects none, or it waits for a reference (see Resolved)"
	case len(notReady) > 0:
		named := notReady[:min(len(notReady), maxNamedNodes)]
		more := ""
		if len(notReady) > len(named) {
			more = fmt.Sprintf(" and %d more", len(notReady)-len(named))
		}
		c.Status, c.Reason = metav1.ConditionFalse, v1.LinkReasonNotReady
		c.Message = fmt.Sprintf("ready on %d of %d nodes; not on %s%s", matched-len(notReady), matched, strings.Join(named, ", "), more)
		if len(c.Message) > 4096 {
			c.Message = c.Message[:4093] + "..."
		}
	default:
		c.Status, c.Reason = metav1.ConditionTrue, v1.LinkReasonReady
		c.Message = fmt.Sprintf("ready on %d nodes", matched)
	}
	return c
}

// SetupWithManager registers the controller: every change of a NodeNetworkConfig or Link schedules one debounced
// look.
func (r *LinkStatusReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Opts = r.Opts.withDefaults()
	d := r.Opts.Debounce
	cache := mgr.GetCache()
	return ctrl.NewControllerManagedBy(mgr).
		Named("linkstatus").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		WatchesRawSource(source.Kind(cache, &v1.NodeNetworkConfig{}, debounce.Handler[*v1.NodeNetworkConfig](linkStatusRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.Link{}, debounce.Handler[*v1.Link](linkStatusRequest, d))).
		Complete(r)
}
