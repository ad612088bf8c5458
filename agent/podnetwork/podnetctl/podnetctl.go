// Package podnetctl is the node agent's pod networking loop: it watches the Pods of this node, every
// PodNetworkConfig and the node's NodeNetworkConfig, and applies to each pod what the configs selecting it ask
// for (agent/podnetwork/podnet), in the pod's network namespace found through the container runtime
// (agent/cri). It removes it all when the pod ends, its labels stop matching, or a config (or one of its
// interfaces) is deleted, or its network no longer admits the pod's namespace, and reports per pod in the configs' status.pods - only this node's pods, with
// server-side apply under the field manager network-agent/<node>, so agents and the operator never overwrite
// each other.
package podnetctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/vishvananda/netns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/network-operator/network-operator/agent/cri"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=podnetworkconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=podnetworkconfigs/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=layer2networkconfigurations,verbs=get;list;watch

// NetnsFinder finds a pod's network namespace (cri.Client).
type NetnsFinder interface {
	PodNetns(ctx context.Context, podUID string) (cri.Netns, error)
}

// Options configure the pod networking controller.
type Options struct {
	NodeName string
	Applier  *podnet.Applier
	// Store is the applier's record store (the pods the agent configured).
	Store *podrecords.Store
	Netns NetnsFinder
	// Resync re-applies every pod this often (drift repair) and collects what ended pods left; default 1 min.
	Resync time.Duration
	Logger *slog.Logger
}

// CacheOptions are the cache settings the controller needs: only this node's Pods.
func CacheOptions(node string) map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Field: fields.OneTermEqualSelector("spec.nodeName", node)},
	}
}

// Setup registers the controller and its collector of leftovers with the manager (whose cache has
// CacheOptions and the node's NodeNetworkConfig).
func Setup(mgr ctrl.Manager, o Options) error {
	if o.NodeName == "" || o.Applier == nil || o.Store == nil || o.Netns == nil {
		return errors.New("podnetctl: NodeName, Applier, Store and Netns are required")
	}
	if o.Resync <= 0 {
		o.Resync = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Reconciler{c: mgr.GetClient(), o: o, status: newStatusWriter(mgr.GetClient(), o.NodeName), locks: map[types.UID]*sync.Mutex{}}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("podnetwork-agent").
		For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			p, ok := obj.(*corev1.Pod)
			return ok && p.Spec.NodeName == o.NodeName
		}))).
		Watches(&v1.PodNetworkConfig{}, handler.EnqueueRequestsFromMapFunc(r.podsOfConfig), builder.WithPredicates(configChanged())).
		Watches(&v1.NodeNetworkConfig{}, handler.EnqueueRequestsFromMapFunc(r.allPods), builder.WithPredicates(
			predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == o.NodeName }), nodeChanged())).
		// Which namespaces may join a network: the networks' podNamespaceSelectors and the namespaces' labels.
		Watches(&v1.Layer2NetworkConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.allPods), builder.WithPredicates(admissionChanged())).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.podsOfNamespace), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(r)
	if err != nil {
		return fmt.Errorf("pod networking controller: %w", err)
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return r.collect(ctx, mgr.GetCache()) }))
}

// configChanged passes what changes a config's effect on pods: its spec, its allocations, its deletion. The
// status.pods the agents write does not.
func configChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1.PodNetworkConfig)
		n, ok2 := e.ObjectNew.(*v1.PodNetworkConfig)
		if !ok1 || !ok2 {
			return true
		}
		return o.Generation != n.Generation || !reflect.DeepEqual(o.Status.Allocations, n.Status.Allocations) ||
			!o.DeletionTimestamp.Equal(n.DeletionTimestamp)
	}}
}

// admissionChanged passes a network's new podNamespaceSelector, its creation and its deletion.
func admissionChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1.Layer2NetworkConfiguration)
		n, ok2 := e.ObjectNew.(*v1.Layer2NetworkConfiguration)
		if !ok1 || !ok2 {
			return true
		}
		return !reflect.DeepEqual(o.Spec.PodNamespaceSelector, n.Spec.PodNamespaceSelector) ||
			!o.DeletionTimestamp.Equal(n.DeletionTimestamp)
	}}
}

// nodeChanged passes a new spec of the node (its networks) and a new applied revision: the node's bridges are
// made (or re-made, releasing their ports) when the agent applies the spec, after the spec event.
func nodeChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1.NodeNetworkConfig)
		n, ok2 := e.ObjectNew.(*v1.NodeNetworkConfig)
		if !ok1 || !ok2 {
			return true
		}
		return o.Generation != n.Generation || o.Status.AppliedRevision != n.Status.AppliedRevision
	}}
}

