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

	"github.com/network-operator/network-operator/pkg/bfd"
)

// BFDProfile tunes BFD (RFC 5880) on BGP sessions, which then go down within the detection time of a failed peer
// or path instead of at the hold time. Omitted fields keep FRR bfdd's defaults: 300ms both ways, a peer down after
// 3 missed packets (0.9s), active, no echo.
type BFDProfile struct {
	// ReceiveInterval is the slowest rate at which the node wants the peer's packets: whole milliseconds,
	// 10ms..60s (e.g. "100ms").
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	ReceiveInterval *metav1.Duration `json:"receiveInterval,omitempty"`
	// TransmitInterval is the fastest rate at which the node sends its packets: whole milliseconds, 10ms..60s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	TransmitInterval *metav1.Duration `json:"transmitInterval,omitempty"`
	// DetectMultiplier: the peer is down after this many intervals without a packet, 2..255.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=255
	DetectMultiplier *int32 `json:"detectMultiplier,omitempty"`
	// PassiveMode waits for the peer to start BFD (for peers that may not run it).
	// +optional
	PassiveMode bool `json:"passiveMode,omitempty"`
	// EchoInterval turns on echo mode at this rate (single-hop IPv4 peers; the peer loops the node's packets back,
	// which tests the forwarding path): whole milliseconds, 10ms..60s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	EchoInterval *metav1.Duration `json:"echoInterval,omitempty"`
}

// Profile is p in pkg/bfd's terms, values unchecked (bfd.Profile.Validate names what is out of range). A nil p
// is bfdd's defaults.
func (p *BFDProfile) Profile() bfd.Profile {
	if p == nil {
		return bfd.Profile{}
	}
	out := bfd.Profile{Passive: p.PassiveMode}
	if p.ReceiveInterval != nil {
		out.ReceiveInterval = p.ReceiveInterval.Duration
	}
	if p.TransmitInterval != nil {
		out.TransmitInterval = p.TransmitInterval.Duration
	}
	if p.EchoInterval != nil {
		out.EchoInterval = p.EchoInterval.Duration
	}
	if p.DetectMultiplier != nil {
		out.DetectMultiplier = int(*p.DetectMultiplier)
	}
	return out
}
