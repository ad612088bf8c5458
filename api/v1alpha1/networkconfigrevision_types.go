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

package v1alpha1

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VRFRevision is one VRFRouteConfiguration in a revision snapshot.
type VRFRevision struct {
	// Name of the VRFRouteConfiguration.
	Name                      string `json:"name"`
	VRFRouteConfigurationSpec `json:",inline"`
}

// Layer2Revision is one Layer2NetworkConfiguration in a revision snapshot.
type Layer2Revision struct {
	// Name of the Layer2NetworkConfiguration.
	Name                           string `json:"name"`
	Layer2NetworkConfigurationSpec `json:",inline"`
}

// BGPRevision is one BGPPeering in a revision snapshot.
type BGPRevision struct {
	// Name of the BGPPeering.
	Name           string `json:"name"`
	BGPPeeringSpec `json:",inline"`
}

// RoutingTableRevision is one RoutingTable in a revision snapshot.
type RoutingTableRevision struct {
	// Name of the RoutingTable.
	Name             string `json:"name"`
	RoutingTableSpec `json:",inline"`
}

// MirrorTargetRevision is one MirrorTarget in a revision snapshot.
type MirrorTargetRevision struct {
	// Name of the MirrorTarget.
	Name             string `json:"name"`
	MirrorTargetSpec `json:",inline"`
}

// MirrorSelectorRevision is one MirrorSelector in a revision snapshot.
type MirrorSelectorRevision struct {
	// Name of the MirrorSelector.
	Name               string `json:"name"`
	MirrorSelectorSpec `json:",inline"`
}

// LinkRevision is one Link in a revision snapshot.
type LinkRevision struct {
	// Name of the Link.
	Name     string `json:"name"`
	LinkSpec `json:",inline"`
}

// NetworkConfigRevisionSpec is an immutable snapshot of every user resource, sorted by name.
//
// The snapshot lists are stored without a schema: their content was validated when the user resources were
// admitted, and repeating the per-item CEL rules over unbounded lists would exceed the API server's cost budget.
type NetworkConfigRevisionSpec struct {
	// Revision is the content hash (ContentHash) of the snapshot: it identifies the content, never the order.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	Revision string `json:"revision"`

	// Sequence increases by one with every new revision; revisions are ordered by it, never by hash.
	// +required
	// +kubebuilder:validation:Minimum=1
	Sequence int64 `json:"sequence"`

	// VRF snapshots the VRFRouteConfigurations, sorted by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	VRF []VRFRevision `json:"vrf,omitempty"`

	// Layer2 snapshots the Layer2NetworkConfigurations, sorted by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Layer2 []Layer2Revision `json:"layer2,omitempty"`

	// BGP snapshots the BGPPeerings, sorted by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	BGP []BGPRevision `json:"bgp,omitempty"`

	// RoutingTables snapshots the RoutingTables, sorted by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	RoutingTables []RoutingTableRevision `json:"routingTables,omitempty"`

	// MirrorTargets snapshots the MirrorTargets, sorted by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	MirrorTargets []MirrorTargetRevision `json:"mirrorTargets,omitempty"`

	// MirrorSelectors snapshots the MirrorSelectors, sorted by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	MirrorSelectors []MirrorSelectorRevision `json:"mirrorSelectors,omitempty"`

	// Links snapshots the Links, sorted by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Links []LinkRevision `json:"links,omitempty"`
}

// Sort orders the snapshot lists by name, the canonical order ContentHash expects.
func (s *NetworkConfigRevisionSpec) Sort() {
	slices.SortFunc(s.VRF, func(a, b VRFRevision) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Layer2, func(a, b Layer2Revision) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.BGP, func(a, b BGPRevision) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.RoutingTables, func(a, b RoutingTableRevision) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.MirrorTargets, func(a, b MirrorTargetRevision) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.MirrorSelectors, func(a, b MirrorSelectorRevision) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Links, func(a, b LinkRevision) int { return cmp.Compare(a.Name, b.Name) })
}

