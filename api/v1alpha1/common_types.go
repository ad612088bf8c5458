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
	"math"

	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/bounds"
)

// IPFamily is an IP address family, spelt as Kubernetes spells it (core/v1 IPFamily).
// +kubebuilder:validation:Enum=IPv4;IPv6
type IPFamily string

// The IP address families.
const (
	IPv4 IPFamily = "IPv4"
	IPv6 IPFamily = "IPv6"
)

// Limits shared by the CRD schemas (markers), the validator (internal/validation) and the operator; the protocols'
// and the kernel's ranges are pkg/bounds', which the libraries under pkg/ use too.
const (
	// MaxHealthProbes bounds a node's health probes (NodeNetworkConfigSpec.HealthProbes' MaxItems): each is
	// dialled after every change.
	MaxHealthProbes = 16
	// MinVNI and MaxVNI bound a VXLAN network identifier (24 bits; 0 is reserved).
	MinVNI = bounds.MinVNI
	MaxVNI = bounds.MaxVNI
	// MinVLAN and MaxVLAN bound an 802.1Q VLAN id (0 and 4095 are reserved).
	MinVLAN = bounds.MinVLAN
	MaxVLAN = bounds.MaxVLAN
	// MinMTU and MaxMTU bound every MTU field.
	MinMTU = 1000
	MaxMTU = 9000
	// MinRouteMapSeq and MaxRouteMapSeq bound VRFRouteConfiguration.spec.seq (a route-map entry).
	MinRouteMapSeq = bounds.MinRouteMapSeq
	MaxRouteMapSeq = bounds.MaxRouteMapSeq
	// DefaultDenyRouteMapSeq is the route-map entry the node agent generates after all others: it denies the rest.
	DefaultDenyRouteMapSeq = bounds.DefaultDenyRouteMapSeq
	// MinPrefixSeq and MaxPrefixSeq bound an explicit prefix-list sequence number (FRR's range). 0 in a
	// PrefixItem means "unset": the entry's position decides (EffectiveSeq).
	MinPrefixSeq = 1
	MaxPrefixSeq = math.MaxUint32
	// MaxPrefixLen is the longest prefix length (IPv6) a ge/le may name.
	MaxPrefixLen = 128
	// MinASN and MaxASN bound an AS number, local or remote: 0 (RFC 7607) and 4294967295 (RFC 7300) are reserved.
	// FRR accepts 4294967295 with a warning; the operator never configures a reserved AS.
	MinASN = bounds.MinASN
	MaxASN = bounds.MaxASN
	// ASTrans is AS_TRANS (RFC 6793), the placeholder 4-byte speakers show 2-byte ones: never a real AS.
	ASTrans = 23456
	// MinMaximumPrefixes and MaxMaximumPrefixes bound BGPPeering.spec.maximumPrefixes (FRR's maximum-prefix).
	MinMaximumPrefixes = 1
	MaxMaximumPrefixes = math.MaxUint32
	// MinVRFID and MaxVRFID bound the BPF VRF id of a NodeVRF: the eBPF router counts per VRF id in an array of
	// limits.MaxVRFs entries (bpf/router.h); 0 counts the interfaces not in the tables.
	MinVRFID = 1
	MaxVRFID = limits.MaxVRFs - 1
	// MinTableID and MaxTableID bound a kernel routing table id (32 bits; 0 is "unspecified").
	MinTableID = bounds.MinTableID
	MaxTableID = bounds.MaxTableID
	// VRFTableIDBase + VNI is the routing table of a VRF with a VNI: the rule operator and standalone agent share,
	// so a node keeps its tables when it moves between them. MainTableID is the kernel's main table, used by the
	// VRFs without a VNI ("default", "cluster").
	VRFTableIDBase = 1_000_000_000
	MainTableID    = 254
	// MaxInterfaceNameLen is the kernel's IFNAMSIZ-1: the longest network interface name.
	MaxInterfaceNameLen = bounds.MaxInterfaceNameLen
	// InterfacePrefixLen is the length of every prefix the node agent puts before a VRF or network name to name
	// its interfaces: "vr." (VRF device), "br." (bridge), "vx." (VXLAN device), "lo." (loopback). All are 3
	// bytes, so a VRF name may have at most 15-3 = 12 bytes.
	InterfacePrefixLen = 3
	// MaxVRFNameLen is the longest VRF name: InterfacePrefixLen + name must fit MaxInterfaceNameLen.
	MaxVRFNameLen = MaxInterfaceNameLen - InterfacePrefixLen
	// MinHoldTimeSeconds is the smallest BGP hold time (RFC 4271: 0 or at least 3 seconds; 0 is not offered).
	MinHoldTimeSeconds = bounds.MinHoldTimeSeconds
	// MaxHoldTimeSeconds is the largest BGP hold time (16-bit field).
	MaxHoldTimeSeconds = bounds.MaxHoldTimeSeconds
	// MaxFloodPeers is the most peer VTEPs one VXLAN floods to in static mode (Flooding.Peers, listed or resolved):
	// head-end replication sends one copy of every broadcast per peer.
	MaxFloodPeers = 256
)

