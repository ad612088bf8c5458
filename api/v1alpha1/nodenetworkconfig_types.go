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

// NodeNetworkConfigSpec is the complete desired network state of one node, in the shape the node agent consumes.
// The operator generates it from a NetworkConfigRevision, its own underlay configuration and Node annotations.
type NodeNetworkConfigSpec struct {
	// Revision is the NetworkConfigRevision content hash this configuration was generated from.
	// +required
	Revision string `json:"revision"`

	// Underlay is the node's fabric-facing BGP configuration.
	// +required
	Underlay UnderlaySpec `json:"underlay"`

	// VRFs configured on the node, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	VRFs []NodeVRF `json:"vrfs,omitempty"`

	// Layer2s are the layer-2 networks on the node, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Layer2s []NodeLayer2 `json:"layer2s,omitempty"`

	// BGPPeers are the workload BGP sessions of the node, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	BGPPeers []NodeBGPPeer `json:"bgpPeers,omitempty"`

	// RoutingTables are the host tables exported to the cluster VRF (RoutingTable resources), sorted by table id.
	// +optional
	// +listType=map
	// +listMapKey=tableID
	RoutingTables []NodeRoutingTable `json:"routingTables,omitempty"`

	// Mirrors are the traffic mirrors whose source is on the node (MirrorSelector resources resolved with their
	// MirrorTarget), sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Mirrors []NodeMirror `json:"mirrors,omitempty"`

	// Links are the node's Links (bridges, VXLANs, existing interfaces), references resolved to interface names,
	// sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Links []NodeLink `json:"links,omitempty"`

	// DataPlane is what the eBPF router attaches to and how it forwards.
	// +optional
	DataPlane DataPlaneSpec `json:"dataplane,omitempty"`

	// HealthProbes must answer after the node applied a changed configuration, or the node fails the revision
	// (and the operator rolls it back), sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	HealthProbes []HealthProbe `json:"healthProbes,omitempty"`

	// ExpectedMapVersion is MapVersion() of this spec: the value the agent writes into the BPF version map. The
	// agent reports what it reads back in status.mapVersion.
	// +optional
	ExpectedMapVersion string `json:"expectedMapVersion,omitempty"`
}

// HealthProbe is a TCP endpoint the node must reach, e.g. a gateway's or DNS server's address: a connection
// that opens is an answer.
type HealthProbe struct {
	// Name of the probe, in errors and status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Address is an IP address and TCP port ("192.0.2.53:53", "[2001:db8::53]:53").
	// +required
	// +kubebuilder:validation:MaxLength=64
	Address string `json:"address"`
}

// UnderlaySpec is the node's fabric-facing (default VRF) BGP-EVPN configuration. The underlay runs over IPv4,
// IPv6 or both (AddressFamilies); the VTEP address is of one family, the fabric's: a VXLAN device sends over one
// family, so every VTEP of the fabric is of it.
type UnderlaySpec struct {
	// ASN is the node's AS number.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967294
	ASN int64 `json:"asn"`
	// RouterID is the node's BGP router id: an IPv4 address (BGP's router id has 32 bits, in an IPv6-only fabric
	// too).
	// +required
	RouterID string `json:"routerID"`
	// VTEPAddress is the local VXLAN tunnel endpoint address, IPv4 or IPv6: the source of every VXLAN device of
	// the node and the next hop of its EVPN routes, announced into the underlay in its family's unicast address
	// family. A host address of the node (a loopback's), not link-local.
	// +required
	// +kubebuilder:validation:MaxLength=45
	VTEPAddress string `json:"vtepAddress"`
	// AddressFamilies are the unicast address families the underlay sessions exchange routes in (the VTEP
	// addresses of the nodes among them): IPv4, IPv6, or both for a dual-stack underlay. They must include the
	// VTEP address's family. Empty: that family alone. A numbered neighbour carries its own family (a dual-stack
	// underlay has a session per family); an unnumbered one every family (IPv4 routes over IPv6 link-local
	// sessions take IPv6 next hops, RFC 8950).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	AddressFamilies []IPFamily `json:"addressFamilies,omitempty"`
	// Interfaces are the uplinks towards the fabric (BGP unnumbered sessions run on them).
	// +optional
	// +listType=atomic
	Interfaces []string `json:"interfaces,omitempty"`
	// Neighbors are the underlay BGP neighbours.
	// +optional
	// +listType=atomic
	Neighbors []UnderlayNeighbor `json:"neighbors,omitempty"`
	// BFD runs BFD with these settings on every underlay session; absent: no BFD.
	// +optional
	BFD *BFDProfile `json:"bfd,omitempty"`
}

