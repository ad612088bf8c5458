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

// Layer2NetworkConfigurationSpec is a layer-2 network (VLAN bridged into a VXLAN VNI) stretched over the selected
// nodes, optionally routed in a VRF through anycast gateways.
// JSON-compatible with das-schiff network-operator's Layer2NetworkConfiguration.
// +kubebuilder:validation:XValidation:rule="!has(self.anycastGateways) || size(self.anycastGateways) == 0 || (has(self.anycastMac) && size(self.anycastMac) > 0)",fieldPath=".anycastMac",messageExpression="'anycastGateways ' + self.anycastGateways.join(', ') + ' need an anycastMac'"
type Layer2NetworkConfigurationSpec struct {
	// ID is the VLAN id, 1..4094.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	ID int32 `json:"id"`

	// MTU of the network's interfaces, 1000..9000.
	// +optional
	// +kubebuilder:default=1500
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=9000
	MTU int32 `json:"mtu,omitempty"`

	// VNI is the VXLAN network identifier, 1..16777215, unique among all Layer2 networks and VRFs.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777215
	VNI int32 `json:"vni"`

	// AnycastMac is the MAC address of the anycast gateway, the same on every node. Required with AnycastGateways.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`
	AnycastMac string `json:"anycastMac,omitempty"`

	// AnycastGateways are the gateway addresses with prefix length (10.0.0.1/24) configured on the bridge.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=43
	AnycastGateways []string `json:"anycastGateways,omitempty"`

	// AdvertiseNeighbors advertises host routes for the neighbours learnt on the network.
	// +optional
	AdvertiseNeighbors bool `json:"advertiseNeighbors,omitempty"`

	// CreateMACVLANInterface creates a MACVLAN attach interface (das-schiff compatibility).
	// +optional
	CreateMACVLANInterface bool `json:"createMacVLANInterface,omitempty"`

	// NeighSuppression enables ARP/ND suppression on the VXLAN device. Default: enabled.
	// +optional
	NeighSuppression *bool `json:"neighSuppression,omitempty"`

	// DisableSegmentation turns segmentation offload off on the network's VLAN interface, so Linux never hands
	// packets larger than the MTU to it (needed e.g. for AF_PACKET users), as in das-schiff.
	// +optional
	DisableSegmentation bool `json:"disableSegmentation,omitempty"`

	// VRF the network is routed in: a VRF of some VRFRouteConfiguration, "default" or "cluster". Unset: not
	// routed. A network whose VRF does not exist yet is admitted but left out of the rollout (condition
	// Resolved=False) until a VRFRouteConfiguration defines it, so objects may be applied in any order.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`
	VRF string `json:"vrf,omitempty"`

	// NodeSelector selects the nodes the network is configured on. Unset: all nodes.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// Flooding is how the network's VXLAN reaches the other nodes: evpn (the default: BGP EVPN through FRR) or
	// static (head-end replication to peer VTEPs, no BGP needed).
	// +optional
	Flooding *Flooding `json:"flooding,omitempty"`

	// PodNamespaceSelector selects the namespaces whose PodNetworkConfigs may attach pods to this network
	// (checked at admission). Unset: none may; empty ({}): every namespace may. A change that leaves existing
	// PodNetworkConfigs out is admitted with a warning naming them; the operator frees their addresses there
	// (condition Allocated=False, NetworkNotAllowed) and the agents remove the interfaces.
	// +optional
	PodNamespaceSelector *metav1.LabelSelector `json:"podNamespaceSelector,omitempty"`
}

// FloodingMode is how a VXLAN sends broadcast, unknown-unicast and multicast traffic to the other VTEPs.
// +kubebuilder:validation:Enum=evpn;static
type FloodingMode string

const (
	// FloodingEVPN learns the remote VTEPs and MACs from BGP EVPN routes (FRR): the default.
	FloodingEVPN FloodingMode = "evpn"
	// FloodingStatic replicates to a fixed set of peer VTEPs (all-zero FDB entries), learning MACs from the data
	// path: no BGP needed.
	FloodingStatic FloodingMode = "static"
)

// Flooding says how a VXLAN reaches its peers. The same type, with the same meaning, serves a layer-2 network
// and a node Link of kind vxlan: one concept, two modes.
type Flooding struct {
	// Mode is evpn or static.
	// +optional
	// +kubebuilder:default=evpn
	Mode FloodingMode `json:"mode,omitempty"`
	// Peers (static only) are the peer VTEP addresses, IPv4 or IPv6, all of the fabric's VTEP family (a VXLAN
	// device sends from its node's VTEP address, over that family only). Unset with static: the VTEP address of
	// every other node the network is on, kept current as nodes come and go.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	Peers []string `json:"peers,omitempty"`
}

// Layer2NetworkConfigurationStatus is reserved for the operator's view of the resource.
type Layer2NetworkConfigurationStatus struct {
	// Conditions of the resource.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Layer2NetworkConfiguration is a layer-2 network stretched over nodes with VXLAN.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=layer2;l2
// +kubebuilder:printcolumn:name="VLAN",type=integer,JSONPath=`.spec.id`
// +kubebuilder:printcolumn:name="VNI",type=integer,JSONPath=`.spec.vni`
// +kubebuilder:printcolumn:name="VRF",type=string,JSONPath=`.spec.vrf`
// +kubebuilder:printcolumn:name="MTU",type=integer,JSONPath=`.spec.mtu`,priority=1
// +kubebuilder:printcolumn:name="Gateways",type=string,JSONPath=`.spec.anycastGateways`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Layer2NetworkConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Layer2NetworkConfigurationSpec   `json:"spec,omitempty"`
	Status Layer2NetworkConfigurationStatus `json:"status,omitempty"`
}

// Layer2NetworkConfigurationList is a list of Layer2NetworkConfiguration.
// +kubebuilder:object:root=true
type Layer2NetworkConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Layer2NetworkConfiguration `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Layer2NetworkConfiguration{}, &Layer2NetworkConfigurationList{})
}
