// Package kube runs the node agent against the Kubernetes API: a controller-runtime manager whose cache holds
// this node's NodeNetworkConfig (a field selector on metadata.name; further objects only when Options.Cache adds
// them, e.g. pod networking's Pods of this node) - a reconciler that
// applies its spec through the reconcile engine and writes the status the operator's rollout reads, BGP
// passwords read from Secrets on demand (never cached), and a Node condition plus the removal of a start-up
// taint once the node is healthy.
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/network-operator/network-operator/agent/nodestatus"
	agentreconcile "github.com/network-operator/network-operator/agent/reconcile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// +kubebuilder:rbac:groups=network.network-operator.io,resources=nodenetworkconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=nodenetworkconfigs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=get;patch

// ConditionNodeReady is the Node condition the agent maintains.
const ConditionNodeReady corev1.NodeConditionType = "NetworkOperatorReady"

// DefaultStartupTaint is the taint removed from the Node once the agent is healthy (nodes join with it, so no
// workload lands before the network is configured).
const DefaultStartupTaint = "network.network-operator.io/not-ready"

// ShutdownTimeout is how long the agent waits on SIGTERM for the reconcile that runs: its apply step finishes
// (within agentreconcile.StepTimeout) and the apply stops before the next one, with time to write the status. The
// chart's terminationGracePeriodSeconds is longer (test/chart checks it).
const ShutdownTimeout = agentreconcile.StepTimeout + 10*time.Second

// Options configure the agent's manager and reconciler.
type Options struct {
	NodeName string
	Engine   *agentreconcile.Engine
	// Resync re-runs the reconcile this often (drift repair, health) even without changes; default 1 min.
	Resync time.Duration
	// StartupTaint is the taint key removed once healthy ("" keeps DefaultStartupTaint; "-" disables).
	StartupTaint string
	Logger       *slog.Logger
	// Cache adds objects to the manager's cache with their selectors (e.g. podnetctl's: this node's Pods).
	Cache map[client.Object]cache.ByObject
	// Setup registers further controllers with the manager (e.g. podnetctl.Setup).
	Setup []func(ctrl.Manager) error

	// skipNameValidation allows several managers in one process: only tests run several (export_test.go).
	skipNameValidation bool
}

// NewManager returns a manager whose cache holds only the NodeNetworkConfig named like the node, with the
// agent's controller registered. Secrets and the Node are read uncached (APIReader).
func NewManager(cfg *rest.Config, scheme *runtime.Scheme, o Options) (ctrl.Manager, error) {
	if o.NodeName == "" || o.Engine == nil {
		return nil, errors.New("kube: NodeName and Engine are required")
	}
	byObject := map[client.Object]cache.ByObject{
		&v1.NodeNetworkConfig{}: {Field: fields.OneTermEqualSelector("metadata.name", o.NodeName)},
	}
	for obj, by := range o.Cache {
		byObject[obj] = by
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// managedFields are never read here; a NodeNetworkConfig's lists every field of its spec and status
		// (hundreds of KiB at 1000 VRFs), held in the cache and copied by every Get.
		Cache: cache.Options{ByObject: byObject, DefaultTransform: cache.TransformStripManagedFields()},
		Client: client.Options{Cache: &client.CacheOptions{
			// Never start informers for these: a node agent must not cache every Secret or Node of the cluster.
			DisableFor: []client.Object{&corev1.Secret{}, &corev1.Node{}},
		}},
		Metrics:                 metricsserver.Options{BindAddress: "0"}, // the agent serves its own registry
		HealthProbeBindAddress:  "0",
		LeaderElection:          false,
		Controller:              config.Controller{SkipNameValidation: &o.skipNameValidation},
		GracefulShutdownTimeout: ptr.To(ShutdownTimeout),
	})
	if err != nil {
		return nil, fmt.Errorf("agent manager: %w", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Opts: o}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	for _, setup := range o.Setup {
		if err := setup(mgr); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// Reconciler applies this node's NodeNetworkConfig.
type Reconciler struct {
	Client    client.Client
	APIReader client.Reader
	Opts      Options

	mu      sync.Mutex
	retries int // transient failures in a row
}

// retryBackoff is the wait before the n-th retry (1-based) of a revision that failed transiently: 1 s doubling up
// to 30 s.
func retryBackoff(n int) time.Duration {
	return min(time.Second<<min(n-1, 5), 30*time.Second)
}

// nextRetry counts an outcome and returns the wait before the next reconcile when it was a transient failure.
func (r *Reconciler) nextRetry(out *agentreconcile.Outcome) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !out.Retrying() {
		r.retries = 0
		return 0, false
	}
	r.retries++
	return retryBackoff(r.retries), true
}

func (r *Reconciler) log() *slog.Logger {
	if r.Opts.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Opts.Logger
}

// SetupWithManager registers the controller: only the node's own object, spec changes only (status writes of
// the agent itself do not trigger it; Resync covers drift).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	own := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == r.Opts.NodeName })
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodenetworkconfig-agent").
		For(&v1.NodeNetworkConfig{}, builder.WithPredicates(own, predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration()
			},
		})).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	resync := r.Opts.Resync
	if resync <= 0 {
		resync = time.Minute
	}
	if req.Name != r.Opts.NodeName {
		return reconcile.Result{}, nil
	}
	var nnc v1.NodeNetworkConfig
	if err := r.Client.Get(ctx, req.NamespacedName, &nnc); err != nil {
		if apierrors.IsNotFound(err) {
			// No configuration (yet, or any more): the node keeps running what it has.
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	out := r.Opts.Engine.Reconcile(ctx, &nnc.Spec, r.Password)
	r.log().Info("reconciled", "revision", nnc.Spec.Revision, "result", out.Result, "duration", out.Duration,
		"steps", agentreconcile.FormatSteps(out.Steps), "nodeRead", out.NodeRead, "err", out.Err)

	st := nodestatus.Build(out, nnc.Status, nnc.Generation, metav1.Now())
	if !nodestatus.Equal(st, nnc.Status) {
		if err := r.writeStatus(ctx, &nnc, st); err != nil {
			return reconcile.Result{}, fmt.Errorf("write status of %s: %w", nnc.Name, err)
		}
	}
	retryIn, retrying := r.nextRetry(out)
	if err := r.updateNode(ctx, out); err != nil {
		r.log().Error("update node", "err", err)
		return reconcile.Result{RequeueAfter: min(5*time.Second, resync)}, nil
	}
	if retrying {
		r.log().Info("transient error, retrying", "revision", nnc.Spec.Revision, "in", retryIn, "err", out.Err)
		return reconcile.Result{RequeueAfter: min(retryIn, resync)}, nil
	}
	return reconcile.Result{RequeueAfter: resync}, nil
}

// writeStatus sets the status of nnc to st with a merge patch computed from the status alone: the patch of two
// whole objects is the same, but encodes and decodes the spec twice to find it unchanged (13.5 MB allocated for
// 1000 VRFs). Same metadata on both sides, so no resourceVersion goes into the patch (no optimistic lock).
func (r *Reconciler) writeStatus(ctx context.Context, nnc *v1.NodeNetworkConfig, st v1.NodeNetworkConfigStatus) error {
	base := &v1.NodeNetworkConfig{ObjectMeta: nnc.ObjectMeta, Status: nnc.Status}
	next := &v1.NodeNetworkConfig{ObjectMeta: nnc.ObjectMeta, Status: st}
	return r.Client.Status().Patch(ctx, next, client.MergeFrom(base))
}

// Password reads one Secret key (uncached, namespaced Get); the value goes only to pkg/frr.
func (r *Reconciler) Password(ctx context.Context, ref v1.SecretKeyReference) (string, error) {
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &s); err != nil {
		return "", fmt.Errorf("secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	v, ok := s.Data[ref.Key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", ref.Namespace, ref.Name, ref.Key)
	}
	return string(v), nil
}

