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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func bridgeLink(name, ifname string) *v1.Link {
	return &v1.Link{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.LinkSpec{InterfaceName: ifname, Bridge: &v1.BridgeLink{MTU: 1450}}}
}

func vxlanLink(name, ifname string, vnid int32, master, device string) *v1.Link {
	x := &v1.VXLANLink{VNID: vnid, Port: 4789, Flooding: &v1.Flooding{Mode: v1.FloodingStatic}}
	if master != "" {
		x.Master = &v1.LinkReference{Name: master}
	}
	if device != "" {
		x.Device = &v1.LinkReference{Name: device}
	}
	return &v1.Link{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.LinkSpec{InterfaceName: ifname, VXLAN: x}}
}

func unmanagedLink(name, ifname string) *v1.Link {
	return &v1.Link{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.LinkSpec{InterfaceName: ifname, Unmanaged: &v1.UnmanagedLink{}}}
}

func withLink(l *v1.Link, mut func(*v1.LinkSpec)) *v1.Link {
	mut(&l.Spec)
	return l
}

func TestValidateLink(t *testing.T) {
	gw := map[string]string{"gw": "yes"}
	linkSnap := func() *Snapshot {
		s := existing()
		s.Links = []v1.Link{*bridgeLink("gw-bridge", "br0"), *unmanagedLink("uplink", "eth0"),
			*vxlanLink("gw-vxlan", "vxgw", 3000, "gw-bridge", "uplink"),
			*withLink(vxlanLink("rack-a", "vxrack", 4000, "", ""), func(s *v1.LinkSpec) {
				s.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "a"}}
			})}
		s.NodeLabels = []map[string]string{{"rack": "a"}, {"rack": "b", "gw": "yes"}}
		return s
	}
	tests := []struct {
		name string
		obj  *v1.Link
		snap *Snapshot
		want [][]string
	}{
		{name: "bridge", obj: bridgeLink("x", "br1"), snap: linkSnap()},
		{name: "unmanaged", obj: unmanagedLink("x", "eth1"), snap: linkSnap()},
		{name: "vxlan on the existing links", obj: vxlanLink("x", "vx1", 3001, "gw-bridge", "uplink"), snap: linkSnap()},
		{name: "update of itself", obj: vxlanLink("gw-vxlan", "vxgw", 3000, "gw-bridge", "uplink"), snap: linkSnap()},
		{name: "references to Links that do not exist yet (any apply order)", obj: vxlanLink("x", "vx1", 3001, "later", "later-too"), snap: linkSnap()},
		{name: "evpn with a master", obj: withLink(vxlanLink("x", "vx1", 3001, "gw-bridge", ""), func(s *v1.LinkSpec) {
			s.VXLAN.Flooding = nil
		}), snap: linkSnap()},
		{name: "same interface and VNI on other nodes", obj: withLink(vxlanLink("x", "vxrack", 4000, "", ""), func(s *v1.LinkSpec) {
			s.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "b"}}
		}), snap: linkSnap()},
		{name: "none of the kinds", obj: &v1.Link{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: v1.LinkSpec{InterfaceName: "x0"}},
			want: [][]string{{`spec: Invalid value: ""`, "exactly one of bridge, vxlan and unmanaged must be set (0 are)"}}},
		{name: "two kinds", obj: withLink(bridgeLink("x", "br1"), func(s *v1.LinkSpec) { s.Unmanaged = &v1.UnmanagedLink{} }),
			want: [][]string{{`spec: Invalid value: "bridge"`, "(2 are)"}}},
		{name: "interface name too long", obj: bridgeLink("x", "bridge-too-long0"),
			want: [][]string{{`spec.interfaceName: Invalid value: "bridge-too-long0"`, "16 bytes, at most 15"}}},
		{name: "interface name of the agent's own", obj: bridgeLink("x", "l2br.300"),
			want: [][]string{{`spec.interfaceName: Invalid value: "l2br.300"`, `starts with "l2br."`}}},
		{name: "vxlan without vnid, bad port and mtu", obj: withLink(vxlanLink("x", "vx1", 0, "", ""), func(s *v1.LinkSpec) {
			s.VXLAN.Port, s.VXLAN.MTU = 65536, 100
		}), want: [][]string{{`spec.vxlan.vnid: Invalid value: 0`, "1..16777215"}, {`spec.vxlan.port: Invalid value: 65536`},
			{`spec.vxlan.mtu: Invalid value: 100`}}},
		{name: "evpn without master", obj: withLink(vxlanLink("x", "vx1", 3001, "", ""), func(s *v1.LinkSpec) { s.VXLAN.Flooding = nil }),
			want: [][]string{{`spec.vxlan.master: Required value`, "needs a master bridge"}}},
		{name: "bad flooding", obj: withLink(vxlanLink("x", "vx1", 3001, "", ""), func(s *v1.LinkSpec) {
			s.VXLAN.Flooding.Peers = []string{"192.0.2.1", "2001:db8::1"}
		}), want: [][]string{{`spec.vxlan.flooding.peers[1]: Invalid value: "2001:db8::1"`, "another address family"}}},
		{name: "refers to itself", obj: vxlanLink("x", "vx1", 3001, "x", ""),
			want: [][]string{{`spec.vxlan.master.name: Invalid value: "x"`, "cannot refer to itself"}}},
		{name: "master not a bridge, device a vxlan", obj: vxlanLink("x", "vx1", 3001, "uplink", "gw-vxlan"), snap: linkSnap(),
			want: [][]string{{`spec.vxlan.master.name: Invalid value: "uplink"`, `Link "uplink" is a unmanaged: a master must be a bridge`},
				{`spec.vxlan.device.name: Invalid value: "gw-vxlan"`, "a device must be a bridge or unmanaged"}}},
		{name: "a master turned into a vxlan", obj: withLink(vxlanLink("gw-bridge", "br0", 3001, "", ""), func(s *v1.LinkSpec) {}), snap: linkSnap(),
			want: [][]string{{`spec: Invalid value: "vxlan"`, `Link "gw-vxlan" has this Link as its master`}}},
		{name: "dependency cycle", obj: vxlanLink("gw-bridge", "br0", 3001, "gw-vxlan", ""), snap: linkSnap(),
			want: [][]string{{`spec.vxlan.master.name: Invalid value: "gw-vxlan"`, "dependency cycle: gw-bridge -> gw-vxlan -> gw-bridge"},
				{`spec: Invalid value: "vxlan"`, `Link "gw-vxlan" has this Link as its master`}}},
		{name: "interface name taken on all nodes", obj: bridgeLink("x", "br0"), snap: linkSnap(),
			want: [][]string{{`spec.interfaceName: Invalid value: "br0"`, `also the interface of Link "gw-bridge"`}}},
		{name: "interface and VNI taken on a node both select", obj: withLink(vxlanLink("x", "vxrack", 4000, "", ""), func(s *v1.LinkSpec) {
			s.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: metav1.LabelSelectorOpExists}}}
		}), snap: linkSnap(), want: [][]string{{`spec.interfaceName: Invalid value: "vxrack"`, `Link "rack-a"`},
			{`spec.vxlan.vnid: Invalid value: 4000`, `VNI already used by Link "rack-a" on the same nodes`}}},
		{name: "VNI of a layer-2 network", obj: withLink(vxlanLink("x", "vx1", 100100, "", ""), func(s *v1.LinkSpec) { s.NodeSelector = &metav1.LabelSelector{MatchLabels: gw} }),
			snap: linkSnap(), want: [][]string{{`spec.vxlan.vnid: Invalid value: 100100`, `Layer2NetworkConfiguration "l2-a"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrs(t, ValidateLink(tt.obj, tt.snap), tt.want) })
	}
}

// A layer-2 network or VRF may not take a Link's VNI.
func TestLinkVNIIsTaken(t *testing.T) {
	s := existing()
	s.Links = []v1.Link{*vxlanLink("gw-vxlan", "vxgw", 3000, "", "")}
	checkErrs(t, ValidateLayer2NetworkConfiguration(l2("x", func(s *v1.Layer2NetworkConfigurationSpec) { s.ID, s.VNI = 7, 3000 }), s),
		[][]string{{`spec.vni: Invalid value: 3000`, `Link "gw-vxlan"`}})
}
