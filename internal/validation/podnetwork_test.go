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
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/podnetwork/podaddr"
)

// podNet is a network admitting the namespaces sel selects (nil: none).
func podNet(name string, id int32, sel *metav1.LabelSelector, gateways ...string) v1.Layer2NetworkConfiguration {
	return v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.Layer2NetworkConfigurationSpec{
		ID: id, VNI: 100000 + id, MTU: 1500, AnycastMac: "02:00:00:00:00:01", AnycastGateways: gateways, PodNamespaceSelector: sel}}
}

func tenants(names ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: metav1.LabelSelectorOpIn, Values: names}}}
}

func podConfig(ns, name string, mut func(*v1.PodNetworkConfigSpec)) *v1.PodNetworkConfig {
	o := &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.PodNetworkConfigSpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "cnf"}},
		Primary:     &v1.PrimaryInterfaceTuning{Name: "eth0", MTU: ptr.To[int32](1400)},
		Interfaces: []v1.PodInterface{
			{Name: "net1", Type: v1.PodInterfaceVeth, Network: "tenant-a-net", Addresses: &v1.PodAddresses{
				Ranges: []string{"10.40.0.64/27", "fd00:40::100/120"}, Static: []string{"10.40.0.10"}}},
			{Name: "net2", Type: v1.PodInterfaceMACVLAN, Network: "shared-net", MACVLANMode: v1.MACVLANBridge, MTU: ptr.To[int32](1450),
				Addresses: &v1.PodAddresses{Ranges: []string{"10.60.0.128/27"}}},
			{Name: "net1.10", Type: v1.PodInterfaceVLAN, Parent: "net1", VLAN: 10, Addresses: &v1.PodAddresses{Ranges: []string{"192.168.10.0/24"}}},
			{Name: "vlan20", Type: v1.PodInterfaceVLAN, Parent: "eth0", VLAN: 20},
			{Name: "br0", Type: v1.PodInterfaceBridge, Ports: []string{"vlan20"}, Addresses: &v1.PodAddresses{Ranges: []string{"192.168.20.0/24"}}},
			{Name: "net3", Type: v1.PodInterfaceVeth, Network: "open-net", Addresses: &v1.PodAddresses{Ranges: []string{"172.16.0.0/24"}, Static: []string{"172.16.0.9"}}},
		},
		Routes: []v1.PodRoute{
			{Destination: "10.100.0.0/16", Gateway: "10.40.0.1", Interface: "net1"},
			{Destination: "default6", Gateway: "fd00:40::1"},
			{Destination: "192.168.30.0/24", Interface: "br0"},
		},
		Sysctls: []v1.PodSysctl{
			{Name: "net.ipv4.conf.net1.rp_filter", Value: "2"},
			{Name: "net.ipv4.conf.net1.10.arp_ignore", Value: "8"},
			{Name: "net.ipv6.conf.all.accept_ra", Value: "0"},
			{Name: "net.ipv4.ip_local_port_range", Value: "20000\t30000"},
			{Name: "net.ipv4.ping_group_range", Value: "0 2147483647"},
		},
	}}
	if mut != nil {
		mut(&o.Spec)
	}
	return o
}

func podSnapshot() *Snapshot {
	return &Snapshot{
		Layer2Networks: []v1.Layer2NetworkConfiguration{
			podNet("tenant-a-net", 40, tenants("a"), "10.40.0.1/24", "fd00:40::1/64"),
			podNet("tenant-b-net", 50, tenants("b"), "10.50.0.1/24"),
			podNet("shared-net", 60, tenants("a", "b"), "10.60.0.1/24"),
			podNet("open-net", 70, &metav1.LabelSelector{}),
			podNet("closed-net", 80, nil, "10.80.0.1/24"),
		},
		PodNetworkConfigs: []v1.PodNetworkConfig{*podConfig("tenant-b", "other", func(s *v1.PodNetworkConfigSpec) {
			s.Interfaces = []v1.PodInterface{
				{Name: "net1", Type: v1.PodInterfaceVeth, Network: "shared-net", Addresses: &v1.PodAddresses{Ranges: []string{"10.60.0.64/27"}, Static: []string{"10.60.0.200"}}},
				{Name: "net2", Type: v1.PodInterfaceVeth, Network: "open-net", Addresses: &v1.PodAddresses{Ranges: []string{"172.16.1.0/24"}}},
				{Name: "vlan5", Type: v1.PodInterfaceVLAN, Parent: "net1", VLAN: 5, Addresses: &v1.PodAddresses{Ranges: []string{"192.168.10.0/24"}}},
			}
			s.Routes, s.Sysctls = nil, nil
		})},
		NamespaceLabels: map[string]map[string]string{"tenant-a": {"tenant": "a"}, "tenant-b": {"tenant": "b"}},
	}
}

