// Package controllers holds the operator's reconcilers.
//
// ConfigReconciler snapshots every VRFRouteConfiguration, Layer2NetworkConfiguration and BGPPeering,
// debounced (Options.Debounce, 1 s by default: one snapshot Debounce after the first change of a burst),
// and creates a NetworkConfigRevision only when the snapshot's content hash differs from the newest
// revision's. Revisions are ordered by spec.sequence (newest + 1), never by hash: content A -> B -> A gives
// three revisions, the third with A's hash and the highest sequence. Comparing with the newest revision
// only also means a hash that failed is not retried until the content changes again.
//
// RolloutReconciler moves nodes to the target revision, the newest one that has not failed, in the
// order and pace of package rollout, writing each node's NodeNetworkConfig (package nodespec). A node
// failing the target (Ready=False with failedRevision = target, Degraded, or no confirmation within the
// progress deadline) or a revision that cannot be built for a node marks the revision Failed; the next
// older revision that has not failed becomes the target and every node carrying the failed revision is
// reverted at once (automatic rollback), with an Event and metrics. It also garbage-collects the
// configurations of deleted Nodes and prunes old revisions.
//
// MirrorStatusReconciler counts what the agents report in their NodeNetworkConfig's status.mirrors into the
// MirrorSelector status (activeNodes, condition Applied) and the MirrorTarget status (activeSelectors,
// activeNodes).
//
// Rollout settings, read from the target revision (the config controller copies them from the newest
// revision into each new one, so a pause holds across new revisions until it is lifted):
//
//	network.network-operator.io/paused: "true"          no new assignments (rollbacks still happen)
//	network.network-operator.io/max-unavailable: "10%"  overrides Options.MaxUnavailable
//
// e.g. `kubectl annotate ncr <target> network.network-operator.io/paused=true` and `...paused-` to resume.
package controllers
