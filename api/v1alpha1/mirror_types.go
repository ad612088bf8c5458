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
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// MirrorTargetType is the GRE encapsulation of a mirror tunnel.
// +kubebuilder:validation:Enum=l2gre;l3gre
type MirrorTargetType string

const (
	// MirrorTargetL2GRE mirrors Ethernet frames in a GRE TAP tunnel.
	MirrorTargetL2GRE MirrorTargetType = "l2gre"
	// MirrorTargetL3GRE mirrors IP packets in a plain GRE tunnel.
	MirrorTargetL3GRE MirrorTargetType = "l3gre"
)

// MirrorDirection is the direction of the mirrored traffic on its source.
// +kubebuilder:validation:Enum=ingress;egress
type MirrorDirection string

const (
	MirrorIngress MirrorDirection = "ingress"
	MirrorEgress  MirrorDirection = "egress"
)

// Kinds a MirrorSelector may reference.
const (
	KindMirrorTarget               = "MirrorTarget"
	KindLayer2NetworkConfiguration = "Layer2NetworkConfiguration"
	KindVRFRouteConfiguration      = "VRFRouteConfiguration"
)

// MaxGREKey is the largest GRE key (32 bits); MaxPort the largest TCP/UDP/SCTP port.
const (
	MaxGREKey = 4294967295
	MaxPort   = 65535
)

// MirrorTargetSpec is where mirrored traffic goes: a GRE tunnel from every node that mirrors to a collector,
// living in a VRF, with the node's address of one of that VRF's loopbacks as source (das-schiff's meaning).
type MirrorTargetSpec struct {
	// Type is the encapsulation: l2gre (GRE TAP, Ethernet frames) or l3gre (GRE, IP packets).
	// +required
	Type MirrorTargetType `json:"type"`
	// DestinationIP is the collector's address, the remote end of the tunnel.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=39
	// +kubebuilder:validation:XValidation:rule="isIP(self)",messageExpression="'not an IP address: ' + self"
	DestinationIP string `json:"destinationIP"`
	// TunnelKey is the GRE key, 0..4294967295. Unset: no key.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	TunnelKey *int64 `json:"key,omitempty"`
	// DestinationVrf is the VRF the tunnel lives in: a VRF of some VRFRouteConfiguration (with a VNI).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`
	DestinationVrf string `json:"destinationVrf"`
	// SourceLoopback names a loopback in the loopbacks of DestinationVrf's VRFRouteConfiguration; the node's
	// address on it is the tunnel's source.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	SourceLoopback string `json:"sourceLoopback"`
}

// MirrorTargetStatus is the operator's view of the target.
type MirrorTargetStatus struct {
	// ActiveSelectors is the number of MirrorSelectors that reference the target.
	// +optional
	ActiveSelectors int32 `json:"activeSelectors,omitempty"`
	// ActiveNodes is the number of nodes where the tunnel carries copies: where at least one mirror into the
	// target runs (the nodes' NodeNetworkConfig status.mirrors).
	// +optional
	ActiveNodes int32 `json:"activeNodes,omitempty"`
	// Conditions of the resource: Resolved (the VRF and loopback exist) and Applied (every mirror into the
	// target runs on every node that has it, and on at least one).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MirrorTarget is a collector mirrored traffic is sent to over GRE.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mirrortarget
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Destination",type=string,JSONPath=`.spec.destinationIP`
// +kubebuilder:printcolumn:name="VRF",type=string,JSONPath=`.spec.destinationVrf`
// +kubebuilder:printcolumn:name="Selectors",type=integer,JSONPath=`.status.activeSelectors`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.activeNodes`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MirrorTarget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MirrorTargetSpec   `json:"spec,omitempty"`
	Status MirrorTargetStatus `json:"status,omitempty"`
}

// MirrorTargetList is a list of MirrorTarget.
// +kubebuilder:object:root=true
type MirrorTargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MirrorTarget `json:"items"`
}

