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
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VRFRouteConfigurationSpec is one routing policy of a tenant VRF: which routes leak between the VRF and the
// cluster VRF, what is aggregated and which communities are set. Several VRFRouteConfigurations may name the same
// VRF; their route-map entries are ordered by Seq, which must differ between them.
// JSON-compatible with das-schiff network-operator's VRFRouteConfiguration (see docs/migrating-from-das-schiff.md).
// +kubebuilder:validation:XValidation:rule="self.vrf in ['default', 'cluster'] || has(self.vni)",fieldPath=".vni",messageExpression="'VRF ' + self.vrf + ' needs its L3 VNI: write spec.vni (1..16777215, the same in every VRFRouteConfiguration of the VRF; das-schiff v0.2 read it from the node vnimap file)'"
type VRFRouteConfigurationSpec struct {
	// VRF is the name of the VRF. Interface names are derived from it ("vr.", "br.", "vx." + name), so it has at
	// most 12 bytes (15 - 3): letters (either case, as Linux and FRR allow), digits, '-' and '_'.
	// (A CEL size rule instead of maxLength: maxLength errors do not quote the value.)
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="size(self) <= 12",messageExpression="'VRF name ' + self + ' is longer than 12 bytes: interface names vr./br./vx. + name must fit 15 bytes'"
	VRF string `json:"vrf"`

	// VNI is the VRF's L3 VXLAN network identifier. Required for every VRF other than "default" and "cluster"
	// (das-schiff v0.2 took a missing one from the node's vnimap file; the operator has none, so it is refused at
	// admission); must be unique among all VRFs and Layer2 networks.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777215
	VNI *int32 `json:"vni,omitempty"`

	// RouteTarget is the EVPN route target, "<asn>:<nn>" or "<ipv4>:<nn>". Default: derived from ASN and VNI.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]{1,10}|[0-9]{1,3}(\.[0-9]{1,3}){3}):[0-9]{1,10}$`
	RouteTarget *string `json:"routeTarget,omitempty"`

	// Import lists the routes of this VRF imported (leaked) into the cluster VRF.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Import []PrefixItem `json:"import,omitempty"`

	// Export lists the routes of the cluster VRF exported (leaked) into this VRF.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Export []PrefixItem `json:"export,omitempty"`

	// Aggregate lists networks announced as aggregates (network addresses).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=43
	Aggregate []string `json:"aggregate,omitempty"`

	// Seq is the sequence of the generated route-map entries, 1..65534 (65535 is the generated default deny).
	// Unique per VRF across all VRFRouteConfigurations.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65534
	Seq int32 `json:"seq"`

	// Community is BGP communities set on exported routes (das-schiff compatibility; prefer Communities). Like
	// every Communities entry it may hold several space-separated communities and the word "additive".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Community *string `json:"community,omitempty"`

	// Communities are BGP communities set on exported routes: standard "<0-65535>:<0-65535>", large
	// "<asn>:<nn>:<nn>" or a well-known name in FRR's spelling (e.g. no-export, no-advertise, local-AS, no-peer,
	// blackhole, graceful-shutdown, llgr-stale). An entry may list several, separated by spaces, as FRR's
	// "set community" does ("65000:1 65000:2"); the word "additive" among them keeps the communities a route
	// already has (without it they are replaced). SplitCommunities gives the single communities.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	Communities []string `json:"communities,omitempty"`

	// SBRPrefixes: traffic from these source prefixes is sent straight into this VRF (source-based routing, a
	// policy rule per prefix on the node), as in das-schiff. Network addresses, IPv4 or IPv6.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=43
	SBRPrefixes []string `json:"sbrPrefixes,omitempty"`

	// Loopbacks are loopback interfaces of the VRF whose address is allocated per node from a subnet (as in
	// das-schiff, e.g. the source of a MirrorTarget's GRE tunnel). Names are unique within the VRF.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Loopbacks []VRFLoopback `json:"loopbacks,omitempty"`

	// MTU of the VRF's interfaces, 1000..9000. Default: the node's default.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=9000
	MTU *int32 `json:"mtu,omitempty"`

	// NodeSelector selects the nodes the VRF is configured on. Unset: all nodes.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// VRFLoopback is a loopback interface inside a VRF whose address is allocated per node from Subnet.
type VRFLoopback struct {
	// Name of the loopback interface (e.g. "lo.mir"), at most 15 bytes (a Linux interface name).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Name string `json:"name"`
	// Subnet is the network (CIDR) each node's loopback address is allocated from.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",messageExpression="'not a CIDR (address/prefix-length): ' + self"
	Subnet string `json:"subnet"`
}

// CommunityAdditive is the word that, among the communities of an entry, keeps a route's existing communities.
const CommunityAdditive = "additive"

// AllCommunities returns the single communities of Communities and Community, in order and without repeats,
// and whether "additive" was among them (SplitCommunities).
func (s *VRFRouteConfigurationSpec) AllCommunities() ([]string, bool) {
	all := slices.Clone(s.Communities)
	if s.Community != nil {
		all = append(all, *s.Community)
	}
	return SplitCommunities(all)
}

// SplitCommunities splits space-separated community entries ("65000:1 65000:2 additive") into single
// communities, in order and without repeats, and reports whether the word "additive" was among them.
func SplitCommunities(entries []string) ([]string, bool) {
	var out []string
	additive := false
	for _, e := range entries {
		for _, c := range strings.Fields(e) {
			switch {
			case c == CommunityAdditive:
				additive = true
			case !slices.Contains(out, c):
				out = append(out, c)
			}
		}
	}
	return out, additive
}

// VRFRouteConfigurationStatus is reserved for the operator's view of the resource.
type VRFRouteConfigurationStatus struct {
	// Conditions of the resource.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VRFRouteConfiguration is a routing policy for a tenant VRF.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=vrf;vrfs
// +kubebuilder:printcolumn:name="VRF",type=string,JSONPath=`.spec.vrf`
// +kubebuilder:printcolumn:name="VNI",type=integer,JSONPath=`.spec.vni`
// +kubebuilder:printcolumn:name="Seq",type=integer,JSONPath=`.spec.seq`
// +kubebuilder:printcolumn:name="RouteTarget",type=string,JSONPath=`.spec.routeTarget`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VRFRouteConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VRFRouteConfigurationSpec   `json:"spec,omitempty"`
	Status VRFRouteConfigurationStatus `json:"status,omitempty"`
}

// VRFRouteConfigurationList is a list of VRFRouteConfiguration.
// +kubebuilder:object:root=true
type VRFRouteConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VRFRouteConfiguration `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VRFRouteConfiguration{}, &VRFRouteConfigurationList{})
}