// Interface name prefixes derived from VRF and network names (see InterfacePrefixLen).
const (
	VRFDevicePrefix = "vr."
	BridgePrefix    = "br."
	VXLANPrefix     = "vx."
	LoopbackPrefix  = "lo."
	// L2BridgePrefix and L2VXLANPrefix name a layer-2 network's bridge and VXLAN after its VLAN id (at most 4
	// digits); they are longer than the VRF prefixes so a VRF called "100" never collides with VLAN 100.
	L2BridgePrefix = "l2br."
	L2VXLANPrefix  = "l2vx."
)

// Prefixes of the node agent's other interface names: the veth pair of a VRF (VethDefaultPrefix in the default VRF,
// VethVRFPrefix in the VRF), a layer-2 network's 802.1Q port on the trunk and a MirrorTarget's tunnel.
const (
	VethDefaultPrefix  = "df."
	VethVRFPrefix      = "vf."
	L2VLANPrefix       = "vl."
	MirrorTunnelPrefix = "gm."
)

// AgentInterfacePrefixes are the prefixes of every interface name the node agent derives from other objects; a
// Link's interfaceName starts with none of them, so the two never collide.
func AgentInterfacePrefixes() []string {
	return []string{VRFDevicePrefix, BridgePrefix, VXLANPrefix, LoopbackPrefix, L2BridgePrefix, L2VXLANPrefix,
		VethDefaultPrefix, VethVRFPrefix, L2VLANPrefix, RoutingTablePrefix, MirrorTunnelPrefix}
}

// VRF names that exist without a VRFRouteConfiguration: the node's main table and the operator's cluster VRF.
const (
	DefaultVRFName = "default"
	ClusterVRFName = "cluster"
)

// PrefixAction says whether a prefix-list entry permits or denies the routes it matches.
// +kubebuilder:validation:Enum=permit;deny
type PrefixAction string

const (
	PrefixActionPermit PrefixAction = "permit"
	PrefixActionDeny   PrefixAction = "deny"
)

// PrefixItem is one prefix-list entry: routes inside CIDR whose prefix length is within [ge, le] match.
// JSON-compatible with das-schiff network-operator's VrfRouteConfigurationPrefixItem.
//
// The schema only checks that CIDR parses. Network address, ge/le bounds and unique sequence numbers are checked by
// the admission webhook (internal/validation): a CEL message naming the offending number or the corrected network
// needs string() conversions, which the API server's cost estimator counts as unbounded and refuses.
type PrefixItem struct {
	// CIDR is the network the entry matches, as a network address (10.0.0.0/8, not 10.0.0.1/8).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",messageExpression="'not a CIDR (address/prefix-length): ' + self"
	CIDR string `json:"cidr"`

	// Seq is the entry's sequence number in the generated prefix-list. Unset (0): the position in the list, see
	// EffectiveSeq. Sequence numbers must be unique within a list.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967295
	Seq int64 `json:"seq,omitempty"`

	// GE is the minimum prefix length to match: at least the CIDR's prefix length, at most the family's.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	GE *int32 `json:"ge,omitempty"`

	// LE is the maximum prefix length to match: at least GE and the CIDR's prefix length, at most the family's.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	LE *int32 `json:"le,omitempty"`

	// Action is permit or deny.
	// +required
	Action PrefixAction `json:"action"`
}

// EffectiveSeq is the sequence number the entry at index i of its list gets: Seq when set, else i+1 - das-schiff's
// rule ("if omitted will be list index"), so its resources render the same prefix-lists here.
func (p PrefixItem) EffectiveSeq(i int) int64 {
	if p.Seq != 0 {
		return p.Seq
	}
	return int64(i + 1)
}

// SecretKeyReference points at one key of a Secret. Only the reference travels through cluster-scoped objects;
// the node agent reads the value itself.
type SecretKeyReference struct {
	// Namespace of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key within the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}
