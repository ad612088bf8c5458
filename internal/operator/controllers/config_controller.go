package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/operator/debounce"
)

// ConfigReconciler turns the user resources into NetworkConfigRevisions.
type ConfigReconciler struct {
	// Client reads the user resources (from the cache) and creates revisions.
	Client client.Client
	// APIReader lists revisions uncached: the next sequence number must come from the newest revision,
	// not from a cache that may not show the one created a moment ago.
	APIReader client.Reader
	Opts      Options
}

// +kubebuilder:rbac:groups=network.network-operator.io,resources=vrfrouteconfigurations;layer2networkconfigurations;bgppeerings,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=networkconfigrevisions,verbs=get;list;watch;create;update;patch;delete

// Reconcile takes one snapshot and creates a revision when its content is new.
func (r *ConfigReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	spec, err := r.snapshot(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	hash, err := spec.ContentHash()
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("hash snapshot: %w", err)
	}
	var revs v1.NetworkConfigRevisionList
	if err := r.APIReader.List(ctx, &revs); err != nil {
		return reconcile.Result{}, fmt.Errorf("list revisions: %w", err)
	}
	newest := newestRevision(revs.Items)
	if newest != nil && newest.Spec.Revision == hash {
		r.Opts.Metrics.Snapshots.WithLabelValues("unchanged").Inc()
		r.Opts.Metrics.RevisionSequence.Set(float64(newest.Spec.Sequence))
		return reconcile.Result{}, nil
	}

	spec.Revision, spec.Sequence = hash, 1
	rev := &v1.NetworkConfigRevision{}
	if newest != nil {
		spec.Sequence = newest.Spec.Sequence + 1
		for _, k := range inheritedAnnotations {
			if v, ok := newest.Annotations[k]; ok {
				metav1.SetMetaDataAnnotation(&rev.ObjectMeta, k, v)
			}
		}
	}
	rev.Name, rev.Spec = RevisionName(spec.Sequence, hash), spec
	if err := r.Client.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, fmt.Errorf("create revision %s: %w", rev.Name, err)
	}
	r.Opts.Metrics.Snapshots.WithLabelValues("created").Inc()
	r.Opts.Metrics.RevisionsCreated.Inc()
	r.Opts.Metrics.RevisionSequence.Set(float64(spec.Sequence))
	log.FromContext(ctx).Info("created revision", "revision", rev.Name, "sequence", spec.Sequence, "hash", hash,
		"vrfs", len(spec.VRF), "layer2s", len(spec.Layer2), "bgpPeerings", len(spec.BGP))
	return reconcile.Result{}, nil
}

// RevisionName names a revision after its sequence and the start of its hash ("rev-42-0123456789").
func RevisionName(sequence int64, hash string) string {
	return fmt.Sprintf("rev-%d-%.10s", sequence, hash)
}

// snapshot copies the specs of every user resource, sorted by name.
func (r *ConfigReconciler) snapshot(ctx context.Context) (v1.NetworkConfigRevisionSpec, error) {
	var spec v1.NetworkConfigRevisionSpec
	var vrfs v1.VRFRouteConfigurationList
	if err := r.Client.List(ctx, &vrfs); err != nil {
		return spec, fmt.Errorf("list VRFRouteConfigurations: %w", err)
	}
	for i := range vrfs.Items {
		spec.VRF = append(spec.VRF, v1.VRFRevision{Name: vrfs.Items[i].Name, VRFRouteConfigurationSpec: *vrfs.Items[i].Spec.DeepCopy()})
	}
	var l2s v1.Layer2NetworkConfigurationList
	if err := r.Client.List(ctx, &l2s); err != nil {
		return spec, fmt.Errorf("list Layer2NetworkConfigurations: %w", err)
	}
	for i := range l2s.Items {
		spec.Layer2 = append(spec.Layer2, v1.Layer2Revision{Name: l2s.Items[i].Name, Layer2NetworkConfigurationSpec: *l2s.Items[i].Spec.DeepCopy()})
	}
	var bgps v1.BGPPeeringList
	if err := r.Client.List(ctx, &bgps); err != nil {
		return spec, fmt.Errorf("list BGPPeerings: %w", err)
	}
	for i := range bgps.Items {
		spec.BGP = append(spec.BGP, v1.BGPRevision{Name: bgps.Items[i].Name, BGPPeeringSpec: *bgps.Items[i].Spec.DeepCopy()})
	}
	spec.Sort()
	return spec, nil
}

// SetupWithManager registers the controller: every change of a user resource (and the start) schedules
// one debounced snapshot.
func (r *ConfigReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Opts = r.Opts.withDefaults()
	d := r.Opts.Debounce
	cache := mgr.GetCache()
	return ctrl.NewControllerManagedBy(mgr).
		Named("networkconfig").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		WatchesRawSource(source.Kind(cache, &v1.VRFRouteConfiguration{}, debounce.Handler[*v1.VRFRouteConfiguration](snapshotRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.Layer2NetworkConfiguration{}, debounce.Handler[*v1.Layer2NetworkConfiguration](snapshotRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.BGPPeering{}, debounce.Handler[*v1.BGPPeering](snapshotRequest, d))).
		// A deleted revision (by hand or pruning) may have been the newest: look again.
		WatchesRawSource(source.Kind(cache, &v1.NetworkConfigRevision{}, handler.TypedFuncs[*v1.NetworkConfigRevision, reconcile.Request]{
			DeleteFunc: func(_ context.Context, _ event.TypedDeleteEvent[*v1.NetworkConfigRevision], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				q.AddAfter(snapshotRequest, d)
			},
		})).
		// The first snapshot, also when no user resource exists yet (every node still gets its underlay).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.AddAfter(snapshotRequest, d)
			return nil
		})).
		Complete(r)
}
