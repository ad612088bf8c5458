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

package validation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func vrf(name string, mut func(*v1.VRFRouteConfigurationSpec)) *v1.VRFRouteConfiguration {
	o := &v1.VRFRouteConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VRFRouteConfigurationSpec{
			VRF: "tenant-a", VNI: ptr.To[int32](2001), RouteTarget: ptr.To("65000:2001"), Seq: 10,
			Import: []v1.PrefixItem{
				{CIDR: "10.10.0.0/16", LE: ptr.To[int32](24), Action: v1.PrefixActionPermit},
				{CIDR: "fd00:10::/48", GE: ptr.To[int32](56), LE: ptr.To[int32](64), Action: v1.PrefixActionPermit},
			},
			Export:      []v1.PrefixItem{{CIDR: "0.0.0.0/0", Action: v1.PrefixActionPermit, Seq: 5}},
			Aggregate:   []string{"10.10.0.0/16"},
			Communities: []string{"65000:100", "65000:1:2", "no-export"},
			MTU:         ptr.To[int32](9000),
			NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "node-role.kubernetes.io/worker", Operator: metav1.LabelSelectorOpExists},
			}},
		},
	}
	if mut != nil {
		mut(&o.Spec)
	}
	return o
}

func l2(name string, mut func(*v1.Layer2NetworkConfigurationSpec)) *v1.Layer2NetworkConfiguration {
	o := &v1.Layer2NetworkConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.Layer2NetworkConfigurationSpec{
			ID: 100, VNI: 100100, MTU: 1500, AnycastMac: "02:00:00:00:01:00",
			AnycastGateways: []string{"10.20.0.1/24", "fd00:20::1/64"}, VRF: "tenant-a",
		},
	}
	if mut != nil {
		mut(&o.Spec)
	}
	return o
}

func peering(name string, mut func(*v1.BGPPeeringSpec)) *v1.BGPPeering {
	o := &v1.BGPPeering{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.BGPPeeringSpec{
			PeeringVlan: &v1.BGPPeeringVLAN{Name: "l2-a"}, RemoteASN: 65100,
			HoldTime: &metav1.Duration{Duration: 90 * time.Second}, KeepaliveTime: &metav1.Duration{Duration: 30 * time.Second},
			MaximumPrefixes:   ptr.To[int64](100),
			PasswordSecretRef: &v1.SecretKeyReference{Namespace: "kube-system", Name: "bgp-auth", Key: "password"},
			Import:            []v1.PrefixItem{{CIDR: "10.20.0.0/24", GE: ptr.To[int32](32), LE: ptr.To[int32](32), Action: v1.PrefixActionPermit}},
		},
	}
	if mut != nil {
		mut(&o.Spec)
	}
	return o
}

func existing() *Snapshot {
	return &Snapshot{
		VRFRouteConfigurations: []v1.VRFRouteConfiguration{*vrf("vrf-a", nil)},
		Layer2Networks:         []v1.Layer2NetworkConfiguration{*l2("l2-a", nil)},
		BGPPeerings:            []v1.BGPPeering{*peering("bgp-a", nil)},
	}
}

// checkErrs asserts that errs has exactly one error per want entry, each containing all of its substrings.
func checkErrs(t *testing.T, errs field.ErrorList, want [][]string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n  %s", len(got), len(want), strings.Join(got, "\n  "))
	}
	used := make([]bool, len(got))
next:
	for _, w := range want {
		for i, g := range got {
			if used[i] {
				continue
			}
			ok := true
			for _, sub := range w {
				ok = ok && strings.Contains(g, sub)
			}
			if ok {
				used[i] = true
				continue next
			}
		}
		t.Errorf("no error contains all of %q; got:\n  %s", w, strings.Join(got, "\n  "))
	}
}