// UnderlayNeighbor is one underlay BGP neighbour: reached over an interface (unnumbered: the session runs on the
// interface's IPv6 link-local addresses), at an address (numbered, IPv4 or IPv6), or at an IPv6 link-local address
// on an interface (both set).
// +kubebuilder:validation:XValidation:rule="has(self.interface) || has(self.address)",message="an underlay neighbour needs an interface (unnumbered), an address (numbered), or both (an IPv6 link-local address and its interface)"
type UnderlayNeighbor struct {
	// Interface alone is an unnumbered session on it; with an IPv6 link-local Address it is the interface that
	// address is on.
	// +optional
	// +kubebuilder:validation:MaxLength=15
	Interface string `json:"interface,omitempty"`
	// Address for a numbered session: IPv4 or IPv6, without zone (a link-local IPv6 address needs Interface).
	// +optional
	// +kubebuilder:validation:MaxLength=45
	Address string `json:"address,omitempty"`
	// RemoteASN is a number, "internal" or "external".
	// +required
	RemoteASN string `json:"remoteASN"`
}

// NodeVRF is one VRF on the node.
type NodeVRF struct {
	// Name of the VRF (at most MaxVRFNameLen bytes).
	// +required
	Name string `json:"name"`
	// ID is the VRF's id in the BPF maps (vrf_table key, iface_table value, vrf_counters index): MinVRFID..MaxVRFID;
	// 0 is "unassigned".
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4095
	ID int32 `json:"id"`
	// TableID is the kernel routing table of the VRF.
	// +required
	// +kubebuilder:validation:Minimum=1
	TableID int32 `json:"tableID"`
	// VNI is the L3 VNI (0 for VRFs without one, e.g. "default").
	// +optional
	VNI int32 `json:"vni,omitempty"`
	// RouteTargets for import and export.
	// +optional
	// +listType=atomic
	RouteTargets []string `json:"routeTargets,omitempty"`
	// MTU of the VRF's interfaces (0: the node's default).
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// Leaks are the route leaking policies between this VRF and the cluster VRF, one per VRFRouteConfiguration,
	// sorted by Seq.
	// +optional
	// +listType=atomic
	Leaks []VRFLeak `json:"leaks,omitempty"`
	// Aggregates announced from the VRF, sorted.
	// +optional
	// +listType=atomic
	Aggregates []string `json:"aggregates,omitempty"`
	// SBRPrefixes are source networks whose traffic is sent straight into this VRF (source-based routing: one
	// policy rule "from <prefix> lookup <TableID>" each), sorted, from all VRFRouteConfigurations of the VRF.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MaxLength=43
	SBRPrefixes []string `json:"sbrPrefixes,omitempty"`
	// Loopbacks are loopback interfaces of the VRF with an address allocated per node from their subnet, sorted by
	// name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Loopbacks []NodeLoopback `json:"loopbacks,omitempty"`
}

// NodeLoopback is a loopback interface inside a VRF (VRFRouteConfiguration.spec.loopbacks).
type NodeLoopback struct {
	// Name of the interface (at most 15 bytes).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Name string `json:"name"`
	// Subnet the node's address is allocated from (CIDR, network address).
	// +required
	// +kubebuilder:validation:MaxLength=43
	Subnet string `json:"subnet"`
	// Address is the node's host address in Subnet ("10.0.0.3/32"); empty until the operator allocates one.
	// +optional
	// +kubebuilder:validation:MaxLength=43
	Address string `json:"address,omitempty"`
}

