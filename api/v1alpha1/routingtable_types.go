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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Routing-table ("TaaS") limits: a RoutingTable becomes a VRF device "taas.<tableId>" bound to that kernel table,
// whose kernel routes are redistributed into BGP and imported into the cluster VRF (das-schiff v0.2's meaning).
const (
	// RoutingTablePrefix names the VRF of a RoutingTable: "taas." + tableId (at most 15 bytes with 10 digits).
	RoutingTablePrefix = "taas."
	// MinRoutingTableID and MaxRoutingTableID bound RoutingTable.spec.tableId: the kernel's 32-bit table ids
	// below the VRF tables (VRFTableIDBase + VNI) the operator assigns, so the two never collide.
	MinRoutingTableID = 1
	MaxRoutingTableID = VRFTableIDBase
	// The kernel's reserved tables (default, main, local): never a RoutingTable.
	DefaultTableID = 253
	LocalTableID   = 255
)

// RoutingTableSpec is a host routing table whose routes are exported to the cluster ("table as a service",
// das-schiff v0.2's RoutingTable): workloads on the host put routes into kernel table TableID, the node agent
// puts the table in a VRF "taas.<tableId>", redistributes its kernel routes into BGP and imports them into the
// cluster VRF.
type RoutingTableSpec struct {
	// TableID is the kernel routing table, 1..1000000000 except 253, 254 and 255 (the kernel's own), unique
	// among the RoutingTables.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:validation:XValidation:rule="self < 253 || self > 255",message="tableId 253, 254 and 255 are the kernel's tables (default, main, local): pick another"
	TableID int64 `json:"tableId"`
}

// VRFName is the VRF device the node agent creates for the table: "taas.<tableId>".
func (s RoutingTableSpec) VRFName() string { return RoutingTablePrefix + itoa(s.TableID) }

// RoutingTableStatus is reserved for the operator's view of the resource.
type RoutingTableStatus struct {
	// Conditions of the resource.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RoutingTable is a host routing table exported to the cluster VRF (das-schiff v0.2 "TaaS").
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=taas
// +kubebuilder:printcolumn:name="Table ID",type=integer,JSONPath=`.spec.tableId`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RoutingTable struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RoutingTableSpec   `json:"spec,omitempty"`
	Status RoutingTableStatus `json:"status,omitempty"`
}

// RoutingTableList is a list of RoutingTable.
// +kubebuilder:object:root=true
type RoutingTableList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RoutingTable `json:"items"`
}

func init() {
	SchemeBuilder.Register(&RoutingTable{}, &RoutingTableList{})
}
