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

// VRFRouteConfigurationSpec is one routing policy of a tenant VRF: which routes leak between the VRF and the
// cluster VRF, what is aggregated and which communities are set. Several VRFRouteConfigurations may name the same
// VRF; their route-map entries are ordered by Seq, which must differ between them.
// JSON-compatible with das-schiff network-operator's VRFRouteConfiguration.
type VRFRouteConfigurationSpec struct {
	// VRF is the name of the VRF. Interface names are derived from it ("vr.", "br.", "vx." + name), so it has at
	// most 12 bytes (15 - 3), lower-case letters, digits, '-' and '_'.
	// (A CEL size rule instead of maxLength: maxLength errors do not quote the value.)
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="size(self) <= 12",messageExpression="'VRF name ' + self + ' is longer than 12 bytes: interface names vr./br./vx. + name must fit 15 bytes'"
	VRF string `json:"vrf"`

	// VNI is the VRF's L3 VXLAN network identifier. Required for every VRF other than "default" and "cluster";
	// must be unique among all VRFs and Layer2 networks.
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

	// Community is a single BGP community set on exported routes (das-schiff compatibility; prefer Communities).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Community *string `json:"community,omitempty"`

	// Communities are BGP communities set on exported routes: standard "<0-65535>:<0-65535>", large
	// "<asn>:<nn>:<nn>" or a well-known name in FRR's spelling (e.g. no-export, no-advertise, local-AS, no-peer,
	// blackhole, graceful-shutdown, llgr-stale).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=64
	Communities []string `json:"communities,omitempty"`

	// MTU of the VRF's interfaces, 1000..9000. Default: the node's default.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=9000
	MTU *int32 `json:"mtu,omitempty"`

	// NodeSelector selects the nodes the VRF is configured on. Unset: all nodes.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// AllCommunities returns Communities followed by Community when that is set and not already listed.
func (s *VRFRouteConfigurationSpec) AllCommunities() []string {
	out := append([]string(nil), s.Communities...)
	if s.Community != nil && *s.Community != "" {
		for _, c := range out {
			if c == *s.Community {
				return out
			}
		}
		out = append(out, *s.Community)
	}
	return out
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