// NodeRoutingTable is a host routing table exported to the cluster VRF: the agent puts kernel table TableID in a
// VRF device Name, redistributes its kernel routes into BGP and imports them into the cluster VRF.
type NodeRoutingTable struct {
	// Name of the VRF device: "taas.<tableID>".
	// +required
	// +kubebuilder:validation:MaxLength=15
	Name string `json:"name"`
	// TableID is the kernel routing table.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	TableID int64 `json:"tableID"`
}

// NodeMirror is one MirrorSelector on the node: the traffic of a layer-2 network or VRF, matched and in one
// direction, copied into a GRE tunnel to a collector.
type NodeMirror struct {
	// Name of the MirrorSelector.
	// +required
	Name string `json:"name"`
	// Layer2 is the NodeLayer2 (by name) whose traffic is mirrored; exactly one of Layer2 and VRF is set.
	// +optional
	Layer2 string `json:"layer2,omitempty"`
	// VRF is the NodeVRF (by name) whose traffic is mirrored; exactly one of Layer2 and VRF is set.
	// +optional
	VRF string `json:"vrf,omitempty"`
	// Direction is ingress or egress.
	// +required
	Direction MirrorDirection `json:"direction"`
	// Match selects the packets; empty: all.
	// +optional
	Match TrafficMatch `json:"match,omitempty"`
	// Target is the tunnel the copies are sent into.
	// +required
	Target NodeMirrorTarget `json:"target"`
}

// NodeMirrorTarget is a GRE tunnel to a collector (a MirrorTarget resolved for the node).
type NodeMirrorTarget struct {
	// Name of the MirrorTarget.
	// +required
	Name string `json:"name"`
	// Type is l2gre (GRE TAP) or l3gre.
	// +required
	Type MirrorTargetType `json:"type"`
	// DestinationIP is the collector's address.
	// +required
	DestinationIP string `json:"destinationIP"`
	// Key is the GRE key. Unset: none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	Key *int64 `json:"key,omitempty"`
	// VRF (a NodeVRF name) the tunnel lives in.
	// +required
	VRF string `json:"vrf"`
	// SourceLoopback is the NodeLoopback of VRF whose address is the tunnel's source.
	// +required
	SourceLoopback string `json:"sourceLoopback"`
}

// VRFLeak is the route-map entry generated from one VRFRouteConfiguration.
type VRFLeak struct {
	// Source is the name of the VRFRouteConfiguration.
	// +required
	Source string `json:"source"`
	// Seq is the route-map sequence.
	// +required
	Seq int32 `json:"seq"`
	// Import: routes of the VRF leaked into the cluster VRF.
	// +optional
	// +listType=atomic
	Import []NodePrefixItem `json:"import,omitempty"`
	// Export: routes of the cluster VRF leaked into the VRF.
	// +optional
	// +listType=atomic
	Export []NodePrefixItem `json:"export,omitempty"`
	// Communities set on exported routes, one community each.
	// +optional
	// +listType=atomic
	Communities []string `json:"communities,omitempty"`
	// AdditiveCommunities keeps the communities routes already have ("set community ... additive"); false
	// replaces them.
	// +optional
	AdditiveCommunities bool `json:"additiveCommunities,omitempty"`
}

// NodePrefixItem is a prefix-list entry with its sequence number resolved (PrefixItem.EffectiveSeq).
type NodePrefixItem struct {
	// CIDR (network address).
	CIDR string `json:"cidr"`
	// Seq in the prefix-list.
	Seq int64 `json:"seq"`
	// GE is the minimum prefix length matched.
	// +optional
	GE *int32 `json:"ge,omitempty"`
	// LE is the maximum prefix length matched.
	// +optional
	LE *int32 `json:"le,omitempty"`
	// Action is permit or deny.
	Action PrefixAction `json:"action"`
}