// Reconciler applies the pod networking of one pod per request.
type Reconciler struct {
	c      client.Client
	o      Options
	status *statusWriter

	mu    sync.Mutex
	locks map[types.UID]*sync.Mutex // one apply per pod at a time (reconciles and the collector)
}

func (r *Reconciler) lock(uid types.UID) func() {
	r.mu.Lock()
	l, ok := r.locks[uid]
	if !ok {
		l = &sync.Mutex{}
		r.locks[uid] = l
	}
	r.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (r *Reconciler) podsOfConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.pods(ctx, client.InNamespace(obj.GetNamespace()))
}

func (r *Reconciler) podsOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.pods(ctx, client.InNamespace(obj.GetName()))
}

func (r *Reconciler) allPods(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.pods(ctx)
}

func (r *Reconciler) pods(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, opts...); err != nil {
		r.o.Logger.Error("list pods", "err", err)
		return nil
	}
	out := make([]reconcile.Request, 0, len(pods.Items))
	for _, p := range pods.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return out
}

// Reconcile implements reconcile.Reconciler for one pod of this node.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var pod corev1.Pod
	if err := r.c.Get(ctx, req.NamespacedName, &pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		// The pod is gone: remove what any pod of that name left, and its status entries.
		return reconcile.Result{}, errors.Join(r.removeNamed(ctx, req.NamespacedName, ""), r.setEntries(ctx, req.NamespacedName, nil, nil))
	}
	if pod.Spec.NodeName != r.o.NodeName {
		return reconcile.Result{}, nil
	}
	key := req.NamespacedName
	// An earlier pod of the same name (another UID) may have left something.
	if err := r.removeNamed(ctx, key, pod.UID); err != nil {
		return reconcile.Result{}, err
	}
	var list v1.PodNetworkConfigList
	if err := r.c.List(ctx, &list, client.InNamespace(pod.Namespace)); err != nil {
		return reconcile.Result{}, err
	}
	// The pods the configs apply to are podselect's (the operator's rule too): a pod being deleted keeps its
	// network through its grace period, a terminated one or one on the host network has none.
	selecting := podnet.Selecting(list.Items, &pod)
	if pod.Spec.HostNetwork {
		return reconcile.Result{}, r.setEntries(ctx, key, list.Items, nil) // the node's own namespace: never touched
	}
	rec, err := r.o.Store.Load(string(pod.UID))
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(selecting) == 0 {
		// Records are written before anything is made: without one the pod has nothing of the agent's.
		var rerr error
		if rec != nil {
			rerr = r.remove(ctx, podRef(&pod))
		}
		return reconcile.Result{}, errors.Join(rerr, r.setEntries(ctx, key, list.Items, nil))
	}
	if !sandboxReady(&pod) {
		return reconcile.Result{}, r.setEntries(ctx, key, list.Items, same(selecting,
			v1.PodNetworkStatus{Reason: podnet.ReasonPodNotRunning, Message: "the pod's sandbox is not ready yet"}))
	}
	entries, again, err := r.apply(ctx, &pod, selecting)
	serr := r.setEntries(ctx, key, list.Items, entries)
	if err != nil {
		return reconcile.Result{}, errors.Join(err, serr)
	}
	return reconcile.Result{RequeueAfter: again}, serr
}

// sandboxRetry is how soon a pod whose sandbox the kubelet reported but the runtime does not list is tried again.
const sandboxRetry = time.Second

// criTimeout bounds one question to the container runtime.
const criTimeout = 10 * time.Second

func (r *Reconciler) podNetns(ctx context.Context, uid string) (cri.Netns, error) {
	ctx, cancel := context.WithTimeout(ctx, criTimeout)
	defer cancel()
	return r.o.Netns.PodNetns(ctx, uid)
}

// sandboxReady: the kubelet made the pod's sandbox and network (PodReadyToStartContainers), or the pod runs.
func sandboxReady(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodRunning || p.Status.PodIP != "" {
		return true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func podRef(p *corev1.Pod) podnet.Pod {
	return podnet.Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)}
}

// same gives every selecting config the same entry.
func same(configs []v1.PodNetworkConfig, e v1.PodNetworkStatus) map[string]v1.PodNetworkStatus {
	out := map[string]v1.PodNetworkStatus{}
	for _, c := range configs {
		e.ObservedGeneration = c.Generation
		out[c.Name] = e
	}
	return out
}

