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

// KindLink is the kind of a node Link.
const KindLink = "Link"

// Limits of a Link's VXLAN.
const (
	// MinPort and MaxPort bound a UDP port.
	MinPort = 1
	// VXLANDefaultPort is the IANA VXLAN port, the default of vxlan.port.
	VXLANDefaultPort = 4789
)

// LinkSpec is one network interface on the selected nodes: a bridge or a VXLAN VTEP the node agent creates, or an
// interface the node already has (unmanaged) that the others refer to. node-network-operator's Link: the same
// names, except that a VXLAN floods by the Flooding of a layer-2 network (one concept, two modes) instead of one
// remoteIPAddress.
// +kubebuilder:validation:XValidation:rule="(has(self.bridge) ? 1 : 0) + (has(self.vxlan) ? 1 : 0) + (has(self.unmanaged) ? 1 : 0) == 1",message="exactly one of bridge, vxlan and unmanaged must be set"
type LinkSpec struct {
	// InterfaceName is the interface's name on the node (at most 15 bytes), unique per node among the Links.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="size(self) <= 15",messageExpression="'interface name ' + self + ' has more than 15 bytes, the longest name the kernel takes'"
	InterfaceName string `json:"interfaceName"`

	// NodeSelector selects the nodes the link is on. Unset: all nodes.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// Bridge makes the interface a bridge.
	// +optional
	Bridge *BridgeLink `json:"bridge,omitempty"`

	// VXLAN makes the interface a VXLAN VTEP.
	// +optional
	VXLAN *VXLANLink `json:"vxlan,omitempty"`

	// Unmanaged names an interface the node has already (e.g. its uplink): the agent never creates, changes or
	// deletes it; other Links refer to it as their device.
	// +optional
	Unmanaged *UnmanagedLink `json:"unmanaged,omitempty"`
}

// BridgeLink is a bridge; VXLAN Links (and the pods' interfaces) are its ports.
type BridgeLink struct {
	// MTU of the bridge, 1000..9000. Unset: the kernel's default, left as it is.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=9000
	MTU int32 `json:"mtu,omitempty"`
}

// VXLANLink is a VXLAN VTEP: its local address is the node's VTEP address (annotation
// network.network-operator.io/vtep-address, else the router id or, in a fabric whose VTEPs are IPv6, the Node's
// IPv6 InternalIP), so it runs over IPv4 or IPv6 as the fabric's VTEPs do.
type VXLANLink struct {
	// VNID is the VXLAN network identifier, 1..16777215.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777215
	VNID int32 `json:"vnid"`

	// Port is the UDP destination port. Default: 4789.
	// +optional
	// +kubebuilder:default=4789
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// Device is the Link (bridge or unmanaged) the VXLAN sends its packets over. Unset: the route to each peer
	// decides.
	// +optional
	Device *LinkReference `json:"device,omitempty"`

	// Master is the bridge Link the VXLAN is a port of.
	// +optional
	Master *LinkReference `json:"master,omitempty"`

	// MTU of the VXLAN, 1000..9000. Unset: the kernel's default, left as it is.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=9000
	MTU int32 `json:"mtu,omitempty"`

	// Flooding is how the VXLAN reaches the other VTEPs, with the meaning it has for a layer-2 network: static
	// floods to the listed peers, or to the VTEP address of every other node the Link is on (kept current as
	// nodes come and go), no BGP needed; evpn (the default) leaves it to BGP EVPN, for which the VXLAN needs a
	// master bridge.
	// +optional
	Flooding *Flooding `json:"flooding,omitempty"`
}

// UnmanagedLink marks an interface the agent does not manage.
type UnmanagedLink struct{}

// LinkReference names another Link.
type LinkReference struct {
	// Name of the Link.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Condition types and reasons of a Link: Resolved (ConditionResolved of the operator's controllers: its
// references exist) and Ready.
const (
	// LinkConditionReady is True when every node the Link is on applied a configuration with it and is Ready;
	// False names the nodes where that is not so yet (reason LinkReasonNotReady), or says that no node has the
	// Link (LinkReasonNoNodes).
	LinkConditionReady = "Ready"
	LinkReasonReady    = "Ready"
	LinkReasonNotReady = "NotReady"
	LinkReasonNoNodes  = "NoNodes"
)

// LinkStatus is the operator's view of a Link.
type LinkStatus struct {
	// MatchedNodes are the nodes whose configuration has the Link, sorted.
	// +optional
	// +listType=set
	MatchedNodes []string `json:"matchedNodes,omitempty"`
	// Conditions: Resolved, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Link is a network interface on selected nodes (node-network-operator's Link): a bridge, a VXLAN VTEP or an
// existing interface, referring to each other as device and master; created in dependency order, deleted in
// reverse.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Interface",type=string,JSONPath=`.spec.interfaceName`
// +kubebuilder:printcolumn:name="VNID",type=integer,JSONPath=`.spec.vxlan.vnid`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Nodes",type=string,JSONPath=`.status.matchedNodes`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Link struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LinkSpec   `json:"spec,omitempty"`
	Status LinkStatus `json:"status,omitempty"`
}

// LinkList is a list of Link.
// +kubebuilder:object:root=true
type LinkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Link `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Link{}, &LinkList{})
}
