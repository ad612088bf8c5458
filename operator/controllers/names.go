package controllers

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/network-operator/network-operator/operator/metrics"
	"github.com/network-operator/network-operator/operator/nodespec"
)

// Annotations the operator reads or writes.
const (
	// AnnotationPaused on a revision ("true") pauses its rollout.
	AnnotationPaused = "network.network-operator.io/paused"
	// AnnotationMaxUnavailable on a revision overrides Options.MaxUnavailable (a number or a percentage).
	AnnotationMaxUnavailable = "network.network-operator.io/max-unavailable"
	// AnnotationAssignedAt on a NodeNetworkConfig is when the operator wrote its current spec (RFC 3339);
	// the progress deadline counts from it.
	AnnotationAssignedAt = "network.network-operator.io/assigned-at"
	// AnnotationRevisionName on a NodeNetworkConfig names the revision object its spec came from.
	AnnotationRevisionName = "network.network-operator.io/revision-name"
)

// inheritedAnnotations are copied from the newest revision into a new one.
var inheritedAnnotations = []string{AnnotationPaused, AnnotationMaxUnavailable}

// Revision condition types written by the rollout controller.
const (
	// ConditionPaused is True while the revision's rollout is paused.
	ConditionPaused = "Paused"
	// ConditionRolledOut is True once every node ran the revision; it stays when the revision is superseded
	// and marks the last good revision.
	ConditionRolledOut = "RolledOut"
)

// Revision failure reasons beyond the planner's.
const (
	// ReasonInvalidForNode: the revision's content cannot be built into a node's configuration.
	ReasonInvalidForNode = "InvalidForNode"
	// ReasonLoopbackSubnetExhausted: a VRFRouteConfiguration loopback's subnet has fewer host addresses than
	// nodes that need one (the failed node is the first left without address).
	ReasonLoopbackSubnetExhausted = "LoopbackSubnetExhausted"
)

// The controllers work on all objects at once, so each has a single work item.
var (
	snapshotRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "snapshot"}}
	rolloutRequest  = reconcile.Request{NamespacedName: types.NamespacedName{Name: "rollout"}}
)

// Options configure both controllers.
type Options struct {
	// Debounce is the delay between the first change of a burst and the snapshot (default 1 s).
	Debounce time.Duration
	// MaxUnavailable is how many nodes (number or percentage) may be updating at once (default 1).
	MaxUnavailable intstr.IntOrString
	// ProgressDeadline is how long a node may take to confirm its configuration (default 10 min).
	ProgressDeadline time.Duration
	// TopologyLabel, when set, groups nodes by this label's value; groups roll out one after another.
	TopologyLabel string
	// KeepRevisions is how many of the newest revisions pruning keeps, besides the target, the last good
	// revision and every revision a node still references (default 10).
	KeepRevisions int
	// NodeConfig are the operator-level inputs of every node's configuration.
	NodeConfig nodespec.Options
	// Metrics receives the rollout metrics (required).
	Metrics *metrics.Metrics
}

func (o Options) withDefaults() Options {
	if o.Debounce <= 0 {
		o.Debounce = time.Second
	}
	if o.MaxUnavailable.String() == "0" || o.MaxUnavailable.String() == "" {
		o.MaxUnavailable = intstr.FromInt32(1)
	}
	if o.ProgressDeadline <= 0 {
		o.ProgressDeadline = 10 * time.Minute
	}
	if o.KeepRevisions <= 0 {
		o.KeepRevisions = 10
	}
	return o
}