// NodeLayer2 is one layer-2 network on the node.
type NodeLayer2 struct {
	// Name of the Layer2NetworkConfiguration.
	// +required
	Name string `json:"name"`
	// VLAN id.
	// +required
	VLAN int32 `json:"vlan"`
	// VNI of the network.
	// +required
	VNI int32 `json:"vni"`
	// MTU of the network's interfaces.
	// +required
	MTU int32 `json:"mtu"`
	// VRF the network is routed in ("" = not routed).
	// +optional
	VRF string `json:"vrf,omitempty"`
	// AnycastMAC of the gateway.
	// +optional
	AnycastMAC string `json:"anycastMac,omitempty"`
	// AnycastGateways are the gateway addresses with prefix length.
	// +optional
	// +listType=atomic
	AnycastGateways []string `json:"anycastGateways,omitempty"`
	// NeighSuppression enables ARP/ND suppression.
	// +optional
	NeighSuppression bool `json:"neighSuppression,omitempty"`
	// AdvertiseNeighbors advertises host routes of learnt neighbours.
	// +optional
	AdvertiseNeighbors bool `json:"advertiseNeighbors,omitempty"`
	// DisableSegmentation turns segmentation offload off on the network's VLAN interface.
	// +optional
	DisableSegmentation bool `json:"disableSegmentation,omitempty"`
	// Flooding is how the network's VXLAN reaches the other VTEPs, resolved for this node. Unset: BGP EVPN. Mode
	// static: head-end replication to exactly Peers (the listed peers, or the VTEP address of every other node the
	// network is on; none: the network is on this node only), no BGP.
	// +optional
	Flooding *Flooding `json:"flooding,omitempty"`
}

// NodeLink is one Link on the node: exactly one of Bridge, VXLAN and Unmanaged is set.
type NodeLink struct {
	// Name of the Link.
	// +required
	Name string `json:"name"`
	// InterfaceName on the node.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	InterfaceName string `json:"interfaceName"`
	// Bridge: the agent creates a bridge.
	// +optional
	Bridge *BridgeLink `json:"bridge,omitempty"`
	// VXLAN: the agent creates a VXLAN VTEP.
	// +optional
	VXLAN *NodeVXLANLink `json:"vxlan,omitempty"`
	// Unmanaged: the interface exists on the node; the agent never changes it.
	// +optional
	Unmanaged *UnmanagedLink `json:"unmanaged,omitempty"`
}

// NodeVXLANLink is a Link's VXLAN with its references resolved.
type NodeVXLANLink struct {
	// VNI of the VXLAN.
	// +required
	VNI int32 `json:"vni"`
	// Port is the UDP destination port.
	// +required
	Port int32 `json:"port"`
	// Device is the interface name of the Link the VXLAN sends over ("": none).
	// +optional
	Device string `json:"device,omitempty"`
	// Master is the interface name of the bridge Link the VXLAN is a port of ("": none).
	// +optional
	Master string `json:"master,omitempty"`
	// MTU of the VXLAN (0: not managed).
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// Flooding resolved for this node, as NodeLayer2.Flooding: unset is BGP EVPN, static lists every peer.
	// +optional
	Flooding *Flooding `json:"flooding,omitempty"`
}

// NodeBGPPeer is one workload BGP peering on the node.
type NodeBGPPeer struct {
	// Name of the BGPPeering.
	// +required
	Name string `json:"name"`
	// VRF the sessions run in.
	// +optional
	VRF string `json:"vrf,omitempty"`
	// RemoteASN of the workloads.
	// +required
	RemoteASN int64 `json:"remoteASN"`
	// ListenRanges accept sessions from any address within them (peeringVlan peerings: the Layer2 subnets).
	// +optional
	// +listType=atomic
	ListenRanges []string `json:"listenRanges,omitempty"`
	// Addresses of fixed peers (loopbackPeer peerings).
	// +optional
	// +listType=atomic
	Addresses []string `json:"addresses,omitempty"`
	// HoldTime of the sessions.
	// +optional
	HoldTime *metav1.Duration `json:"holdTime,omitempty"`
	// KeepaliveTime of the sessions.
	// +optional
	KeepaliveTime *metav1.Duration `json:"keepaliveTime,omitempty"`
	// MaximumPrefixes accepted per peer.
	// +optional
	MaximumPrefixes *int64 `json:"maximumPrefixes,omitempty"`
	// EnableBFD on the sessions.
	// +optional
	EnableBFD bool `json:"enableBFD,omitempty"`
	// BFD settings of the sessions (with EnableBFD; absent: bfdd's defaults).
	// +optional
	BFD *BFDProfile `json:"bfd,omitempty"`
	// Import: routes accepted from the peers.
	// +optional
	// +listType=atomic
	Import []NodePrefixItem `json:"import,omitempty"`
	// Export: routes announced to the peers.
	// +optional
	// +listType=atomic
	Export []NodePrefixItem `json:"export,omitempty"`
	// PasswordSecretRef is the Secret key with the session password; the agent reads the value.
	// +optional
	PasswordSecretRef *SecretKeyReference `json:"passwordSecretRef,omitempty"`
}