// ContentHash is the sha256 (hex) over the canonical JSON encoding of the snapshot lists, sorted by name. Revision
// and Sequence are not part of it. encoding/json writes struct fields in declaration order and map keys sorted, so
// equal content always gives the same hash. The receiver is not modified.
func (s *NetworkConfigRevisionSpec) ContentHash() (string, error) {
	c := NetworkConfigRevisionSpec{
		VRF:    slices.Clone(s.VRF),
		Layer2: slices.Clone(s.Layer2),
		BGP:    slices.Clone(s.BGP),

		RoutingTables:   slices.Clone(s.RoutingTables),
		MirrorTargets:   slices.Clone(s.MirrorTargets),
		MirrorSelectors: slices.Clone(s.MirrorSelectors),
		Links:           slices.Clone(s.Links),
	}
	c.Sort()
	// Empty and nil lists must hash alike. The kinds added later are left out when empty, so content without
	// them keeps the hash it had before they existed.
	content := struct {
		Version         string                   `json:"v"`
		VRF             []VRFRevision            `json:"vrf"`
		Layer2          []Layer2Revision         `json:"layer2"`
		BGP             []BGPRevision            `json:"bgp"`
		RoutingTables   []RoutingTableRevision   `json:"routingTables,omitempty"`
		MirrorTargets   []MirrorTargetRevision   `json:"mirrorTargets,omitempty"`
		MirrorSelectors []MirrorSelectorRevision `json:"mirrorSelectors,omitempty"`
		Links           []LinkRevision           `json:"links,omitempty"`
	}{"revision/v1", nonNil(c.VRF), nonNil(c.Layer2), nonNil(c.BGP), c.RoutingTables, c.MirrorTargets, c.MirrorSelectors, c.Links}
	data, err := json.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("encode revision content: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// RevisionPhase is the rollout state of a NetworkConfigRevision.
// +kubebuilder:validation:Enum=Pending;Rolling;Done;Failed;Superseded
type RevisionPhase string

const (
	// RevisionPending: created, rollout not started.
	RevisionPending RevisionPhase = "Pending"
	// RevisionRolling: nodes are being updated.
	RevisionRolling RevisionPhase = "Rolling"
	// RevisionDone: every selected node applied the revision.
	RevisionDone RevisionPhase = "Done"
	// RevisionFailed: a node failed to apply it; the rollout stopped (Status.FailedNode says where).
	RevisionFailed RevisionPhase = "Failed"
	// RevisionSuperseded: a newer revision replaced it before it finished.
	RevisionSuperseded RevisionPhase = "Superseded"
)

// NetworkConfigRevisionStatus is the rollout progress of a revision.
type NetworkConfigRevisionStatus struct {
	// Phase of the rollout.
	// +optional
	Phase RevisionPhase `json:"phase,omitempty"`
	// Total is the number of nodes the revision is rolled out to.
	// +optional
	Total int32 `json:"total"`
	// Updated is the number of nodes that applied the revision.
	// +optional
	Updated int32 `json:"updated"`
	// Pending is the number of nodes that have not applied it yet.
	// +optional
	Pending int32 `json:"pending"`
	// Failed is the number of nodes that reported a failure for it.
	// +optional
	Failed int32 `json:"failed"`
	// FailedNode is the first node that failed to apply the revision.
	// +optional
	FailedNode string `json:"failedNode,omitempty"`
	// Message explains the phase, e.g. the failed node's error.
	// +optional
	Message string `json:"message,omitempty"`
	// Time of the last phase change.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// Conditions of the revision.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NetworkConfigRevision is an operator-generated snapshot of all user network resources and its rollout state.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ncr
// +kubebuilder:printcolumn:name="Seq",type=integer,JSONPath=`.spec.sequence`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.spec.revision`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=`.status.updated`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.total`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`
// +kubebuilder:printcolumn:name="FailedNode",type=string,JSONPath=`.status.failedNode`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NetworkConfigRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NetworkConfigRevisionSpec   `json:"spec,omitempty"`
	Status NetworkConfigRevisionStatus `json:"status,omitempty"`
}

// NetworkConfigRevisionList is a list of NetworkConfigRevision.
// +kubebuilder:object:root=true
type NetworkConfigRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NetworkConfigRevision `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NetworkConfigRevision{}, &NetworkConfigRevisionList{})
}
