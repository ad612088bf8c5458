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

// BGPPeeringVLAN names the Layer2NetworkConfiguration whose subnets workloads peer from (BGP listen range).
type BGPPeeringVLAN struct {
	// Name of the Layer2NetworkConfiguration.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// BGPPeeringLoopback lists workload loopback addresses the nodes peer with.
// +kubebuilder:validation:XValidation:rule="has(self.ips) && !has(self.ipAddresses)",messageExpression="has(self.ipAddresses) ? 'loopbackPeer.ipAddresses is now spelt ips, the name das-schiff uses: write ips: [' + self.ipAddresses.join(', ') + ']' : 'loopbackPeer needs ips: the workload loopback addresses to peer with'"
type BGPPeeringLoopback struct {
	// IPAddresses of the remote peers, one IPv4 and/or one IPv6 address in das-schiff's use. The JSON name is
	// das-schiff's "ips", the one stored form. Required (a CEL rule on the object, so the old spelling gets a
	// message saying what to write).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=39
	IPAddresses []string `json:"ips,omitempty"`

	// RenamedIPAddresses only catches the spelling "ipAddresses" this API used before it took das-schiff's
	// "ips": the schema refuses it, saying what to write. Never set.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=39
	RenamedIPAddresses []string `json:"ipAddresses,omitempty"`
}

// BGPPeeringSpec is a BGP session of the nodes with workloads: either dynamic (listen range) on a Layer2 network,
// or to fixed loopback addresses. Exactly one of PeeringVlan and LoopbackPeer is set.
// JSON-compatible with das-schiff network-operator's BGPPeering (the plain-text password is replaced by
// PasswordSecretRef).
// +kubebuilder:validation:XValidation:rule="has(self.peeringVlan) != has(self.loopbackPeer)",messageExpression="has(self.peeringVlan) ? 'exactly one of peeringVlan and loopbackPeer must be set, got both: peeringVlan ' + self.peeringVlan.name + ', loopbackPeer ' + (has(self.loopbackPeer.ips) ? self.loopbackPeer.ips.join(', ') : 'none') : 'exactly one of peeringVlan and loopbackPeer must be set, got neither'"
// +kubebuilder:validation:XValidation:rule="!has(self.holdTime) || !has(self.keepaliveTime) || !self.holdTime.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || !self.keepaliveTime.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || duration(self.keepaliveTime) <= duration(self.holdTime)",fieldPath=".keepaliveTime",messageExpression="'keepaliveTime ' + self.keepaliveTime + ' is longer than holdTime ' + self.holdTime"
type BGPPeeringSpec struct {
	// PeeringVlan: workloads on this Layer2 network may open sessions from any address of its subnets.
	// +optional
	PeeringVlan *BGPPeeringVLAN `json:"peeringVlan,omitempty"`

	// LoopbackPeer: the nodes open sessions to these workload loopback addresses.
	// +optional
	LoopbackPeer *BGPPeeringLoopback `json:"loopbackPeer,omitempty"`

	// RemoteASN is the workloads' AS number, 1..4294967294 (0 and 4294967295 are reserved).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967294
	RemoteASN int64 `json:"remoteASN"`

	// PasswordSecretRef names the Secret key holding the TCP-MD5 password. Only the reference is copied into
	// generated objects; the node agent reads the value.
	// +optional
	PasswordSecretRef *SecretKeyReference `json:"passwordSecretRef,omitempty"`

	// EnableBFD enables BFD on the sessions (with BFD's settings, or bfdd's defaults without them).
	// +optional
	EnableBFD bool `json:"enableBFD,omitempty"`

	// BFD tunes BFD on the sessions and turns it on (enableBFD is then implied).
	// +optional
	BFD *BFDProfile `json:"bfd,omitempty"`

	// MaximumPrefixes is the most prefixes accepted from one peer.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967295
	MaximumPrefixes *int64 `json:"maximumPrefixes,omitempty"`

	// HoldTime of the sessions, whole seconds, 3s..65535s (e.g. "90s"). Default: FRR's.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	HoldTime *metav1.Duration `json:"holdTime,omitempty"`

	// KeepaliveTime of the sessions, whole seconds, at least 1s and at most HoldTime. Default: FRR's.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	KeepaliveTime *metav1.Duration `json:"keepaliveTime,omitempty"`

	// Import lists the routes accepted from the peers.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Import []PrefixItem `json:"import,omitempty"`

	// Export lists the routes announced to the peers.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Export []PrefixItem `json:"export,omitempty"`

	// NodeSelector selects the nodes that peer. Unset: all nodes.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// BGPPeeringStatus is reserved for the operator's view of the resource.
type BGPPeeringStatus struct {
	// Conditions of the resource.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BGPPeering is a BGP session of the nodes with workloads.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=bgpp
// +kubebuilder:printcolumn:name="VLAN",type=string,JSONPath=`.spec.peeringVlan.name`
// +kubebuilder:printcolumn:name="Loopbacks",type=string,JSONPath=`.spec.loopbackPeer.ips`
// +kubebuilder:printcolumn:name="ASN",type=integer,JSONPath=`.spec.remoteASN`
// +kubebuilder:printcolumn:name="BFD",type=boolean,JSONPath=`.spec.enableBFD`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BGPPeering struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BGPPeeringSpec   `json:"spec,omitempty"`
	Status BGPPeeringStatus `json:"status,omitempty"`
}

// BGPPeeringList is a list of BGPPeering.
// +kubebuilder:object:root=true
type BGPPeeringList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BGPPeering `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BGPPeering{}, &BGPPeeringList{})
}
