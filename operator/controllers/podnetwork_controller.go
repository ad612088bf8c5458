/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/podnetwork/podselect"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/operator/podnetwork/podalloc"
)

// PodNetworkFieldManager is the field manager of the operator's server-side apply of a PodNetworkConfig's status:
// it owns status.allocations and the conditions Allocated and Applied. The agents apply status.pods with field
// managers of their own, so neither side removes what the other wrote.
const PodNetworkFieldManager = "network-operator"

// podNetworkIndex indexes PodNetworkConfigs by the networks their veth and macvlan interfaces join.
const podNetworkIndex = "spec.interfaces.network"

// PodNetworkReconciler gives the pods every PodNetworkConfig selects their addresses (status.allocations, planned
// by package podalloc) and sets the conditions Allocated (every pod has its addresses, or why not) and Applied
// (from what the agents report in status.pods).
type PodNetworkReconciler struct {
	Client client.Client
}

// +kubebuilder:rbac:groups=network.network-operator.io,resources=podnetworkconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=podnetworkconfigs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods;namespaces,verbs=get;list;watch

// Reconcile plans one PodNetworkConfig's allocations and conditions and applies them when they changed.
func (r *PodNetworkReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cfg v1.PodNetworkConfig
	if err := r.Client.Get(ctx, req.NamespacedName, &cfg); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cfg.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cfg.Namespace}, &ns); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("namespace %s: %w", cfg.Namespace, err)
	}

	var ifaces []podalloc.Interface
	var problems interfaceProblems
	for i := range cfg.Spec.Interfaces {
		in := &cfg.Spec.Interfaces[i]
		f := podalloc.Interface{Name: in.Name}
		var l2 *v1.Layer2NetworkConfiguration
		if validation.PodInterfaceJoinsNetwork(in.Type) {
			f.Network = in.Network
			l2 = &v1.Layer2NetworkConfiguration{}
			if err := r.Client.Get(ctx, client.ObjectKey{Name: in.Network}, l2); apierrors.IsNotFound(err) {
				l2 = nil
			} else if err != nil {
				return reconcile.Result{}, fmt.Errorf("network %s of %s/%s: %w", in.Network, cfg.Namespace, cfg.Name, err)
			}
		}
		res := validation.ResolvePodInterface(field.NewPath("spec", "interfaces").Index(i), in, cfg.Namespace, ns.Labels, l2)
		switch {
		case !res.Admitted:
			problems.notAdmitted = append(problems.notAdmitted, fmt.Sprintf("%s (network %s)", in.Name, in.Network))
		case len(res.Errs) > 0:
			problems.invalid = append(problems.invalid, res.Errs[0].Error())
		}
		f.Pool = res.Pool
		ifaces = append(ifaces, f)
	}

	pods, running, err := r.selectedPods(ctx, &cfg)
	if err != nil {
		return reconcile.Result{}, err
	}
	others, err := r.othersOnNetworks(ctx, &cfg, ifaces)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan := podalloc.Allocate(podalloc.Input{Interfaces: ifaces, Pods: pods, Current: cfg.Status.Allocations, Others: others})

	conds := cfg.Status.DeepCopy().Conditions
	meta.SetStatusCondition(&conds, allocatedCondition(cfg.Generation, problems, plan.Missing, len(pods), hasPools(ifaces)))
	meta.SetStatusCondition(&conds, podAppliedCondition(cfg.Generation, running, cfg.Status.Pods))
	if equality.Semantic.DeepEqual(conds, cfg.Status.Conditions) && equality.Semantic.DeepEqual(plan.Allocations, cfg.Status.Allocations) {
		return reconcile.Result{}, nil
	}
	var own []metav1.Condition
	for _, c := range conds {
		if c.Type == ConditionAllocated || c.Type == ConditionApplied {
			own = append(own, c)
		}
	}
	switch err := r.applyStatus(ctx, &cfg, plan.Allocations, own); {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// A newer version (an agent's report, a spec change) or the deletion is on its way as an event, which
		// plans again from it: never write a plan made from an old allocation list.
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("status of PodNetworkConfig %s/%s: %w", cfg.Namespace, cfg.Name, err)
	}
	return reconcile.Result{}, nil
}