func TestValidateVRFRouteConfiguration(t *testing.T) {
	tests := []struct {
		name string
		obj  *v1.VRFRouteConfiguration
		snap *Snapshot
		want [][]string
	}{
		{name: "good", obj: vrf("x", nil)},
		{name: "good, same VRF second config with another seq shares the VNI", obj: vrf("vrf-a2", func(s *v1.VRFRouteConfigurationSpec) { s.Seq = 20 }), snap: existing()},
		{name: "good, update of itself", obj: vrf("vrf-a", nil), snap: existing()},
		{name: "cidr not a network", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[0].CIDR = "10.10.0.1/16" }),
			want: [][]string{{`spec.import[0].cidr: Invalid value: "10.10.0.1/16": not a network address (did you mean 10.10.0.0/16?)`}}},
		{name: "cidr garbage", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Export[0].CIDR = "10.0.0.0/33" }),
			want: [][]string{{`spec.export[0].cidr`, `"10.0.0.0/33"`, "not a CIDR"}}},
		{name: "cidr 4in6", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Export[0].CIDR = "::ffff:10.0.0.0/104" }),
			want: [][]string{{`spec.export[0].cidr`, `"::ffff:10.0.0.0/104"`, "IPv4-mapped"}}},
		{name: "ge below prefix", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[0].GE = ptr.To[int32](8) }),
			want: [][]string{{`spec.import[0].ge: Invalid value: 8`, "prefix length 16"}}},
		{name: "le beyond family", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[0].LE = ptr.To[int32](33) }),
			want: [][]string{{`spec.import[0].le: Invalid value: 33`, "at most 32"}}},
		{name: "ipv6 le 128 ok, 129 not", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[1].LE = ptr.To[int32](129) }),
			want: [][]string{{`spec.import[1].le: Invalid value: 129`, "at most 128"}}},
		{name: "ge > le", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) {
			s.Import[1].GE = ptr.To[int32](64)
			s.Import[1].LE = ptr.To[int32](60)
		}),
			want: [][]string{{`spec.import[1].ge: Invalid value: 64`, "le 60"}}},
		{name: "duplicate explicit seq", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[0].Seq = 7; s.Import[1].Seq = 7 }),
			want: [][]string{{`spec.import[1].seq: Invalid value: 7`, "spec.import[0]"}}},
		{name: "explicit seq collides with implicit (index+1, das-schiff's numbering)", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[1].Seq = 1 }),
			want: [][]string{{`spec.import[1].seq: Invalid value: 1`, "duplicate"}}},
		{name: "das-schiff: implicit 1 then explicit 10 is no duplicate", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[1].Seq = 10 })},
		{name: "bad action", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Import[0].Action = "allow" }),
			want: [][]string{{`spec.import[0].action: Unsupported value: "allow"`}}},
		{name: "vrf name too long", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VRF = "tenant-abcdefg" }),
			want: [][]string{{`spec.vrf: Invalid value: "tenant-abcdefg"`, `"br.tenant-abcdefg"`, "15 bytes"}}},
		{name: "vrf name 12 bytes ok", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VRF = "tenant-abcde" })},
		{name: "vrf name chars", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VRF = "Tenant.A" }),
			want: [][]string{{`spec.vrf: Invalid value: "Tenant.A"`, "letters, digits"}}},
		{name: "upper-case vrf name (Linux and FRR take it)", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VRF = "Tenant_A" })},
		{name: "no vni", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VNI = nil }),
			want: [][]string{{`spec.vni: Required value`, `VRF "tenant-a" needs its L3 VNI: write spec.vni`}}},
		{name: "no vni for cluster", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VNI = nil; s.VRF = "cluster" })},
		{name: "multi-value and additive communities (FRR syntax)", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) {
			s.Communities = []string{"65000:1 65000:2", "65000:3 additive"}
			s.Community = ptr.To("65000:1 no-export additive")
		})},
		{name: "bad community among several", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Communities = []string{"65000:1 65536:2"} }),
			want: [][]string{{`spec.communities[0]: Invalid value: "65000:1 65536:2"`, `"65536:2"`, "0..65535"}}},
		{name: "only additive", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Communities = []string{"additive"} }),
			want: [][]string{{`spec.communities[0]: Invalid value: "additive"`, "no community"}}},
		{name: "sbr prefixes and loopbacks", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) {
			s.SBRPrefixes = []string{"10.50.0.0/16", "fd00:50::/48"}
			s.Loopbacks = []v1.VRFLoopback{{Name: "lo.mir", Subnet: "10.99.0.0/24"}}
		})},
		{name: "bad sbr prefixes", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) {
			s.SBRPrefixes = []string{"10.50.0.1/16", "10.0.0.0/8", "10.0.0.0/8"}
		}),
			want: [][]string{{`spec.sbrPrefixes[0]: Invalid value: "10.50.0.1/16"`, "did you mean 10.50.0.0/16"}, {`spec.sbrPrefixes[2]: Duplicate value: "10.0.0.0/8"`}}},
		{name: "bad loopbacks", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) {
			s.Loopbacks = []v1.VRFLoopback{{Name: "lo.mirror-toolong", Subnet: "10.99.0.1/24"}, {Name: "a/b", Subnet: "10.98.0.0/24"}, {Name: "lo.x", Subnet: "10.97.0.0/24"}, {Name: "lo.x", Subnet: "10.96.0.0/24"}}
		}),
			want: [][]string{{`spec.loopbacks[0].name: Invalid value: "lo.mirror-toolong"`, "at most 15"}, {`spec.loopbacks[0].subnet: Invalid value: "10.99.0.1/24"`, "10.99.0.0/24"},
				{`spec.loopbacks[1].name: Invalid value: "a/b"`}, {`spec.loopbacks[3].name: Duplicate value: "lo.x"`}}},
		{name: "vni 0 and too big", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VNI = ptr.To[int32](16777216) }),
			want: [][]string{{`spec.vni: Invalid value: 16777216`, "1..16777215"}}},
		{name: "seq 65535", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Seq = 65535 }),
			want: [][]string{{`spec.seq: Invalid value: 65535`, "1..65534"}}},
		{name: "mtu", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.MTU = ptr.To[int32](999) }),
			want: [][]string{{`spec.mtu: Invalid value: 999`}}},
		{name: "route target", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.RouteTarget = ptr.To("70000:70000") }),
			want: [][]string{{`spec.routeTarget: Invalid value: "70000:70000"`}}},
		{name: "route target ipv4 ok", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.RouteTarget = ptr.To("192.0.2.1:100") })},
		{name: "community", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.Communities[0] = "65536:1"; s.Community = ptr.To("bogus") }),
			want: [][]string{{`spec.communities[0]: Invalid value: "65536:1"`}, {`spec.community: Invalid value: "bogus"`}}},
		{name: "aggregate", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) {
			s.Aggregate = []string{"10.10.0.0/16", "10.10.0.0/16", "10.1.1.1/8"}
		}),
			want: [][]string{{`spec.aggregate[1]: Duplicate value: "10.10.0.0/16"`}, {`spec.aggregate[2]: Invalid value: "10.1.1.1/8"`, "10.0.0.0/8"}}},
		{name: "node selector", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) {
			s.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: "Near"}}}
		}), want: [][]string{{`spec.nodeSelector.matchExpressions[0].operator: Invalid value: "Near"`}}},
		{name: "vni used by L2", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VRF = "tenant-b"; s.VNI = ptr.To[int32](100100) }), snap: existing(),
			want: [][]string{{`spec.vni: Invalid value: 100100`, `Layer2NetworkConfiguration "l2-a"`}}},
		{name: "vni used by other VRF", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VRF = "tenant-b" }), snap: existing(),
			want: [][]string{{`spec.vni: Invalid value: 2001`, `VRF "tenant-a"`}}},
		{name: "same VRF other VNI and same seq", obj: vrf("x", func(s *v1.VRFRouteConfigurationSpec) { s.VNI = ptr.To[int32](2002) }), snap: existing(),
			want: [][]string{{`spec.seq: Invalid value: 10`, `"vrf-a"`}, {`spec.vni: Invalid value: 2002`, `VNI 2001`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ValidateVRFRouteConfiguration(tt.obj, tt.snap), tt.want)
		})
	}
}