// apply applies the selecting configs to the pod and returns the status entry per config and when to look again.
func (r *Reconciler) apply(ctx context.Context, pod *corev1.Pod, selecting []v1.PodNetworkConfig) (map[string]v1.PodNetworkStatus, time.Duration, error) {
	unlock := r.lock(pod.UID)
	defer unlock()
	start := time.Now()
	failed := func(reason string, err error) (map[string]v1.PodNetworkStatus, time.Duration, error) {
		return same(selecting, v1.PodNetworkStatus{Reason: reason, Message: err.Error()}), 0, err
	}
	ns, err := r.podNetns(ctx, string(pod.UID))
	switch {
	case errors.Is(err, cri.ErrNoSandbox):
		// Not yet (the pod's status was ahead of the runtime) or no more (the next pod event says so).
		entries, _, _ := failed(podnet.ReasonPodNotRunning, err)
		return entries, sandboxRetry, nil
	case errors.Is(err, cri.ErrHostNetwork):
		entries, _, _ := failed(podnet.ReasonNotSupported, err)
		return entries, r.o.Resync, nil
	case err != nil:
		return failed(podnet.ReasonApplyFailed, err)
	}
	h, err := ns.Open()
	if err != nil {
		return failed(podnet.ReasonApplyFailed, err)
	}
	defer h.Close()
	var nnc v1.NodeNetworkConfig
	var node *v1.NodeNetworkConfigSpec
	switch err := r.c.Get(ctx, types.NamespacedName{Name: r.o.NodeName}, &nnc); {
	case err == nil:
		node = &nnc.Spec
	case !apierrors.IsNotFound(err):
		return failed(podnet.ReasonApplyFailed, err)
	}
	adm, err := r.admission(ctx, pod.Namespace)
	if err != nil {
		return failed(podnet.ReasonApplyFailed, err)
	}
	in := podnet.Input{Pod: podRef(pod), Configs: selecting, Node: node, Admission: adm}
	plan, err := r.o.Applier.Plan(ctx, in, h)
	if err != nil {
		return failed(podnet.ReasonApplyFailed, err)
	}
	var res *podnet.Result
	var aerr error
	if plan.Empty() {
		r.o.Logger.Debug("pod network unchanged", "pod", in.Pod.String(), "duration", time.Since(start))
	} else {
		res, aerr = r.o.Applier.Apply(ctx, plan, h)
		log := r.o.Logger.With("pod", in.Pod.String(), "netns", ns.Path, "actions", len(plan.Actions),
			"duration", time.Since(start))
		if aerr != nil {
			log.Error("pod network not applied", "plan", plan.String(), "err", aerr)
		} else {
			log.Info("pod network applied", "plan", plan.String())
		}
	}
	entries := map[string]v1.PodNetworkStatus{}
	for _, o := range podnet.Outcomes(plan, res, aerr) {
		entries[o.Config] = v1.PodNetworkStatus{Applied: o.Applied, Interfaces: o.Interfaces, Reason: o.Reason,
			Message: truncate(o.Message), ObservedGeneration: o.Generation}
	}
	if plan.Settle && aerr == nil {
		return entries, min(r.o.Resync, podnet.SettleAfter), nil
	}
	return entries, r.o.Resync, aerr
}

// admission is what decides whether the networks admit pods of namespace (podnet.Admission): admission's rule,
// checked again by the agent because an administrator may withdraw a network (or relabel the namespace) after
// the PodNetworkConfig was admitted; the pods then lose their interfaces on it.
func (r *Reconciler) admission(ctx context.Context, namespace string) (*podnet.Admission, error) {
	var ns corev1.Namespace
	if err := r.c.Get(ctx, types.NamespacedName{Name: namespace}, &ns); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("namespace %s: %w", namespace, err)
	}
	var l2s v1.Layer2NetworkConfigurationList
	if err := r.c.List(ctx, &l2s); err != nil {
		return nil, fmt.Errorf("list Layer2NetworkConfigurations: %w", err)
	}
	a := &podnet.Admission{NamespaceLabels: ns.Labels, Networks: make(map[string]*v1.Layer2NetworkConfiguration, len(l2s.Items))}
	for i := range l2s.Items {
		if l2s.Items[i].DeletionTimestamp == nil {
			a.Networks[l2s.Items[i].Name] = &l2s.Items[i]
		}
	}
	return a, nil
}

func truncate(s string) string {
	const limit = 2048
	if len(s) <= limit {
		return s
	}
	return s[:limit-3] + "..."
}

