// Package metrics defines the operator's own Prometheus metrics: revisions and rollouts. The controllers'
// generic metrics (reconciles, queue depth) come from controller-runtime on the same registry.
package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "network_operator"

// Metrics are created once per process and handed to the controllers (no package-level state).
type Metrics struct {
	// RevisionSequence is the sequence of the newest NetworkConfigRevision.
	RevisionSequence prometheus.Gauge
	// TargetSequence is the sequence of the revision being rolled out (the newest that has not failed).
	TargetSequence prometheus.Gauge
	// RevisionsCreated counts revisions created from a changed snapshot.
	RevisionsCreated prometheus.Counter
	// Snapshots counts debounced snapshots by result: "created" or "unchanged".
	Snapshots *prometheus.CounterVec
	// RolloutNodes is the number of nodes per state for the target revision: updated, in_flight,
	// pending (including held), failed, not_ready.
	RolloutNodes *prometheus.GaugeVec
	// NodesUpdated counts node configurations written (reason "rollout" or "rollback").
	NodesUpdated *prometheus.CounterVec
	// RolloutFailures counts revisions marked Failed, by reason.
	RolloutFailures *prometheus.CounterVec
	// Rollbacks counts automatic rollbacks to the previous good revision.
	Rollbacks prometheus.Counter
	// RolloutDuration is the time from a revision's creation to its rollout being Done.
	RolloutDuration prometheus.Histogram
	// NodeConfigsCollected counts NodeNetworkConfigs deleted because their Node is gone.
	NodeConfigsCollected prometheus.Counter
	// RevisionsPruned counts superseded revisions deleted.
	RevisionsPruned prometheus.Counter
	// APIRequests counts the operator's requests to the API server by verb and resource (RequestKind), once
	// CountRequests wrapped the client configuration.
	APIRequests *prometheus.CounterVec
}

// New creates the metrics and registers them with reg (controller-runtime's metrics.Registry in the
// operator; a fresh registry in tests).
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		RevisionSequence: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "revision_sequence",
			Help: "Sequence of the newest NetworkConfigRevision."}),
		TargetSequence: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "rollout_target_sequence",
			Help: "Sequence of the revision being rolled out (newest not failed)."}),
		RevisionsCreated: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "revisions_created_total",
			Help: "NetworkConfigRevisions created from a changed snapshot."}),
		Snapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "snapshots_total",
			Help: "Debounced snapshots of the user resources, by result (created, unchanged)."}, []string{"result"}),
		RolloutNodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "rollout_nodes",
			Help: "Nodes per rollout state for the target revision."}, []string{"state"}),
		NodesUpdated: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "rollout_node_updates_total",
			Help: "NodeNetworkConfigs written, by reason (rollout, rollback)."}, []string{"reason"}),
		RolloutFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "rollout_failures_total",
			Help: "Revisions marked Failed, by reason."}, []string{"reason"}),
		Rollbacks: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "rollbacks_total",
			Help: "Automatic rollbacks to the previous good revision."}),
		RolloutDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "rollout_duration_seconds",
			Help:    "Time from a revision's creation until every node runs it.",
			Buckets: prometheus.ExponentialBuckets(0.5, 2, 14)}),
		NodeConfigsCollected: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "nodeconfigs_collected_total",
			Help: "NodeNetworkConfigs deleted because their Node no longer exists."}),
		RevisionsPruned: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "revisions_pruned_total",
			Help: "Superseded, unreferenced NetworkConfigRevisions deleted."}),
		APIRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "api_requests_total",
			Help: "Requests of the operator to the API server, by verb and resource (with subresource)."}, []string{"verb", "resource"}),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.RevisionSequence, m.TargetSequence, m.RevisionsCreated, m.Snapshots,
		m.RolloutNodes, m.NodesUpdated, m.RolloutFailures, m.Rollbacks, m.RolloutDuration, m.NodeConfigsCollected,
		m.RevisionsPruned, m.APIRequests} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("register operator metrics: %w", err)
	}
	return m, nil
}
