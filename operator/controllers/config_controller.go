package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/network-operator/network-operator/operator/debounce"
	"github.com/network-operator/network-operator/operator/nodespec"
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

// +kubebuilder:rbac:groups=network.network-operator.io,resources=vrfrouteconfigurations;layer2networkconfigurations;bgppeerings;routingtables;mirrortargets;mirrorselectors,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=layer2networkconfigurations/status;bgppeerings/status;mirrortargets/status;mirrorselectors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=links,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=links/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=network.network-operator.io,resources=networkconfigrevisions,verbs=get;list;watch;create;update;patch;delete

// Reconcile takes one snapshot and creates a revision when its content is new.
func (r *ConfigReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	spec, objs, err := r.snapshot(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	// Objects whose references do not resolve yet wait outside the revision; their Resolved condition says why.
	held := nodespec.HoldBack(&spec)
	if err := r.reportResolved(ctx, objs, held); err != nil {
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

// snapshot copies the specs of every user resource, sorted by name, and returns the objects that carry a
// Resolved condition.
func (r *ConfigReconciler) snapshot(ctx context.Context) (v1.NetworkConfigRevisionSpec, []conditioned, error) {
	var spec v1.NetworkConfigRevisionSpec
	var objs []conditioned
	var vrfs v1.VRFRouteConfigurationList
	if err := r.Client.List(ctx, &vrfs); err != nil {
		return spec, nil, fmt.Errorf("list VRFRouteConfigurations: %w", err)
	}
	for i := range vrfs.Items {
		spec.VRF = append(spec.VRF, v1.VRFRevision{Name: vrfs.Items[i].Name, VRFRouteConfigurationSpec: *vrfs.Items[i].Spec.DeepCopy()})
	}
	var l2s v1.Layer2NetworkConfigurationList
	if err := r.Client.List(ctx, &l2s); err != nil {
		return spec, nil, fmt.Errorf("list Layer2NetworkConfigurations: %w", err)
	}
	for i := range l2s.Items {
		o := &l2s.Items[i]
		spec.Layer2 = append(spec.Layer2, v1.Layer2Revision{Name: o.Name, Layer2NetworkConfigurationSpec: *o.Spec.DeepCopy()})
		objs = append(objs, conditioned{v1.KindLayer2NetworkConfiguration, o, &o.Status.Conditions})
	}
	var bgps v1.BGPPeeringList
	if err := r.Client.List(ctx, &bgps); err != nil {
		return spec, nil, fmt.Errorf("list BGPPeerings: %w", err)
	}
	for i := range bgps.Items {
		o := &bgps.Items[i]
		spec.BGP = append(spec.BGP, v1.BGPRevision{Name: o.Name, BGPPeeringSpec: *o.Spec.DeepCopy()})
		if o.Spec.PeeringVlan != nil {
			objs = append(objs, conditioned{"BGPPeering", o, &o.Status.Conditions})
		}
	}
	var tables v1.RoutingTableList
	if err := r.Client.List(ctx, &tables); err != nil {
		return spec, nil, fmt.Errorf("list RoutingTables: %w", err)
	}
	for i := range tables.Items {
		spec.RoutingTables = append(spec.RoutingTables, v1.RoutingTableRevision{Name: tables.Items[i].Name, RoutingTableSpec: tables.Items[i].Spec})
	}
	var targets v1.MirrorTargetList
	if err := r.Client.List(ctx, &targets); err != nil {
		return spec, nil, fmt.Errorf("list MirrorTargets: %w", err)
	}
	for i := range targets.Items {
		o := &targets.Items[i]
		spec.MirrorTargets = append(spec.MirrorTargets, v1.MirrorTargetRevision{Name: o.Name, MirrorTargetSpec: *o.Spec.DeepCopy()})
		objs = append(objs, conditioned{v1.KindMirrorTarget, o, &o.Status.Conditions})
	}
	var sels v1.MirrorSelectorList
	if err := r.Client.List(ctx, &sels); err != nil {
		return spec, nil, fmt.Errorf("list MirrorSelectors: %w", err)
	}
	for i := range sels.Items {
		o := &sels.Items[i]
		spec.MirrorSelectors = append(spec.MirrorSelectors, v1.MirrorSelectorRevision{Name: o.Name, MirrorSelectorSpec: *o.Spec.DeepCopy()})
		objs = append(objs, conditioned{"MirrorSelector", o, &o.Status.Conditions})
	}
	var links v1.LinkList
	if err := r.Client.List(ctx, &links); err != nil {
		return spec, nil, fmt.Errorf("list Links: %w", err)
	}
	for i := range links.Items {
		o := &links.Items[i]
		spec.Links = append(spec.Links, v1.LinkRevision{Name: o.Name, LinkSpec: *o.Spec.DeepCopy()})
		if o.Spec.VXLAN != nil {
			objs = append(objs, conditioned{v1.KindLink, o, &o.Status.Conditions})
		}
	}
	spec.Sort()
	return spec, objs, nil
}

// ConditionResolved is the condition of a user object that references others (a Layer2 network its VRF, a
// peering its network, a mirror its target and source): True when they exist and the object is in the
// revisions, False (reason ConditionReasonMissingReference) while it waits outside them.
const (
	ConditionResolved               = "Resolved"
	ConditionReasonResolved         = "Resolved"
	ConditionReasonMissingReference = "MissingReference"
)

// conditioned is a user object with a Resolved condition.
type conditioned struct {
	kind       string
	obj        client.Object
	conditions *[]metav1.Condition
}

// reportResolved sets the Resolved condition of every object that has a reference: False with the reason for
// the held ones, True for the others. Only changes are written.
func (r *ConfigReconciler) reportResolved(ctx context.Context, objs []conditioned, held []nodespec.Held) error {
	reasons := make(map[string]string, len(held))
	for _, h := range held {
		reasons[h.Kind+"/"+h.Name] = h.Reason
		log.FromContext(ctx).Info("held back until its references exist", "kind", h.Kind, "name", h.Name, "reason", h.Reason)
	}
	for _, o := range objs {
		orig := o.obj.DeepCopyObject().(client.Object)
		c := metav1.Condition{Type: ConditionResolved, Status: metav1.ConditionTrue, Reason: ConditionReasonResolved,
			Message: "every referenced object exists; the object is in the revisions", ObservedGeneration: o.obj.GetGeneration()}
		if reason, ok := reasons[o.kind+"/"+o.obj.GetName()]; ok {
			c.Status, c.Reason = metav1.ConditionFalse, ConditionReasonMissingReference
			c.Message = "waiting outside the revisions: " + reason
		} else if meta.FindStatusCondition(*o.conditions, ConditionResolved) == nil {
			continue // never held back: nothing to report
		}
		if !meta.SetStatusCondition(o.conditions, c) {
			continue
		}
		// A merge patch, without the object's version: another controller writing the status a moment ago (a
		// status controller's condition) must not make this one wait for the next snapshot. The patch carries the
		// conditions as this controller saw them; a status controller rewrites its own condition when it differs.
		if err := r.Client.Status().Patch(ctx, o.obj, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("set condition %s of %s %s: %w", ConditionResolved, o.kind, o.obj.GetName(), err)
		}
	}
	return nil
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
		WatchesRawSource(source.Kind(cache, &v1.RoutingTable{}, debounce.Handler[*v1.RoutingTable](snapshotRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.MirrorTarget{}, debounce.Handler[*v1.MirrorTarget](snapshotRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.MirrorSelector{}, debounce.Handler[*v1.MirrorSelector](snapshotRequest, d))).
		WatchesRawSource(source.Kind(cache, &v1.Link{}, debounce.Handler[*v1.Link](snapshotRequest, d),
			predicate.TypedGenerationChangedPredicate[*v1.Link]{})).
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