func TestValidatePodNetworkConfig(t *testing.T) {
	iface := func(i int, mut func(*v1.PodInterface)) func(*v1.PodNetworkConfigSpec) {
		return func(s *v1.PodNetworkConfigSpec) { mut(&s.Interfaces[i]) }
	}
	add := func(in ...v1.PodInterface) func(*v1.PodNetworkConfigSpec) {
		return func(s *v1.PodNetworkConfigSpec) { s.Interfaces = append(s.Interfaces, in...) }
	}
	tests := []struct {
		name string
		ns   string
		mut  func(*v1.PodNetworkConfigSpec)
		snap *Snapshot // default podSnapshot()
		want [][]string
	}{
		{name: "good"},
		{name: "good without snapshot", snap: &Snapshot{}, want: [][]string{
			{`spec.interfaces[0].network: Invalid value: "tenant-a-net": no Layer2NetworkConfiguration "tenant-a-net" admits pods of namespace "tenant-a"`},
			{`spec.interfaces[1].network: Invalid value: "shared-net"`}, {`spec.interfaces[5].network: Invalid value: "open-net"`}}},
		{name: "update of itself", ns: "tenant-b", mut: func(s *v1.PodNetworkConfigSpec) { *s = podSnapshot().PodNetworkConfigs[0].Spec }},
		{name: "empty", mut: func(s *v1.PodNetworkConfigSpec) { *s = v1.PodNetworkConfigSpec{} }},

		// Networks: the namespace must be admitted.
		{name: "another tenant's network", mut: iface(0, func(in *v1.PodInterface) { in.Network, in.Addresses = "tenant-b-net", nil }),
			want: [][]string{{`spec.interfaces[0].network: Invalid value: "tenant-b-net": no Layer2NetworkConfiguration "tenant-b-net" admits pods of namespace "tenant-a"`, "spec.podNamespaceSelector"}}},
		{name: "network without podNamespaceSelector", mut: iface(0, func(in *v1.PodInterface) { in.Network, in.Addresses = "closed-net", nil }),
			want: [][]string{{`spec.interfaces[0].network: Invalid value: "closed-net": no Layer2NetworkConfiguration "closed-net" admits`}}},
		{name: "missing network: the same message", mut: iface(0, func(in *v1.PodInterface) { in.Network, in.Addresses = "nope", nil }),
			want: [][]string{{`spec.interfaces[0].network: Invalid value: "nope": no Layer2NetworkConfiguration "nope" admits pods of namespace "tenant-a"`}}},
		{name: "unknown namespace labels", ns: "tenant-c", want: [][]string{{`spec.interfaces[0].network: Invalid value: "tenant-a-net"`, `namespace "tenant-c"`},
			{`spec.interfaces[1].network: Invalid value: "shared-net"`}}},

		// Interface kinds.
		{name: "veth without network", mut: iface(0, func(in *v1.PodInterface) { in.Network = "" }),
			want: [][]string{{`spec.interfaces[0].network: Required value: the Layer2NetworkConfiguration a veth interface joins`}}},
		{name: "macvlan without network", mut: iface(1, func(in *v1.PodInterface) { in.Network = "" }),
			want: [][]string{{`spec.interfaces[1].network: Required value`, "macvlan"}}},
		{name: "fields of other types", mut: iface(0, func(in *v1.PodInterface) {
			in.Parent, in.VLAN, in.Ports, in.MACVLANMode = "eth0", 7, []string{"net2"}, v1.MACVLANPrivate
		}), want: [][]string{{`spec.interfaces[0].parent: Invalid value: "eth0": only for type vlan`}, {`spec.interfaces[0].vlan: Invalid value: 7: only for type vlan`},
			{`spec.interfaces[0].ports: Invalid value: ["net2"]: only for type bridge`}, {`spec.interfaces[0].macvlanMode: Invalid value: "private": only for type macvlan`}}},
		{name: "vlan with network", mut: iface(2, func(in *v1.PodInterface) { in.Network = "tenant-a-net" }),
			want: [][]string{{`spec.interfaces[2].network: Invalid value: "tenant-a-net": only for types veth and macvlan: a vlan interface is inside the pod`}}},
		{name: "vlan without parent", mut: iface(2, func(in *v1.PodInterface) { in.Parent = "" }),
			want: [][]string{{`spec.interfaces[2].parent: Required value: the pod interface the VLAN sits on: the primary interface eth0`}}},
		{name: "vlan on an interface the pod does not have", mut: iface(2, func(in *v1.PodInterface) { in.Parent = "eth1" }),
			want: [][]string{{`spec.interfaces[2].parent: Invalid value: "eth1": not an interface of the pod: the primary interface eth0 or one of spec.interfaces (net1, net2, vlan20, br0, net3)`}}},
		{name: "vlan on itself", mut: iface(2, func(in *v1.PodInterface) { in.Parent = "net1.10" }),
			want: [][]string{{`spec.interfaces[2].parent: Invalid value: "net1.10": a VLAN interface cannot be its own parent`}}},
		{name: "vlan on a renamed primary", mut: func(s *v1.PodNetworkConfigSpec) { s.Primary.Name = "ens3"; s.Interfaces[3].Parent = "ens3" }},
		{name: "vlan id 0", mut: iface(2, func(in *v1.PodInterface) { in.VLAN = 0 }),
			want: [][]string{{`spec.interfaces[2].vlan: Required value: the 802.1Q VLAN id, 1..4094`}}},
		{name: "vlan id 4095", mut: iface(2, func(in *v1.PodInterface) { in.VLAN = 4095 }),
			want: [][]string{{`spec.interfaces[2].vlan: Invalid value: 4095: VLAN id must be within 1..4094`}}},
		{name: "same vlan twice on a parent", mut: add(v1.PodInterface{Name: "again", Type: v1.PodInterfaceVLAN, Parent: "net1", VLAN: 10}),
			want: [][]string{{`spec.interfaces[6].vlan: Invalid value: 10: interface net1.10 already is VLAN 10 on net1`}}},
		{name: "bridge port not of the pod", mut: iface(4, func(in *v1.PodInterface) { in.Ports = []string{"vlan20", "eth7"} }),
			want: [][]string{{`spec.interfaces[4].ports[1]: Invalid value: "eth7": not an interface of spec.interfaces`}}},
		{name: "bridge port is the primary", mut: iface(4, func(in *v1.PodInterface) { in.Ports = []string{"eth0"} }),
			want: [][]string{{`spec.interfaces[4].ports[0]: Invalid value: "eth0": is the primary interface, which belongs to the cluster's CNI`}}},
		{name: "bridge port twice", mut: iface(4, func(in *v1.PodInterface) { in.Ports = []string{"vlan20", "vlan20"} }),
			want: [][]string{{`spec.interfaces[4].ports[1]: Duplicate value: "vlan20"`}}},
		{name: "port of two bridges", mut: add(v1.PodInterface{Name: "br1", Type: v1.PodInterfaceBridge, Ports: []string{"vlan20"}}),
			want: [][]string{{`spec.interfaces[6].ports[0]: Invalid value: "vlan20": already a port of bridge br0`}}},
		{name: "bridge in a bridge", mut: add(v1.PodInterface{Name: "br1", Type: v1.PodInterfaceBridge, Ports: []string{"br0"}}),
			want: [][]string{{`spec.interfaces[6].ports[0]: Invalid value: "br0": is a bridge`}}},
		{name: "bridge its own port", mut: iface(4, func(in *v1.PodInterface) { in.Ports = []string{"br0"} }),
			want: [][]string{{`spec.interfaces[4].ports[0]: Invalid value: "br0": a bridge cannot be its own port`}}},
		{name: "addresses on a bridge port", mut: iface(4, func(in *v1.PodInterface) { in.Ports = []string{"vlan20", "net1.10"} }),
			want: [][]string{{`spec.interfaces[2].addresses: Invalid value: "net1.10": a bridge port carries no addresses: give them to bridge br0`}}},
		{name: "cycle vlan -> bridge -> vlan", mut: iface(3, func(in *v1.PodInterface) { in.Parent = "br0" }),
			want: [][]string{{`spec.interfaces[4].ports[0]: Invalid value: "vlan20": dependency cycle: vlan20 -> br0 -> vlan20`}}},
		{name: "cycle of vlans", mut: add(v1.PodInterface{Name: "v1", Type: v1.PodInterfaceVLAN, Parent: "v2", VLAN: 1}, v1.PodInterface{Name: "v2", Type: v1.PodInterfaceVLAN, Parent: "v1", VLAN: 2}),
			want: [][]string{{`spec.interfaces[7].parent: Invalid value: "v1": dependency cycle: v1 -> v2 -> v1`}}},
		{name: "bad type", mut: iface(3, func(in *v1.PodInterface) { in.Type = "gre" }),
			want: [][]string{{`spec.interfaces[3].type: Unsupported value: "gre"`}, {`spec.interfaces[3].parent: Invalid value: "eth0": only for type vlan`},
				{`spec.interfaces[3].vlan: Invalid value: 20: only for type vlan`}}},

		// Names.
		{name: "named like the primary", mut: iface(3, func(in *v1.PodInterface) { in.Name = "eth0"; in.Parent = "net1" }),
			want: [][]string{{`spec.interfaces[3].name: Invalid value: "eth0": is the name of the primary interface`}, {`spec.interfaces[4].ports[0]: Invalid value: "vlan20"`}}},
		{name: "named lo", mut: iface(5, func(in *v1.PodInterface) { in.Name = "lo" }),
			want: [][]string{{`spec.interfaces[5].name: Invalid value: "lo": is reserved in every network namespace`}}},
		{name: "named all", mut: iface(5, func(in *v1.PodInterface) { in.Name = "all" }),
			want: [][]string{{`spec.interfaces[5].name: Invalid value: "all": is reserved`}}},
		{name: "name of 16 bytes", mut: iface(5, func(in *v1.PodInterface) { in.Name = "net3-0123456789a" }),
			want: [][]string{{`spec.interfaces[5].name: Invalid value: "net3-0123456789a": interface name has 16 bytes, at most 15`}}},
		{name: "primary named lo", mut: func(s *v1.PodNetworkConfigSpec) { s.Primary.Name = "lo" },
			want: [][]string{{`spec.primary.name: Invalid value: "lo"`}, {`spec.interfaces[3].parent: Invalid value: "eth0"`}}},
		{name: "same name twice", mut: iface(5, func(in *v1.PodInterface) { in.Name = "net2" }),
			want: [][]string{{`spec.interfaces[5].name: Duplicate value: "net2"`}}},

		// MTU.
		{name: "MTU below 576", mut: func(s *v1.PodNetworkConfigSpec) { s.Primary.MTU = ptr.To[int32](575) },
			want: [][]string{{`spec.primary.mtu: Invalid value: 575: MTU must be within 576..9000`}}},
		{name: "transmit queue too long", mut: func(s *v1.PodNetworkConfigSpec) { s.Primary.TxQueueLen = ptr.To[int32](100001) },
			want: [][]string{{`spec.primary.txQueueLen: Invalid value: 100001: transmit queue length must be within 0..100000`}}},
		{name: "MTU above 9000", mut: iface(2, func(in *v1.PodInterface) { in.MTU = ptr.To[int32](9001) }),
			want: [][]string{{`spec.interfaces[2].mtu: Invalid value: 9001: MTU must be within 576..9000`}}},
		{name: "veth above its network", mut: iface(0, func(in *v1.PodInterface) { in.MTU = ptr.To[int32](1501) }),
			want: [][]string{{`spec.interfaces[0].mtu: Invalid value: 1501: above the MTU 1500 of network "tenant-a-net"`}}},
		{name: "vlan above its parent", mut: iface(3, func(in *v1.PodInterface) { in.MTU = ptr.To[int32](1401) }),
			want: [][]string{{`spec.interfaces[3].mtu: Invalid value: 1401: above the MTU 1400 of its parent eth0`}}},
		{name: "vlan above its veth parent's network MTU", mut: iface(2, func(in *v1.PodInterface) { in.MTU = ptr.To[int32](1600) }),
			want: [][]string{{`spec.interfaces[2].mtu: Invalid value: 1600: above the MTU 1500 of its parent net1`}}},
		{name: "IPv6 below 1280", mut: iface(0, func(in *v1.PodInterface) { in.MTU = ptr.To[int32](1200) }),
			want: [][]string{{`spec.interfaces[0].mtu: Invalid value: 1200: the interface has an IPv6 pool`}}},

		// Pools.
		{name: "address outside the network's subnet", mut: iface(0, func(in *v1.PodInterface) { in.Addresses.Static = []string{"10.41.0.10"} }),
			want: [][]string{{`spec.interfaces[0].addresses.static[0]: Invalid value: "10.41.0.10": outside the subnets of network "tenant-a-net" (subnets 10.40.0.0/24, fd00:40::/64)`}}},
		{name: "range with the gateway", mut: iface(0, func(in *v1.PodInterface) { in.Addresses.Ranges = []string{"10.40.0.0/26"}; in.Addresses.Static = nil }),
			want: [][]string{{`spec.interfaces[0].addresses.ranges[0]: Invalid value: "10.40.0.0/26": contains the gateway 10.40.0.1`}, {`contains the network address 10.40.0.0`}}},
		{name: "two ranges of a family", mut: iface(0, func(in *v1.PodInterface) { in.Addresses.Ranges = []string{"10.40.0.64/27", "10.40.0.128/27"} }),
			want: [][]string{{`spec.interfaces[0].addresses.ranges[1]: Invalid value: "10.40.0.128/27": a second IPv4 range`}}},
		{name: "free-form vlan pool: static outside its range", mut: iface(2, func(in *v1.PodInterface) { in.Addresses.Static = []string{"192.168.11.1"} }),
			want: [][]string{{`spec.interfaces[2].addresses.static[0]: Invalid value: "192.168.11.1": outside the IPv4 range of the interface`}}},
		{name: "pools of one config overlap", mut: iface(4, func(in *v1.PodInterface) { in.Addresses.Ranges = []string{"192.168.10.128/25"} }),
			want: [][]string{{`spec.interfaces[4].addresses.ranges[0]: Invalid value: "192.168.10.128/25": overlaps the pool of interface net1.10: 192.168.10.128/25 overlaps 192.168.10.0/24`}}},
		{name: "overlaps another tenant's pool on the network", mut: iface(1, func(in *v1.PodInterface) { in.Addresses.Ranges = []string{"10.60.0.64/26"} }),
			want: [][]string{{`spec.interfaces[1].addresses.ranges[0]: Invalid value: "10.60.0.64/26": overlaps the pool of PodNetworkConfig tenant-b/other (interface net1) on network "shared-net": 10.60.0.64/26 overlaps 10.60.0.64/27`}}},
		{name: "static in another tenant's pool", mut: iface(1, func(in *v1.PodInterface) { in.Addresses.Static = []string{"10.60.0.200"} }),
			want: [][]string{{`spec.interfaces[1].addresses.static[0]: Invalid value: "10.60.0.200": overlaps the pool of PodNetworkConfig tenant-b/other`, `both have 10.60.0.200`}}},
		{name: "free-form pools on one network overlap", mut: iface(5, func(in *v1.PodInterface) {
			in.Addresses = &v1.PodAddresses{Ranges: []string{"172.16.0.0/23"}}
		}), want: [][]string{{`spec.interfaces[5].addresses.ranges[0]: Invalid value: "172.16.0.0/23": overlaps the pool of PodNetworkConfig tenant-b/other (interface net2) on network "open-net"`}}},
		{name: "same free-form vlan pool as another tenant: allowed"},

		// Routes.
		{name: "route destination not a network", mut: func(s *v1.PodNetworkConfigSpec) { s.Routes[0].Destination = "10.100.1.0/16" },
			want: [][]string{{`spec.routes[0].destination: Invalid value: "10.100.1.0/16": not a network address (did you mean 10.100.0.0/16?); or default (IPv4) / default6 (IPv6)`}}},
		{name: "route destination garbage", mut: func(s *v1.PodNetworkConfigSpec) { s.Routes[0].Destination = "everywhere" },
			want: [][]string{{`spec.routes[0].destination: Invalid value: "everywhere": not a CIDR`}}},
		{name: "route gateway of the other family", mut: func(s *v1.PodNetworkConfigSpec) { s.Routes[1].Gateway = "10.40.0.1" },
			want: [][]string{{`spec.routes[1].gateway: Invalid value: "10.40.0.1": another IP family than the destination default6`}}},
		{name: "route gateway not an address", mut: func(s *v1.PodNetworkConfigSpec) { s.Routes[0].Gateway = "10.40.0.1/24" },
			want: [][]string{{`spec.routes[0].gateway: Invalid value: "10.40.0.1/24": not an IP address`}}},
		{name: "route via an interface the pod does not have", mut: func(s *v1.PodNetworkConfigSpec) { s.Routes[2].Interface = "eth9" },
			want: [][]string{{`spec.routes[2].interface: Invalid value: "eth9": not an interface of the pod (eth0, net1, net2, net1.10, vlan20, br0, net3)`}}},
		{name: "on-link route without interface", mut: func(s *v1.PodNetworkConfigSpec) { s.Routes[2].Interface = "" },
			want: [][]string{{`spec.routes[2].interface: Required value: an on-link route needs its interface`}}},
		{name: "route twice", mut: func(s *v1.PodNetworkConfigSpec) {
			s.Routes = append(s.Routes, v1.PodRoute{Destination: "::/0", Interface: "net1"})
		},
			want: [][]string{{`spec.routes[3].destination: Duplicate value: "::/0"`}}},

		// Sysctls.
		{name: "sysctl of the host", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[0].Name = "kernel.shmmax" },
			want: [][]string{{`spec.sysctls[0].name: Invalid value: "kernel.shmmax": not in the allow-list of pod sysctls: net.ipv4.conf.<if>.{rp_filter,`, "net.ipv4.ping_group_range"}}},
		{name: "sysctl key not listed", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[0].Name = "net.ipv4.conf.net1.accept_local" },
			want: [][]string{{`spec.sysctls[0].name: Invalid value: "net.ipv4.conf.net1.accept_local": not in the allow-list`}}},
		{name: "sysctl of an interface the pod does not have", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[0].Name = "net.ipv4.conf.eth9.rp_filter" },
			want: [][]string{{`spec.sysctls[0].name: Invalid value: "net.ipv4.conf.eth9.rp_filter": not in the allow-list of pod sysctls: eth9 is not an interface of the pod`}}},
		{name: "sysctl in slash form", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[0].Name = "net/ipv4/conf/net1/rp_filter" },
			want: [][]string{{`spec.sysctls[0].name: Invalid value: "net/ipv4/conf/net1/rp_filter": not in the allow-list of pod sysctls: write the dotted form`}}},
		{name: "sysctl value out of range", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[0].Value = "3" },
			want: [][]string{{`spec.sysctls[0].value: Invalid value: "3": not a value this sysctl takes: "3" is not a number within 0..2`}}},
		{name: "arp_ignore 5", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[1].Value = "5" },
			want: [][]string{{`spec.sysctls[1].value: Invalid value: "5": not a value this sysctl takes: arp_ignore takes 0..3 or 8`}}},
		{name: "port range reversed", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[3].Value = "30000 20000" },
			want: [][]string{{`spec.sysctls[3].value: Invalid value: "30000 20000": not a value this sysctl takes: the low end 30000 is above the high end 20000`}}},
		{name: "port range of one number", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[3].Value = "30000" },
			want: [][]string{{`spec.sysctls[3].value: Invalid value: "30000": not a value this sysctl takes: write two numbers`}}},
		{name: "privileged ports", mut: func(s *v1.PodNetworkConfigSpec) { s.Sysctls[3].Value = "80 30000" },
			want: [][]string{{`spec.sysctls[3].value: Invalid value: "80 30000"`, `"80" is not a number within 1024..65535`}}},

		// Pod selector.
		{name: "bad pod selector", mut: func(s *v1.PodNetworkConfigSpec) { s.PodSelector.MatchLabels = map[string]string{"a b": "c"} },
			want: [][]string{{`spec.podSelector.matchLabels: Invalid value: "a b"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.ns
			if ns == "" {
				ns = "tenant-a"
			}
			snap := tt.snap
			if snap == nil {
				snap = podSnapshot()
			}
			obj := podConfig(ns, "cnf", nil)
			if tt.ns == "tenant-b" {
				obj.Name = "other"
			}
			if tt.mut != nil {
				tt.mut(&obj.Spec)
			}
			checkErrs(t, ValidatePodNetworkConfig(obj, snap), tt.want)
		})
	}
}

func TestNetworkAdmitsNamespace(t *testing.T) {
	for _, tt := range []struct {
		name string
		sel  *metav1.LabelSelector
		ns   map[string]string
		want bool
		err  bool
	}{
		{name: "unset admits none", ns: map[string]string{"tenant": "a"}},
		{name: "empty admits all", sel: &metav1.LabelSelector{}, want: true},
		{name: "by label", sel: tenants("a"), ns: map[string]string{"tenant": "a"}, want: true},
		{name: "other label", sel: tenants("a"), ns: map[string]string{"tenant": "b"}},
		{name: "by name", sel: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "t"}},
			ns: map[string]string{"kubernetes.io/metadata.name": "t"}, want: true},
		{name: "bad selector", sel: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}, err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l2 := podNet("n", 1, tt.sel)
			got, err := NetworkAdmitsNamespace(&l2, tt.ns)
			if got != tt.want || (err != nil) != tt.err {
				t.Errorf("= %t, %v; want %t, error %t", got, err, tt.want, tt.err)
			}
		})
	}
	if ok, err := NetworkAdmitsNamespace(nil, nil); ok || err != nil {
		t.Errorf("no network: %t %v", ok, err)
	}
}

func TestPodSysctlAllowed(t *testing.T) {
	ifaces := []string{"eth0", "net1", "net1.10"}
	for _, tt := range []struct {
		name, value string
		want        error
	}{
		{"net.ipv4.conf.eth0.rp_filter", "0", nil},
		{"net.ipv4.conf.net1.10.forwarding", "1", nil},
		{"net.ipv4.conf.default.proxy_arp", "1", nil},
		{"net.ipv4.conf.all.send_redirects", "0", nil},
		{"net.ipv4.conf.net1.accept_redirects", "0", nil},
		{"net.ipv4.conf.net1.arp_announce", "2", nil},
		{"net.ipv6.conf.net1.accept_ra", "2", nil},
		{"net.ipv6.conf.default.disable_ipv6", "1", nil},
		{"net.ipv6.conf.all.forwarding", "1", nil},
		{"net.ipv6.conf.eth0.autoconf", "0", nil},
		{"net.ipv4.ip_forward", "1", nil},
		{"net.ipv4.ip_local_port_range", "1024 65535", nil},
		{"net.ipv4.ping_group_range", "1 0", ErrSysctlValue},
		{"net.ipv4.ip_forward", "2", ErrSysctlValue},
		{"net.ipv4.ip_forward", "yes", ErrSysctlValue},
		{"net.ipv4.ip_forward", "", ErrSysctlValue},
		{"net.ipv6.conf.net1.rp_filter", "0", ErrSysctlNotAllowed},
		{"net.ipv4.conf.net1.accept_ra", "0", ErrSysctlNotAllowed},
		{"net.ipv4.conf.rp_filter", "0", ErrSysctlNotAllowed},
		{"net.ipv4.conf..rp_filter", "0", ErrSysctlNotAllowed},
		{"net.ipv4.conf.eth1.rp_filter", "0", ErrSysctlNotAllowed},
		{"net.core.somaxconn", "1024", ErrSysctlNotAllowed},
		{"net.ipv4.tcp_mem", "1 2 3", ErrSysctlNotAllowed},
		{"vm.swappiness", "0", ErrSysctlNotAllowed},
		{"net/ipv4/ip_forward", "1", ErrSysctlNotAllowed},
	} {
		err := PodSysctlAllowed(tt.name, tt.value, ifaces)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("PodSysctlAllowed(%q, %q) = %v, want %v", tt.name, tt.value, err, tt.want)
		}
		if errors.Is(err, ErrSysctlNotAllowed) && !strings.Contains(err.Error(), "net.ipv4.ip_forward") && !strings.Contains(err.Error(), "not an interface of the pod") {
			t.Errorf("PodSysctlAllowed(%q): %v does not name the allow-list", tt.name, err)
		}
	}
}

func TestLayer2PodNamespaceSelector(t *testing.T) {
	obj := l2("x", func(s *v1.Layer2NetworkConfigurationSpec) {
		s.PodNamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: "Near"}}}
	})
	checkErrs(t, ValidateLayer2NetworkConfiguration(obj, nil), [][]string{{`spec.podNamespaceSelector.matchExpressions[0].operator: Invalid value: "Near"`}})
}

func TestPodNetworkWarnings(t *testing.T) {
	s := podSnapshot()
	s.PodNetworkConfigs = append(s.PodNetworkConfigs, *podConfig("tenant-a", "cnf", nil))
	shared := s.layer2("shared-net").DeepCopy()
	if got := PodNetworkWarnings(shared, s); len(got) != 0 {
		t.Errorf("unchanged network: warnings %q", got)
	}
	shared.Spec.PodNamespaceSelector = tenants("b")
	shared.Spec.AnycastGateways = []string{"10.60.0.1/25"}
	got := PodNetworkWarnings(shared, s)
	want := []string{
		`PodNetworkConfig tenant-a/cnf, interface net2: spec.podNamespaceSelector no longer admits namespace "tenant-a": its pods lose the interface`,
		`PodNetworkConfig tenant-b/other, interface net1: its address pool no longer fits the network: spec.interfaces[0].addresses.static[0]: Invalid value: "10.60.0.200": outside the subnets`,
	}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d: %s\nwant %s...", i, got[i], want[i])
		}
	}
}

func TestResolvePodInterface(t *testing.T) {
	s := podSnapshot()
	path := field.NewPath("spec", "interfaces").Index(0)
	cfg := podConfig("tenant-a", "cnf", nil)
	r := ResolvePodInterface(path, &cfg.Spec.Interfaces[0], "tenant-a", s.NamespaceLabels["tenant-a"], s.layer2("tenant-a-net"))
	if !r.Admitted || r.Pool == nil || len(r.Errs) > 0 || !r.Pool.Has(podaddr.IPv4) || !r.Pool.Has(podaddr.IPv6) {
		t.Errorf("admitted veth: %+v", r)
	}
	r = ResolvePodInterface(path, &cfg.Spec.Interfaces[0], "tenant-b", s.NamespaceLabels["tenant-b"], s.layer2("tenant-a-net"))
	if r.Admitted || r.Pool != nil || len(r.Errs) != 1 {
		t.Errorf("veth of another tenant's network: %+v", r)
	}
	r = ResolvePodInterface(path, &cfg.Spec.Interfaces[2], "tenant-b", nil, nil)
	if !r.Admitted || r.Pool == nil {
		t.Errorf("vlan: %+v", r)
	}
}
