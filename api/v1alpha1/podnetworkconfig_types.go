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

// Limits of PodNetworkConfig, shared by the CRD markers, the validator and the agent.
const (
	// MaxPodInterfaces bounds spec.interfaces.
	MaxPodInterfaces = 16
	// MaxPodRoutes bounds spec.routes.
	MaxPodRoutes = 64
	// MaxPodSysctls bounds spec.sysctls.
	MaxPodSysctls = 32
	// MaxPodTxQueueLen bounds spec.primary.txQueueLen.
	MaxPodTxQueueLen = 100000
	// MinPodMTU is the smallest MTU a pod interface may get (IPv4's minimum link MTU is 68, but IPv6 needs 1280;
	// below 576 nothing a CNF runs works).
	MinPodMTU = 576
	// DefaultPrimaryInterface is the primary interface's name in the pod (the main CNI's).
	DefaultPrimaryInterface = "eth0"
)

// PodInterfaceType is the kind of an additional pod interface.
// +kubebuilder:validation:Enum=veth;macvlan;vlan;bridge
type PodInterfaceType string

const (
	// PodInterfaceVeth is a veth pair: one end in the pod, the other a port of the network's bridge on the node,
	// so the pod joins the layer-2 network (and the eBPF router routes for it through the anycast gateway).
	PodInterfaceVeth PodInterfaceType = "veth"
	// PodInterfaceMACVLAN is a macvlan on the network's bridge on the node, moved into the pod.
	PodInterfaceMACVLAN PodInterfaceType = "macvlan"
	// PodInterfaceVLAN is an 802.1Q sub-interface, inside the pod, of another interface of the pod (Parent).
	PodInterfaceVLAN PodInterfaceType = "vlan"
	// PodInterfaceBridge is a bridge inside the pod whose ports are other interfaces of the pod (Ports).
	PodInterfaceBridge PodInterfaceType = "bridge"
)

// MACVLANMode is the mode of a macvlan interface.
// +kubebuilder:validation:Enum=bridge;private;vepa;passthru
type MACVLANMode string

const (
	MACVLANBridge   MACVLANMode = "bridge"
	MACVLANPrivate  MACVLANMode = "private"
	MACVLANVEPA     MACVLANMode = "vepa"
	MACVLANPassthru MACVLANMode = "passthru"
)

// PodNetworkConfigSpec is the network configuration the node agent applies, on the tenant's behalf, to the
// network namespace of every pod of the namespace that PodSelector selects. The pods need no capability: the
// agent does what NET_ADMIN would, and only what this resource says.
type PodNetworkConfigSpec struct {
	// PodSelector selects the pods of this namespace the configuration applies to. An empty selector selects
	// every pod of the namespace.
	// +required
	PodSelector metav1.LabelSelector `json:"podSelector"`

	// Primary tunes the pod's primary interface (the one the cluster's CNI created).
	// +optional
	Primary *PrimaryInterfaceTuning `json:"primary,omitempty"`

	// Interfaces are additional interfaces created in the pod, in dependency order (a vlan after its parent, a
	// bridge after its ports) and removed in reverse.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Interfaces []PodInterface `json:"interfaces,omitempty"`

	// Routes added in the pod's main routing table.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Routes []PodRoute `json:"routes,omitempty"`

	// Sysctls set in the pod's network namespace, from an allow-list (internal/validation.PodSysctlAllowed):
	// per-interface net.ipv4.conf.<if>.* and net.ipv6.conf.<if>.* keys, forwarding and a few per-namespace
	// knobs. Keys that would change the host are refused.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Sysctls []PodSysctl `json:"sysctls,omitempty"`
}

// PrimaryInterfaceTuning is what may be changed on the primary interface without touching the host.
type PrimaryInterfaceTuning struct {
	// Name of the primary interface in the pod.
	// +optional
	// +kubebuilder:default=eth0
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]*$`
	// +kubebuilder:validation:XValidation:rule="size(self) <= 15",messageExpression="'interface name ' + self + ' has more than 15 bytes, the longest name the kernel takes'"
	Name string `json:"name,omitempty"`
	// MTU of the primary interface, 576..9000. Lowering it needs no host change; raising it above the host
	// side's MTU is refused by the kernel's path, not by the agent, so keep it at or below the cluster MTU.
	// +optional
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=9000
	MTU *int32 `json:"mtu,omitempty"`
	// TxQueueLen of the primary interface.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	TxQueueLen *int32 `json:"txQueueLen,omitempty"`
}

// PodInterface is one additional interface of the pod.
type PodInterface struct {
	// Name of the interface in the pod, at most 15 bytes; not the primary interface's name, not lo, all or default
	// (the kernel's sysctl directories).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]*$`
	// +kubebuilder:validation:XValidation:rule="size(self) <= 15",messageExpression="'interface name ' + self + ' has more than 15 bytes, the longest name the kernel takes'"
	Name string `json:"name"`
	// Type is veth, macvlan, vlan or bridge.
	// +required
	Type PodInterfaceType `json:"type"`
	// Network (veth and macvlan) is the Layer2NetworkConfiguration the interface joins. Its
	// podNamespaceSelector must select this resource's namespace (checked at admission), and the pod's node
	// must be one of the network's nodes.
	// +optional
	Network string `json:"network,omitempty"`
	// MACVLANMode (macvlan) is the macvlan mode; default bridge.
	// +optional
	MACVLANMode MACVLANMode `json:"macvlanMode,omitempty"`
	// Parent (vlan) is the pod interface the VLAN sits on: the primary interface or another of Interfaces.
	// +optional
	Parent string `json:"parent,omitempty"`
	// VLAN (vlan) is the 802.1Q id, 1..4094.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4094
	VLAN int32 `json:"vlan,omitempty"`
	// Ports (bridge) are pod interfaces (of Interfaces) enslaved to the bridge.
	// +optional
	// +listType=set
	Ports []string `json:"ports,omitempty"`
	// MTU of the interface, 576..9000; default: the network's MTU (veth, macvlan), else the kernel's default.
	// +optional
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=9000
	MTU *int32 `json:"mtu,omitempty"`
	// Addresses the interface gets: one address per IP family per pod from the pools below, allocated by the
	// operator so that no two pods ever get the same one (status.allocations).
	// +optional
	Addresses *PodAddresses `json:"addresses,omitempty"`
}