func TestValidateLayer2NetworkConfiguration(t *testing.T) {
	tests := []struct {
		name string
		obj  *v1.Layer2NetworkConfiguration
		snap *Snapshot
		want [][]string
	}{
		{name: "good", obj: l2("l2-b", func(s *v1.Layer2NetworkConfigurationSpec) { s.ID = 101; s.VNI = 100101 }), snap: existing()},
		{name: "good, update of itself", obj: l2("l2-a", nil), snap: existing()},
		{name: "good, no VRF, no gateways", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.VRF = ""; s.AnycastGateways = nil; s.AnycastMac = "" })},
		{name: "cluster VRF needs no VRFRouteConfiguration", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.ID = 7; s.VNI = 7; s.VRF = "cluster" }), snap: existing()},
		{name: "vlan", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.ID = 4095 }),
			want: [][]string{{`spec.id: Invalid value: 4095`, "1..4094"}}},
		{name: "vni", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.VNI = 0 }),
			want: [][]string{{`spec.vni: Invalid value: 0`}}},
		{name: "mtu", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.MTU = 9001 }),
			want: [][]string{{`spec.mtu: Invalid value: 9001`, "1000..9000"}}},
		{name: "gateways need mac", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.AnycastMac = "" }),
			want: [][]string{{`spec.anycastMac: Required value`, "10.20.0.1/24"}}},
		{name: "multicast mac", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.AnycastMac = "01:00:5e:00:00:01" }),
			want: [][]string{{`spec.anycastMac: Invalid value: "01:00:5e:00:00:01"`, "multicast"}}},
		{name: "gateway is network address", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.AnycastGateways[0] = "10.20.0.0/24" }),
			want: [][]string{{`spec.anycastGateways[0]: Invalid value: "10.20.0.0/24"`, "10.20.0.1/24"}}},
		{name: "gateway garbage", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.AnycastGateways[1] = "fd00:20::1" }),
			want: [][]string{{`spec.anycastGateways[1]: Invalid value: "fd00:20::1"`}}},
		{name: "unknown VRF is admitted (any apply order; the operator holds the network back)", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.ID = 7; s.VNI = 7; s.VRF = "tenant-z" }), snap: existing()},
		{name: "upper-case VRF", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.VRF = "Tenant_A"; s.DisableSegmentation = true })},
		{name: "vni and vlan taken", obj: l2("x", nil), snap: existing(),
			want: [][]string{{`spec.vni: Invalid value: 100100`, `"l2-a"`}, {`spec.id: Invalid value: 100`, `"l2-a"`}}},
		{name: "vni taken by VRF", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.ID = 7; s.VNI = 2001 }), snap: existing(),
			want: [][]string{{`spec.vni: Invalid value: 2001`, `VRF "tenant-a"`}}},
		{name: "node selector label value", obj: l2("x", func(s *v1.Layer2NetworkConfigurationSpec) {
			s.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "a b"}}
		}), want: [][]string{{`spec.nodeSelector.matchLabels: Invalid value: "a b"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ValidateLayer2NetworkConfiguration(tt.obj, tt.snap), tt.want)
		})
	}
}

func TestValidateBGPPeering(t *testing.T) {
	dur := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	tests := []struct {
		name string
		obj  *v1.BGPPeering
		snap *Snapshot
		want [][]string
	}{
		{name: "good, update of itself", obj: peering("bgp-a", nil), snap: existing()},
		{name: "good loopback", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.PeeringVlan = nil
			s.LoopbackPeer = &v1.BGPPeeringLoopback{IPAddresses: []string{"10.30.0.1", "fd00:30::1"}}
		}), snap: existing()},
		{name: "neither", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.PeeringVlan = nil }),
			want: [][]string{{`spec.peeringVlan: Required value`}}},
		{name: "both", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.LoopbackPeer = &v1.BGPPeeringLoopback{IPAddresses: []string{"10.30.0.1"}}
		}),
			want: [][]string{{`spec.loopbackPeer.ips: Invalid value: `, "10.30.0.1", `"l2-a"`}}},
		{name: "asn 0", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.RemoteASN = 0 }),
			want: [][]string{{`spec.remoteASN: Invalid value: 0`}}},
		{name: "asn too big", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.RemoteASN = 4294967295 }),
			want: [][]string{{`spec.remoteASN: Invalid value: 4294967295`}}},
		{name: "as_trans", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.RemoteASN = 23456 }),
			want: [][]string{{`spec.remoteASN: Invalid value: 23456`, "AS_TRANS"}}},
		{name: "hold time 2s", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.HoldTime = dur(2 * time.Second); s.KeepaliveTime = dur(time.Second) }),
			want: [][]string{{`spec.holdTime: Invalid value: "2s"`}}},
		{name: "keepalive > hold", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.KeepaliveTime = dur(91 * time.Second) }),
			want: [][]string{{`spec.keepaliveTime: Invalid value: "1m31s"`, "holdTime 1m30s"}}},
		{name: "fractional", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.KeepaliveTime = dur(1500 * time.Millisecond) }),
			want: [][]string{{`spec.keepaliveTime: Invalid value: "1.5s"`, "whole seconds"}}},
		{name: "keepalive alone", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.HoldTime = nil }),
			want: [][]string{{`spec.holdTime: Required value`, "30s"}}},
		{name: "good bfd", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.BFD = &v1.BFDProfile{ReceiveInterval: dur(100 * time.Millisecond), TransmitInterval: dur(100 * time.Millisecond),
				DetectMultiplier: ptr.To[int32](5), PassiveMode: true, EchoInterval: dur(50 * time.Millisecond)}
		})},
		{name: "bfd out of bfdd's range", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.BFD = &v1.BFDProfile{ReceiveInterval: dur(5 * time.Millisecond), TransmitInterval: dur(1500 * time.Microsecond),
				DetectMultiplier: ptr.To[int32](1), EchoInterval: dur(2 * time.Minute)}
		}), want: [][]string{{`spec.bfd.receiveInterval: Invalid value: "5ms"`, "10ms..1m0s"}, {`spec.bfd.transmitInterval: Invalid value: "1.5ms"`},
			{`spec.bfd.echoInterval: Invalid value: "2m0s"`}, {`spec.bfd.detectMultiplier: Invalid value: 1`, "2..255"}}},
		{name: "max prefixes", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.MaximumPrefixes = ptr.To[int64](0) }),
			want: [][]string{{`spec.maximumPrefixes: Invalid value: 0`}}},
		{name: "secret ref", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.PasswordSecretRef.Namespace = "Kube_System"
			s.PasswordSecretRef.Key = "pass word"
		}),
			want: [][]string{{`spec.passwordSecretRef.namespace: Invalid value: "Kube_System"`}, {`spec.passwordSecretRef.key: Invalid value: "pass word"`}}},
		{name: "loopback address", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.PeeringVlan = nil
			s.LoopbackPeer = &v1.BGPPeeringLoopback{IPAddresses: []string{"10.30.0.1/32", "224.0.0.5", "10.30.0.2", "10.30.0.2"}}
		}), want: [][]string{
			{`spec.loopbackPeer.ips[0]: Invalid value: "10.30.0.1/32"`},
			{`spec.loopbackPeer.ips[1]: Invalid value: "224.0.0.5"`},
			{`spec.loopbackPeer.ips[3]: Duplicate value: "10.30.0.2"`},
		}},
		{name: "import prefix", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.Export = []v1.PrefixItem{{CIDR: "10.0.0.1/24", Action: "permit"}} }),
			want: [][]string{{`spec.export[0].cidr: Invalid value: "10.0.0.1/24": not a network address (did you mean 10.0.0.0/24?)`}}},
		{name: "unknown layer2 is admitted (any apply order; the operator holds the peering back)", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.PeeringVlan.Name = "l2-z" }), snap: existing()},
		{name: "old spelling ipAddresses", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.PeeringVlan = nil
			s.LoopbackPeer = &v1.BGPPeeringLoopback{IPAddresses: []string{"10.30.0.1"}, RenamedIPAddresses: []string{"10.30.0.1"}}
		}), want: [][]string{{`spec.loopbackPeer.ipAddresses: Invalid value: ["10.30.0.1"]`, "write ips"}}},
		{name: "layer2 already peered", obj: peering("x", nil), snap: existing(),
			want: [][]string{{`spec.peeringVlan.name: Invalid value: "l2-a"`, `BGPPeering "bgp-a"`}}},
		{name: "layer2 without gateways", obj: peering("x", func(s *v1.BGPPeeringSpec) { s.PeeringVlan.Name = "l2-nogw" }),
			snap: &Snapshot{Layer2Networks: []v1.Layer2NetworkConfiguration{*l2("l2-nogw", func(s *v1.Layer2NetworkConfigurationSpec) { s.AnycastGateways = nil })}},
			want: [][]string{{`spec.peeringVlan.name: Invalid value: "l2-nogw"`, "no anycastGateways"}}},
		{name: "loopback already peered", obj: peering("x", func(s *v1.BGPPeeringSpec) {
			s.PeeringVlan = nil
			s.LoopbackPeer = &v1.BGPPeeringLoopback{IPAddresses: []string{"10.30.0.1"}}
		}), snap: &Snapshot{BGPPeerings: []v1.BGPPeering{*peering("lb", func(s *v1.BGPPeeringSpec) {
			s.PeeringVlan = nil
			s.LoopbackPeer = &v1.BGPPeeringLoopback{IPAddresses: []string{"10.30.0.1"}}
		})}}, want: [][]string{{`spec.loopbackPeer.ips[0]: Invalid value: "10.30.0.1"`, `BGPPeering "lb"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ValidateBGPPeering(tt.obj, tt.snap), tt.want)
		})
	}
}