// InterfaceMode is what the eBPF router does with packets arriving on an interface.
// +kubebuilder:validation:Enum=route;redirect;fib;pass
type InterfaceMode string

const (
	// ModeRoute: FIB lookup in the interface's VRF table and redirect to the next hop.
	ModeRoute InterfaceMode = "route"
	// ModeRedirect: redirect every packet to RedirectTarget.
	ModeRedirect InterfaceMode = "redirect"
	// ModeFIB: FIB lookup in the table of the interface's own VRF device (main without one) and redirect to the
	// next hop: for interfaces of VRFs this configuration does not manage (das-schiff's skipVRFConfig, set up
	// by the provisioning). It takes no VRF; its packets are counted under VRF id 0.
	ModeFIB InterfaceMode = "fib"
	// ModePass: hand every packet to the kernel stack.
	ModePass InterfaceMode = "pass"
)

// AttachHook is where the eBPF router is attached.
// +kubebuilder:validation:Enum=auto;tc;xdp
type AttachHook string

const (
	// HookAuto: the agent picks (tcx, else legacy tc; XDP where the driver table says it is better).
	HookAuto AttachHook = "auto"
	// HookTC: tc ingress (tcx when the kernel has it, else clsact + cls_bpf).
	HookTC AttachHook = "tc"
	// HookXDP: XDP (native when the driver supports it, else generic).
	HookXDP AttachHook = "xdp"
)

// DataPlaneSpec is the eBPF router's configuration on the node.
type DataPlaneSpec struct {
	// Strict drops packets the router cannot forward instead of passing them to the kernel.
	// +optional
	Strict bool `json:"strict,omitempty"`
	// Interfaces the router is attached to, sorted by name and VLAN.
	// +optional
	// +listType=atomic
	Interfaces []DataPlaneInterface `json:"interfaces,omitempty"`
}

// DataPlaneInterface is one interface the eBPF router is attached to.
type DataPlaneInterface struct {
	// Name of the network interface (at most 15 bytes).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Name string `json:"name"`
	// VLAN matched on the interface (0: untagged).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4094
	VLAN int32 `json:"vlan,omitempty"`
	// VRF (a NodeVRF name) whose table routes packets from this interface (none for mode fib).
	// +optional
	VRF string `json:"vrf,omitempty"`
	// Mode is route, redirect, fib or pass.
	// +optional
	// +kubebuilder:default=route
	Mode InterfaceMode `json:"mode,omitempty"`
	// RedirectTarget is the egress interface for Mode redirect.
	// +optional
	RedirectTarget string `json:"redirectTarget,omitempty"`
	// Hook is auto, tc or xdp.
	// +optional
	// +kubebuilder:default=auto
	Hook AttachHook `json:"hook,omitempty"`
}

// AttachMode is how the agent actually attached the router to an interface.
type AttachMode string

const (
	AttachTCX        AttachMode = "tcx"
	AttachTCLegacy   AttachMode = "tc-clsact"
	AttachXDPNative  AttachMode = "xdp-native"
	AttachXDPGeneric AttachMode = "xdp-generic"
	AttachNone       AttachMode = "none"
)