// remove removes everything of the pod (in its namespace while the runtime still has it, else on the host).
// Callers know the pod has something of the agent's (a record, or host links marked as its).
func (r *Reconciler) remove(ctx context.Context, pod podnet.Pod) error {
	unlock := r.lock(types.UID(pod.UID))
	defer unlock()
	var h netns.NsHandle
	if ns, err := r.podNetns(ctx, pod.UID); err == nil {
		if h, err = ns.Open(); err != nil {
			h = 0 // gone meanwhile: the host side alone
		} else {
			defer h.Close()
		}
	}
	plan, err := r.o.Applier.Plan(ctx, podnet.Input{Pod: pod}, h)
	if err != nil {
		return fmt.Errorf("remove pod network of %s: %w", pod, err)
	}
	if plan.Empty() {
		return nil
	}
	start := time.Now()
	if _, err := r.o.Applier.Apply(ctx, plan, h); err != nil {
		return fmt.Errorf("remove pod network of %s: %w", pod, err)
	}
	r.o.Logger.Info("pod network removed", "pod", pod.String(), "actions", len(plan.Actions), "duration", time.Since(start),
		"plan", plan.String())
	return nil
}

// removeNamed removes what pods called key left, except the one with UID keep.
func (r *Reconciler) removeNamed(ctx context.Context, key types.NamespacedName, keep types.UID) error {
	uids, err := r.o.Store.UIDs()
	if err != nil {
		return err
	}
	var errs []error
	for _, u := range uids {
		if types.UID(u) == keep {
			continue
		}
		rec, err := r.o.Store.Load(u)
		if err != nil || rec == nil || rec.Namespace != key.Namespace || rec.Name != key.Name {
			continue
		}
		errs = append(errs, r.remove(ctx, podnet.Pod{Namespace: rec.Namespace, Name: rec.Name, UID: u}))
	}
	return errors.Join(errs...)
}

// setEntries sets the pod's status entry in every config of its namespace: entries[config] for the configs it
// names, none in the others.
func (r *Reconciler) setEntries(ctx context.Context, pod types.NamespacedName, configs []v1.PodNetworkConfig,
	entries map[string]v1.PodNetworkStatus) error {
	if configs == nil {
		var list v1.PodNetworkConfigList
		if err := r.c.List(ctx, &list, client.InNamespace(pod.Namespace)); err != nil {
			return err
		}
		configs = list.Items
	}
	var errs []error
	for i := range configs {
		cfg := &configs[i]
		if cfg.DeletionTimestamp != nil {
			continue
		}
		var e *v1.PodNetworkStatus
		if got, ok := entries[cfg.Name]; ok {
			e = &got
		}
		errs = append(errs, r.status.set(ctx, cfg, pod.Name, e))
	}
	return errors.Join(errs...)
}

// collect removes, at the start and every Resync, what pods that ended while the agent did not watch left: their
// interfaces, host objects and records, and this node's status entries of pods it no longer has.
func (r *Reconciler) collect(ctx context.Context, c cache.Cache) error {
	if !c.WaitForCacheSync(ctx) {
		return nil // stopping
	}
	t := time.NewTicker(r.o.Resync)
	defer t.Stop()
	for {
		if err := r.collectOnce(ctx); err != nil {
			r.o.Logger.Error("collect leftovers of ended pods", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (r *Reconciler) collectOnce(ctx context.Context) error {
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods); err != nil {
		return err
	}
	live := map[types.UID]bool{}
	names := map[types.NamespacedName]bool{}
	for _, p := range pods.Items {
		live[p.UID] = true
		names[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = true
	}
	owned, err := r.o.Applier.Pods(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, u := range owned {
		if live[types.UID(u)] {
			continue
		}
		p := podnet.Pod{UID: u}
		if rec, err := r.o.Store.Load(u); err == nil && rec != nil {
			p.Namespace, p.Name = rec.Namespace, rec.Name
		}
		errs = append(errs, r.remove(ctx, p))
	}
	var configs v1.PodNetworkConfigList
	if err := r.c.List(ctx, &configs); err != nil {
		return errors.Join(append(errs, err)...)
	}
	for i := range configs.Items {
		cfg := &configs.Items[i]
		errs = append(errs, r.status.update(ctx, cfg, func(m map[string]v1.PodNetworkStatus) {
			for name := range m {
				if !names[types.NamespacedName{Namespace: cfg.Namespace, Name: name}] {
					delete(m, name)
				}
			}
		}))
	}
	return errors.Join(errs...)
}
