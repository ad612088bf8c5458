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

package podalloc

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/podnetwork/podaddr"
)

func pool(t *testing.T, gateways []string, ranges []string, static ...string) *podaddr.Pool {
	t.Helper()
	var n *podaddr.Network
	if gateways != nil {
		n = podaddr.NetworkOf(&v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "net"},
			Spec: v1.Layer2NetworkConfigurationSpec{AnycastGateways: gateways}})
	}
	p, errs := podaddr.Parse(field.NewPath("addresses"), &v1.PodAddresses{Ranges: ranges, Static: static}, n)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return p
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pods are p1, p2, ... created a second apart, UID u-<name>.
func pods(names ...string) []Pod {
	var out []Pod
	for i, n := range names {
		out = append(out, Pod{Name: n, UID: "u-" + n, Created: t0.Add(time.Duration(i) * time.Second)})
	}
	return out
}

// alloc parses "pod/iface=address" (UID u-<pod>).
func alloc(s ...string) []v1.PodAddressAllocation {
	var out []v1.PodAddressAllocation
	for _, a := range s {
		pi, addr, _ := strings.Cut(a, "=")
		pod, iface, _ := strings.Cut(pi, "/")
		out = append(out, v1.PodAddressAllocation{Pod: pod, PodUID: "u-" + pod, Interface: iface, Address: addr})
	}
	return out
}

func show(p Plan) (allocs, missing []string) {
	for _, a := range p.Allocations {
		allocs = append(allocs, fmt.Sprintf("%s/%s=%s", a.Pod, a.Interface, a.Address))
		if a.PodUID != "u-"+a.Pod {
			allocs = append(allocs, "wrong UID "+a.PodUID)
		}
	}
	for _, m := range p.Missing {
		missing = append(missing, fmt.Sprintf("%s/%s/%s", m.Pod, m.Interface, m.Family))
	}
	return allocs, missing
}