// updateNode sets the NetworkOperatorReady condition and removes the start-up taint once healthy (it is never
// added back: it only keeps workloads off a node that has not been configured yet).
func (r *Reconciler) updateNode(ctx context.Context, out *agentreconcile.Outcome) error {
	var node corev1.Node
	if err := r.APIReader.Get(ctx, types.NamespacedName{Name: r.Opts.NodeName}, &node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get node %s: %w", r.Opts.NodeName, err)
	}
	healthy := out.Good != nil && out.Healthy
	cond := corev1.NodeCondition{Type: ConditionNodeReady, Status: corev1.ConditionFalse, Reason: nodestatus.ReasonUnhealthy}
	switch {
	case healthy:
		cond.Status, cond.Reason, cond.Message = corev1.ConditionTrue, nodestatus.ReasonHealthy,
			"network configuration "+out.Good.Revision+" applied and healthy"
	case out.HealthErr != nil:
		cond.Message = out.HealthErr.Error()
	default:
		cond.Message = "no network configuration applied yet"
	}
	base := node.DeepCopy()
	if setNodeCondition(&node, cond) {
		// Strategic merge: conditions merge by type, the kubelet's own conditions are not part of the patch.
		if err := r.Client.Status().Patch(ctx, &node, client.StrategicMergeFrom(base)); err != nil {
			return fmt.Errorf("set node condition %s: %w", ConditionNodeReady, err)
		}
	}
	taint := r.Opts.StartupTaint
	if taint == "" {
		taint = DefaultStartupTaint
	}
	if healthy && taint != "-" {
		i := slices.IndexFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == taint })
		if i >= 0 {
			base := node.DeepCopy()
			node.Spec.Taints = slices.Delete(node.Spec.Taints, i, i+1)
			// Optimistic lock: never drop a taint someone else added meanwhile.
			if err := r.Client.Patch(ctx, &node, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
				return fmt.Errorf("remove start-up taint %s: %w", taint, err)
			}
			r.log().Info("start-up taint removed", "taint", taint)
		}
	}
	return nil
}

// setNodeCondition updates or adds c, keeping the transition time when the status stays; it reports whether
// anything changed.
func setNodeCondition(node *corev1.Node, c corev1.NodeCondition) bool {
	now := metav1.Now()
	for i := range node.Status.Conditions {
		old := &node.Status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return false
		}
		if old.Status != c.Status {
			old.LastTransitionTime = now
		}
		old.Status, old.Reason, old.Message, old.LastHeartbeatTime = c.Status, c.Reason, c.Message, now
		return true
	}
	c.LastTransitionTime, c.LastHeartbeatTime = now, now
	node.Status.Conditions = append(node.Status.Conditions, c)
	return true
}