func TestValidateHealthProbes(t *testing.T) {
	many := make([]v1.HealthProbe, v1.MaxHealthProbes+1)
	for i := range many {
		many[i] = v1.HealthProbe{Name: fmt.Sprintf("p%d", i), Address: "192.0.2.1:53"}
	}
	for _, tc := range []struct {
		name   string
		probes []v1.HealthProbe
		want   []string
	}{
		{"good", []v1.HealthProbe{{Name: "dns", Address: "192.0.2.53:53"}, {Name: "gw6", Address: "[2001:db8::1]:443"}}, nil},
		{"no port", []v1.HealthProbe{{Name: "dns", Address: "192.0.2.53"}}, []string{`probes[0].address: Invalid value: "192.0.2.53"`}},
		{"port 0", []v1.HealthProbe{{Name: "dns", Address: "192.0.2.53:0"}}, []string{`probes[0].address: Invalid value: "192.0.2.53:0"`}},
		{"a host name", []v1.HealthProbe{{Name: "dns", Address: "dns.example:53"}}, []string{`probes[0].address: Invalid value: "dns.example:53"`}},
		{"no name, twice a name", []v1.HealthProbe{{Address: "192.0.2.1:1"}, {Name: "a", Address: "192.0.2.1:1"}, {Name: "a", Address: "192.0.2.1:2"}},
			[]string{"probes[0].name: Required value", `probes[2].name: Duplicate value: "a"`}},
		{"too many", many, []string{"probes: Too many: 17: must have at most 16 items"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateHealthProbes(field.NewPath("probes"), tc.probes) {
				got = append(got, e.Error())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("error %q, want %q", got[i], tc.want[i])
				}
			}
		})
	}
}