// selectedPods are the pods the configuration applies to (podselect) and, of them, those running (not being
// deleted): the pods the agents must report applied.
func (r *PodNetworkReconciler) selectedPods(ctx context.Context, cfg *v1.PodNetworkConfig) ([]podalloc.Pod, []*corev1.Pod, error) {
	sel, err := podselect.Selector(cfg)
	if err != nil {
		return nil, nil, nil // admission refuses such a selector: it selects nothing
	}
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(cfg.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("list pods of %s: %w", cfg.Namespace, err)
	}
	var pods []podalloc.Pod
	var running []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if !podselect.Selects(cfg, sel, p) {
			continue
		}
		pods = append(pods, podalloc.Pod{Name: p.Name, UID: string(p.UID), Created: p.CreationTimestamp.Time})
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running = append(running, p)
		}
	}
	return pods, running, nil
}

// othersOnNetworks are the addresses the other PodNetworkConfigs on the networks of cfg's interfaces hold: true
// where cfg must give the address up because the other was created first (then by namespace/name).
func (r *PodNetworkReconciler) othersOnNetworks(ctx context.Context, cfg *v1.PodNetworkConfig, ifaces []podalloc.Interface) (map[string]map[netip.Addr]bool, error) {
	out := map[string]map[netip.Addr]bool{}
	for _, f := range ifaces {
		if f.Network == "" || out[f.Network] != nil {
			continue
		}
		held := map[netip.Addr]bool{}
		out[f.Network] = held
		var list v1.PodNetworkConfigList
		if err := r.Client.List(ctx, &list, client.MatchingFields{podNetworkIndex: f.Network}); err != nil {
			return nil, fmt.Errorf("list PodNetworkConfigs on network %s: %w", f.Network, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			if o.Namespace == cfg.Namespace && o.Name == cfg.Name {
				continue
			}
			onNet := map[string]bool{}
			for _, oi := range o.Spec.Interfaces {
				onNet[oi.Name] = validation.PodInterfaceJoinsNetwork(oi.Type) && oi.Network == f.Network
			}
			first := comesFirst(o, cfg)
			for _, a := range o.Status.Allocations {
				if p, err := netip.ParsePrefix(a.Address); err == nil && onNet[a.Interface] {
					held[p.Addr()] = held[p.Addr()] || first
				}
			}
		}
	}
	return out, nil
}

// comesFirst: of two PodNetworkConfigs holding one address, the one created first keeps it (then by
// namespace/name).
func comesFirst(a, b *v1.PodNetworkConfig) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

func hasPools(ifaces []podalloc.Interface) bool {
	for _, f := range ifaces {
		if f.Pool != nil {
			return true
		}
	}
	return false
}

// applyStatus applies status.allocations and the operator's conditions with server-side apply, field manager
// PodNetworkFieldManager, at cfg's resourceVersion (a conflict means the plan was made from an old version).
// status.pods is not in the applied object, so the agents' entries stay.
func (r *PodNetworkReconciler) applyStatus(ctx context.Context, cfg *v1.PodNetworkConfig, allocs []v1.PodAddressAllocation, conds []metav1.Condition) error {
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1.PodNetworkConfigStatus{Allocations: allocs, Conditions: conds})
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": st}}
	u.SetGroupVersionKind(v1.GroupVersion.WithKind("PodNetworkConfig"))
	u.SetNamespace(cfg.Namespace)
	u.SetName(cfg.Name)
	u.SetResourceVersion(cfg.ResourceVersion)
	return r.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(PodNetworkFieldManager), client.ForceOwnership)
}

// SetupWithManager registers the controller. Besides its PodNetworkConfigs it watches the pods they may select
// (only pods of namespaces with PodNetworkConfigs lead to work, and only changes of labels, node, phase or
// deletion), the namespaces' labels and the networks (podNamespaceSelector, gateways), and the allocations of the
// other PodNetworkConfigs on the same networks.
func (r *PodNetworkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1.PodNetworkConfig{}, podNetworkIndex, podNetworkNetworks); err != nil {
		return fmt.Errorf("index PodNetworkConfigs by network: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("podnetwork").
		For(&v1.PodNetworkConfig{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.configsSelecting), builder.WithPredicates(podChange())).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.configsInNamespace), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&v1.Layer2NetworkConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.configsOnNetwork)).
		Watches(&v1.PodNetworkConfig{}, handler.EnqueueRequestsFromMapFunc(r.neighbours), builder.WithPredicates(allocationsChange())).
		Complete(r)
}