// Condition types of NodeNetworkConfig.status.conditions.
const (
	// ConditionReady: the node applied spec.revision and the BPF version map reads back spec.expectedMapVersion.
	ConditionReady = "Ready"
	// ConditionDegraded: the node runs, but something is off (an interface could not be attached, the last apply
	// failed and the previous state is kept, ...).
	ConditionDegraded = "Degraded"
	// ConditionMirrorsApplied is True when every mirror in status.mirrors runs, False naming those left out.
	// A mirror left out does not make the node fail (Ready is not affected).
	ConditionMirrorsApplied = "MirrorsApplied"
)

// InterfaceStatus is the attach state of one data-plane interface.
type InterfaceStatus struct {
	// Name of the interface.
	Name string `json:"name"`
	// Mode the router is attached with.
	// +optional
	Mode AttachMode `json:"mode,omitempty"`
	// Error of the last attach attempt.
	// +optional
	Error string `json:"error,omitempty"`
}

// NodeNetworkConfigStatus is written by the node agent.
type NodeNetworkConfigStatus struct {
	// AppliedRevision is the last revision the node applied completely.
	// +optional
	AppliedRevision string `json:"appliedRevision,omitempty"`
	// FailedRevision is the last revision the node failed to apply (its previous state stays).
	// +optional
	FailedRevision string `json:"failedRevision,omitempty"`
	// MapVersion is the version the agent read back from the BPF version map.
	// +optional
	MapVersion string `json:"mapVersion,omitempty"`
	// Interfaces are the attach states, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Interfaces []InterfaceStatus `json:"interfaces,omitempty"`
	// LastError of the last failed apply ("" after a success).
	// +optional
	LastError string `json:"lastError,omitempty"`
	// LastUpdate is when the agent last wrote the status.
	// +optional
	LastUpdate *metav1.Time `json:"lastUpdate,omitempty"`
	// Mirrors say, per traffic mirror of the configuration the node runs, whether it copies traffic (sorted by
	// name). A mirror left out (a kernel without GRE, a source missing on the node) is no node failure: Ready
	// stays as it is, the condition MirrorsApplied turns False and names it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=1024
	Mirrors []NodeMirrorStatus `json:"mirrors,omitempty"`
	// Conditions: Ready, Degraded, MirrorsApplied (only while the node runs mirrors).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeMirrorStatus is the agent's report on one mirror of the configuration the node runs.
type NodeMirrorStatus struct {
	// Name of the mirror (the MirrorSelector).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Target is the MirrorTarget the copies go to.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Target string `json:"target,omitempty"`
	// Applied is true when the mirror's filters copy traffic into its tunnel on the node.
	// +required
	Applied bool `json:"applied"`
	// Reason, when not applied: NotSupported (the kernel lacks what the mirror needs, e.g. GRE), Invalid (it
	// cannot be built on this node, e.g. its source interface is missing) or ApplyFailed (the mirror step failed).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`
	// Message says why it is not applied.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// Reasons of a NodeMirrorStatus that is not applied.
const (
	MirrorReasonNotSupported = "NotSupported"
	MirrorReasonInvalid      = "Invalid"
	MirrorReasonApplyFailed  = "ApplyFailed"
)

// NodeNetworkConfig is the desired network state of one node (named like the node) and the agent's report.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=nnc
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.spec.revision`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.appliedRevision`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Failed",type=string,JSONPath=`.status.failedRevision`,priority=1
// +kubebuilder:printcolumn:name="MapVersion",type=string,JSONPath=`.status.mapVersion`,priority=1
// +kubebuilder:printcolumn:name="Mirrors",type=string,JSONPath=`.status.conditions[?(@.type=="MirrorsApplied")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodeNetworkConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeNetworkConfigSpec   `json:"spec,omitempty"`
	Status NodeNetworkConfigStatus `json:"status,omitempty"`
}

// NodeNetworkConfigList is a list of NodeNetworkConfig.
// +kubebuilder:object:root=true
type NodeNetworkConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeNetworkConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeNetworkConfig{}, &NodeNetworkConfigList{})
}