// TrafficMatch selects packets; every field set must match, an empty match takes all traffic.
type TrafficMatch struct {
	// SrcPrefix is the source network (CIDR).
	// +optional
	// +kubebuilder:validation:MaxLength=43
	SrcPrefix *string `json:"srcPrefix,omitempty"`
	// DstPrefix is the destination network (CIDR).
	// +optional
	// +kubebuilder:validation:MaxLength=43
	DstPrefix *string `json:"dstPrefix,omitempty"`
	// SrcPort is the source port, 0..65535 (with Protocol tcp, udp or sctp).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	SrcPort *int32 `json:"srcPort,omitempty"`
	// DstPort is the destination port, 0..65535 (with Protocol tcp, udp or sctp).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	DstPort *int32 `json:"dstPort,omitempty"`
	// Protocol is the IP protocol: tcp, udp, sctp, icmp, icmpv6 or a number 0..255.
	// +optional
	// +kubebuilder:validation:MaxLength=8
	Protocol *string `json:"protocol,omitempty"`
}

// MirrorSelectorSpec says which traffic of a Layer2NetworkConfiguration or VRFRouteConfiguration is mirrored
// to a MirrorTarget, and in which direction (das-schiff's meaning).
type MirrorSelectorSpec struct {
	// TrafficMatch selects the packets; empty: all traffic of the source.
	// +optional
	TrafficMatch TrafficMatch `json:"trafficMatch,omitempty"`
	// MirrorTarget references the MirrorTarget (kind MirrorTarget, apiGroup unset or this group).
	// +required
	// +kubebuilder:validation:XValidation:rule="self.kind == 'MirrorTarget'",fieldPath=".kind",messageExpression="'mirrorTarget.kind ' + self.kind + ' is not MirrorTarget'"
	// +kubebuilder:validation:XValidation:rule="!has(self.apiGroup) || self.apiGroup == 'network.network-operator.io'",fieldPath=".apiGroup",messageExpression="'mirrorTarget.apiGroup ' + self.apiGroup + ' is not this API group: leave apiGroup out (or write network.network-operator.io)'"
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || self.__namespace__ == ''",fieldPath=".namespace",messageExpression="'mirrorTarget.namespace ' + self.__namespace__ + ': MirrorTargets are cluster-scoped, leave namespace out'"
	MirrorTarget corev1.TypedObjectReference `json:"mirrorTarget"`
	// MirrorSource references the Layer2NetworkConfiguration or VRFRouteConfiguration whose traffic is mirrored
	// (apiGroup unset or this group).
	// +required
	// +kubebuilder:validation:XValidation:rule="self.kind in ['Layer2NetworkConfiguration', 'VRFRouteConfiguration']",fieldPath=".kind",messageExpression="'mirrorSource.kind ' + self.kind + ' is neither Layer2NetworkConfiguration nor VRFRouteConfiguration'"
	// +kubebuilder:validation:XValidation:rule="!has(self.apiGroup) || self.apiGroup == 'network.network-operator.io'",fieldPath=".apiGroup",messageExpression="'mirrorSource.apiGroup ' + self.apiGroup + ' is not this API group: leave apiGroup out (or write network.network-operator.io)'"
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || self.__namespace__ == ''",fieldPath=".namespace",messageExpression="'mirrorSource.namespace ' + self.__namespace__ + ': the sources are cluster-scoped, leave namespace out'"
	MirrorSource corev1.TypedObjectReference `json:"mirrorSource"`
	// Direction is ingress or egress.
	// +required
	Direction MirrorDirection `json:"direction"`
}

// MirrorSelectorStatus is the operator's view of the selector.
type MirrorSelectorStatus struct {
	// ActiveNodes is the number of nodes where the mirror runs (the nodes' NodeNetworkConfig status.mirrors).
	// +optional
	ActiveNodes int32 `json:"activeNodes,omitempty"`
	// Conditions of the resource: Resolved (the references exist) and Applied (the mirror runs on every node
	// that has it, and on at least one).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MirrorSelector mirrors traffic of a layer-2 network or VRF to a MirrorTarget.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mirrorselector
// +kubebuilder:printcolumn:name="Direction",type=string,JSONPath=`.spec.direction`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.mirrorSource.name`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.mirrorTarget.name`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.activeNodes`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MirrorSelector struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MirrorSelectorSpec   `json:"spec,omitempty"`
	Status MirrorSelectorStatus `json:"status,omitempty"`
}

// MirrorSelectorList is a list of MirrorSelector.
// +kubebuilder:object:root=true
type MirrorSelectorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MirrorSelector `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MirrorTarget{}, &MirrorTargetList{}, &MirrorSelector{}, &MirrorSelectorList{})
}