// PodAddresses are the address pools of one pod interface. Each selected pod gets one address per pool family;
// the pools must lie in the network's subnets (its anycast gateways' prefixes) and may not overlap another
// PodNetworkConfig's pools on the same network, so addresses are never duplicated across pods or tenants. Without
// a subnet (vlan and bridge interfaces, a network without anycast gateways) a range is its own subnet.
type PodAddresses struct {
	// Ranges are CIDRs (10.40.0.64/27), at most one per IP family, every address of which is handed out: a range
	// in a network's subnet must not contain a gateway, the subnet's network address or its IPv4 broadcast address
	// (refused at admission). Without a subnet the range is the subnet: its addresses get the range's prefix
	// length, and its own network and IPv4 broadcast addresses are not handed out.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	Ranges []string `json:"ranges,omitempty"`
	// Static are single addresses (10.40.0.10), handed out before the ranges' in list order: with a selector that
	// matches one pod, that pod's fixed address. Each lies in a subnet of the network (not a gateway, network or
	// broadcast address) or, without a subnet, in the range of its family.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Static []string `json:"static,omitempty"`
}

// PodRoute is a route in the pod.
type PodRoute struct {
	// Destination is a CIDR, or "default" / "default6".
	// +required
	Destination string `json:"destination"`
	// Gateway is the next hop; unset: on-link via Interface.
	// +optional
	Gateway string `json:"gateway,omitempty"`
	// Interface is the pod interface the route leaves through (the primary interface or one of Interfaces).
	// +optional
	Interface string `json:"interface,omitempty"`
}

// PodSysctl is one sysctl of the pod's network namespace.
type PodSysctl struct {
	// Name in dotted form (net.ipv4.conf.net1.rp_filter).
	// +required
	Name string `json:"name"`
	// Value written.
	// +required
	Value string `json:"value"`
}

// PodAddressAllocation is one address the operator gave one pod's interface.
type PodAddressAllocation struct {
	// Pod is the pod's name, PodUID its UID (a re-created pod of the same name gets a new allocation).
	Pod    string `json:"pod"`
	PodUID string `json:"podUID"`
	// Interface is the pod interface (spec.interfaces[].name).
	Interface string `json:"interface"`
	// Address with the prefix length the interface gets (10.40.0.65/24).
	Address string `json:"address"`
}

// PodNetworkStatus is what the agent of the pod's node applied to one pod, or why not.
type PodNetworkStatus struct {
	// Name of the pod.
	Name string `json:"name"`
	// Node the pod runs on (the agent that reports it).
	Node string `json:"node"`
	// Applied is true when everything the spec asks for is in the pod.
	Applied bool `json:"applied"`
	// Interfaces applied in the pod, by name.
	// +optional
	// +listType=atomic
	Interfaces []string `json:"interfaces,omitempty"`
	// Reason and Message say why not (Applied false): NetworkNotAllowed, NetworkNotOnNode, NoAddress,
	// NotSupported (the kernel lacks the interface kind), ApplyFailed, PodNotRunning.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the spec generation applied.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// PodNetworkConfigStatus is written by the operator (allocations, conditions) and by the agents (pods: each
// agent its own node's pods).
type PodNetworkConfigStatus struct {
	// Allocations are the addresses given to pods, written by the operator only (server-side apply, field manager
	// network-operator): per selected pod, interface and pool family one, kept while the pod (by UID) stays selected.
	// +optional
	// +listType=atomic
	Allocations []PodAddressAllocation `json:"allocations,omitempty"`
	// Pods is, per selected pod, what was applied or why not.
	// +optional
	// +listType=map
	// +listMapKey=name
	Pods []PodNetworkStatus `json:"pods,omitempty"`
	// Conditions, written by the operator: Allocated (every selected pod has its addresses, or why not:
	// PoolExhausted, NetworkNotAllowed, PoolInvalid) and Applied (every selected, running pod has everything, as
	// its node's agent reports in Pods).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PodNetworkConfig is a tenant's network configuration of its pods (interfaces, addresses, routes, sysctls,
// MTU), applied by the node agent so that the pods need no NET_ADMIN.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=podnet
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodNetworkConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PodNetworkConfigSpec   `json:"spec,omitempty"`
	Status PodNetworkConfigStatus `json:"status,omitempty"`
}

// PodNetworkConfigList is a list of PodNetworkConfig.
// +kubebuilder:object:root=true
type PodNetworkConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodNetworkConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodNetworkConfig{}, &PodNetworkConfigList{})
}