func TestAllocate(t *testing.T) {
	gw := []string{"10.40.0.1/24", "fd00:40::1/64"}
	three := func(t *testing.T) []Interface { // three addresses: .70 first, then .64 and .65
		return []Interface{{Name: "net1", Network: "n", Pool: pool(t, gw, []string{"10.40.0.64/31"}, "10.40.0.70")}}
	}
	tests := []struct {
		name        string
		ifaces      func(t *testing.T) []Interface
		pods        []Pod
		current     []v1.PodAddressAllocation
		others      map[string]map[netip.Addr]bool
		want, wantM []string
	}{
		{name: "three pods: statics first, then the range", ifaces: three, pods: pods("p1", "p2", "p3"),
			want: []string{"p1/net1=10.40.0.70/24", "p2/net1=10.40.0.64/24", "p3/net1=10.40.0.65/24"}},
		{name: "a fourth pod: exhausted", ifaces: three, pods: pods("p1", "p2", "p3", "p4"),
			want:  []string{"p1/net1=10.40.0.70/24", "p2/net1=10.40.0.64/24", "p3/net1=10.40.0.65/24"},
			wantM: []string{"p4/net1/IPv4"}},
		{name: "the newest pod waits, whatever its name", ifaces: three,
			pods: []Pod{{Name: "a", UID: "u-a", Created: t0.Add(time.Hour)}, {Name: "b", UID: "u-b", Created: t0}, {Name: "c", UID: "u-c", Created: t0}, {Name: "d", UID: "u-d", Created: t0}},
			want: []string{"b/net1=10.40.0.70/24", "c/net1=10.40.0.64/24", "d/net1=10.40.0.65/24"}, wantM: []string{"a/net1/IPv4"}},
		{name: "stable: kept however the pool would order them", ifaces: three, pods: pods("p1", "p2", "p3"),
			current: alloc("p1/net1=10.40.0.65/24", "p3/net1=10.40.0.70/24"),
			want:    []string{"p1/net1=10.40.0.65/24", "p2/net1=10.40.0.64/24", "p3/net1=10.40.0.70/24"}},
		{name: "a deleted or unselected pod frees its address for the waiting one", ifaces: three, pods: pods("p1", "p3", "p4"),
			current: alloc("p1/net1=10.40.0.70/24", "p2/net1=10.40.0.64/24", "p3/net1=10.40.0.65/24"),
			want:    []string{"p1/net1=10.40.0.70/24", "p3/net1=10.40.0.65/24", "p4/net1=10.40.0.64/24"}},
		{name: "a pod re-created under its name is a new pod", ifaces: three,
			pods:    []Pod{{Name: "p1", UID: "u-p1-again", Created: t0}},
			current: alloc("p1/net1=10.40.0.64/24"),
			want:    []string{"p1/net1=10.40.0.70/24", "wrong UID u-p1-again"}},
		{name: "a deleted interface frees its addresses", ifaces: three, pods: pods("p1"),
			current: alloc("p1/net1=10.40.0.70/24", "p1/net2=10.40.0.64/24"),
			want:    []string{"p1/net1=10.40.0.70/24"}},
		{name: "an interface without a pool gets nothing",
			ifaces: func(t *testing.T) []Interface { return []Interface{{Name: "net1", Network: "n"}} }, pods: pods("p1"),
			current: alloc("p1/net1=10.40.0.70/24")},
		{name: "an address the pool no longer holds is replaced", ifaces: three, pods: pods("p1"),
			current: alloc("p1/net1=10.40.0.99/24"), want: []string{"p1/net1=10.40.0.70/24"}},
		{name: "the prefix length follows the subnet", ifaces: three, pods: pods("p1"),
			current: alloc("p1/net1=10.40.0.65/16"), want: []string{"p1/net1=10.40.0.65/24"}},
		{name: "garbage is dropped", ifaces: three, pods: pods("p1"),
			current: alloc("p1/net1=ten"), want: []string{"p1/net1=10.40.0.70/24"}},
		{name: "one address for two pods: the older keeps it", ifaces: three, pods: pods("p1", "p2"),
			current: alloc("p2/net1=10.40.0.64/24", "p1/net1=10.40.0.64/24"),
			want:    []string{"p1/net1=10.40.0.64/24", "p2/net1=10.40.0.70/24"}},
		{name: "two addresses for one slot: one is kept", ifaces: three, pods: pods("p1", "p2"),
			current: alloc("p1/net1=10.40.0.65/24", "p1/net1=10.40.0.64/24"),
			want:    []string{"p1/net1=10.40.0.64/24", "p2/net1=10.40.0.70/24"}},
		{name: "addresses other resources on the network hold are not taken", ifaces: three, pods: pods("p1", "p2"),
			others: map[string]map[netip.Addr]bool{"n": {netip.MustParseAddr("10.40.0.70"): false, netip.MustParseAddr("10.40.0.64"): true}},
			want:   []string{"p1/net1=10.40.0.65/24"}, wantM: []string{"p2/net1/IPv4"}},
		{name: "an address held by an older resource is given up, by a newer one kept", ifaces: three, pods: pods("p1", "p2"),
			current: alloc("p1/net1=10.40.0.70/24", "p2/net1=10.40.0.64/24"),
			others:  map[string]map[netip.Addr]bool{"n": {netip.MustParseAddr("10.40.0.70"): true, netip.MustParseAddr("10.40.0.64"): false}},
			want:    []string{"p1/net1=10.40.0.65/24", "p2/net1=10.40.0.64/24"}},
		{name: "other networks do not matter", ifaces: three, pods: pods("p1"),
			others: map[string]map[netip.Addr]bool{"m": {netip.MustParseAddr("10.40.0.70"): true}},
			want:   []string{"p1/net1=10.40.0.70/24"}},
		{name: "dual stack, several interfaces, IPv6 exhausted",
			ifaces: func(t *testing.T) []Interface {
				return []Interface{
					{Name: "net1", Network: "n", Pool: pool(t, gw, []string{"10.40.0.64/30", "fd00:40::10/128"})},
					{Name: "net1.7", Pool: pool(t, nil, []string{"192.168.7.0/30"})},
				}
			}, pods: pods("p2", "p1"),
			want: []string{"p1/net1=10.40.0.65/24", "p1/net1.7=192.168.7.2/30",
				"p2/net1=10.40.0.64/24", "p2/net1=fd00:40::10/64", "p2/net1.7=192.168.7.1/30"},
			wantM: []string{"p1/net1/IPv6"}},
		{name: "no pods, no allocations", ifaces: three, current: alloc("p1/net1=10.40.0.70/24")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Interfaces: tt.ifaces(t), Pods: tt.pods, Current: tt.current, Others: tt.others}
			snapshot := slices.Clone(tt.current)
			got, gotM := show(Allocate(in))
			if !slices.Equal(got, tt.want) {
				t.Errorf("allocations\n  %v\nwant\n  %v", got, tt.want)
			}
			if !slices.Equal(gotM, tt.wantM) {
				t.Errorf("missing %v, want %v", gotM, tt.wantM)
			}
			if !slices.Equal(snapshot, in.Current) {
				t.Error("Allocate changed its input")
			}
			// A second plan from the first one's result changes nothing: stable across reconciles.
			in.Current = Allocate(in).Allocations
			if again, _ := show(Allocate(in)); !slices.Equal(again, got) {
				t.Errorf("second plan\n  %v\ndiffers from the first\n  %v", again, got)
			}
		})
	}
}