// podNetworkNetworks are the networks a PodNetworkConfig's veth and macvlan interfaces join.
func podNetworkNetworks(o client.Object) []string {
	cfg, ok := o.(*v1.PodNetworkConfig)
	if !ok {
		return nil
	}
	var out []string
	for _, in := range cfg.Spec.Interfaces {
		if validation.PodInterfaceJoinsNetwork(in.Type) && in.Network != "" {
			out = append(out, in.Network)
		}
	}
	return out
}

func requests(list []v1.PodNetworkConfig, skip func(*v1.PodNetworkConfig) bool) []reconcile.Request {
	var out []reconcile.Request
	for i := range list {
		if skip != nil && skip(&list[i]) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list[i].Namespace, Name: list[i].Name}})
	}
	return out
}

// configsSelecting are the PodNetworkConfigs of the pod's namespace whose selector matches the pod's labels (the
// handler asks with the old and the new pod, so a label removal reaches the configuration that selected it).
func (r *PodNetworkReconciler) configsSelecting(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1.PodNetworkConfigList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list PodNetworkConfigs for a pod", "namespace", o.GetNamespace())
		return nil
	}
	return requests(list.Items, func(cfg *v1.PodNetworkConfig) bool {
		sel, err := podselect.Selector(cfg)
		return err != nil || !sel.Matches(labels.Set(o.GetLabels()))
	})
}

func (r *PodNetworkReconciler) configsInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1.PodNetworkConfigList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetName())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list PodNetworkConfigs of a namespace", "namespace", o.GetName())
		return nil
	}
	return requests(list.Items, nil)
}

func (r *PodNetworkReconciler) configsOnNetwork(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1.PodNetworkConfigList
	if err := r.Client.List(ctx, &list, client.MatchingFields{podNetworkIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list PodNetworkConfigs on a network", "network", o.GetName())
		return nil
	}
	return requests(list.Items, nil)
}

// neighbours are the other PodNetworkConfigs on the networks of o.
func (r *PodNetworkReconciler) neighbours(ctx context.Context, o client.Object) []reconcile.Request {
	seen := map[types.NamespacedName]bool{}
	var out []reconcile.Request
	for _, n := range podNetworkNetworks(o) {
		for _, req := range r.configsOnNetwork(ctx, &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: n}}) {
			if (req.Namespace == o.GetNamespace() && req.Name == o.GetName()) || seen[req.NamespacedName] {
				continue
			}
			seen[req.NamespacedName] = true
			out = append(out, req)
		}
	}
	return out
}

// podChange passes the pod events that can change a selection or the set of running pods.
func podChange() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			a, okA := e.ObjectOld.(*corev1.Pod)
			b, okB := e.ObjectNew.(*corev1.Pod)
			return !okA || !okB || !equality.Semantic.DeepEqual(a.Labels, b.Labels) || a.Spec.NodeName != b.Spec.NodeName ||
				a.Status.Phase != b.Status.Phase || (a.DeletionTimestamp == nil) != (b.DeletionTimestamp == nil)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// allocationsChange passes the PodNetworkConfig events that can free or take addresses on a shared network.
func allocationsChange() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			a, okA := e.ObjectOld.(*v1.PodNetworkConfig)
			b, okB := e.ObjectNew.(*v1.PodNetworkConfig)
			return !okA || !okB || !equality.Semantic.DeepEqual(a.Status.Allocations, b.Status.Allocations)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// CacheOptions are the operator's informer settings: pods, of which a cluster has many, are kept with only what
// the pod network controller reads (name, namespace, UID, labels, creation and deletion time, node, host
// network, phase). Nothing else in the operator reads pods from the cache.
func CacheOptions() cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: trimPod}}}
}

func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Labels: p.Labels, CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp},
		Spec:   corev1.PodSpec{NodeName: p.Spec.NodeName, HostNetwork: p.Spec.HostNetwork},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}, nil
}
