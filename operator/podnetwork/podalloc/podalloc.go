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

// Package podalloc plans the addresses of one PodNetworkConfig's pods (status.allocations): per selected pod, per
// interface with a pool, one address per IP family of the pool. It is pure: the controller feeds it the pools
// (internal/podnetwork/podaddr, resolved by internal/validation), the selected pods, the current allocations and what other
// PodNetworkConfigs on the same networks hold.
//
// Rules:
//   - An allocation is kept while its pod (by UID) is selected, its interface still has a pool that holds the
//     address (the prefix length follows the subnet), and nobody before it claims the address: stable across
//     reconciles and operator restarts.
//   - An address is never given twice: not to two pods or interfaces of the resource, and not when another
//     PodNetworkConfig on the same network holds it (pools do not overlap by admission; this covers a race of two
//     admissions). Of two resources holding one address, the one created first (then by namespace/name) keeps it.
//   - New addresses go to pods in creation order (then by name), interfaces in spec order, IPv4 before IPv6; a pool
//     hands out its static addresses first, then its range in ascending order. A pod whose pool is exhausted gets
//     no address of that family (Missing) until one is freed.
//   - An allocation of a pod that is gone or no longer selected, or of an interface deleted, is dropped: the
//     address is free at once.
package podalloc

import (
	"cmp"
	"net/netip"
	"slices"
	"time"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/podnetwork/podaddr"
)

// Interface is one interface of the resource's spec.
type Interface struct {
	Name string
	// Network is the layer-2 network a veth or macvlan joins; "" for interfaces inside the pod.
	Network string
	// Pool hands out its addresses; nil: the interface gets none.
	Pool *podaddr.Pool
}

// Pod is a selected pod.
type Pod struct {
	Name, UID string
	Created   time.Time
}

// Input is what one plan starts from.
type Input struct {
	// Interfaces in spec order, Pods the selected pods (any order).
	Interfaces []Interface
	Pods       []Pod
	// Current is status.allocations.
	Current []v1.PodAddressAllocation
	// Others are, per network, the addresses other PodNetworkConfigs on it hold: true when this resource must
	// give the address up (the other one comes first), false when it must only not take it.
	Others map[string]map[netip.Addr]bool
}

// Missing is an address a pod needs and did not get: the family of the interface's pool is exhausted.
type Missing struct {
	Pod, Interface string
	Family         podaddr.Family
}

// Plan is the new status.allocations, sorted by pod name, interface (spec order) and family, and what is missing.
type Plan struct {
	Allocations []v1.PodAddressAllocation
	Missing     []Missing
}

type slot struct {
	uid   string
	iface int
	fam   podaddr.Family
}

// Allocate plans the allocations.
func Allocate(in Input) Plan {
	a := newAllocator(in)
	a.keepCurrent()
	var plan Plan
	plan.Missing = a.handOut()
	plan.Allocations = a.allocations()
	slices.SortFunc(plan.Missing, func(x, y Missing) int {
		return cmp.Or(cmp.Compare(x.Pod, y.Pod), cmp.Compare(a.ifaces[x.Interface], a.ifaces[y.Interface]), cmp.Compare(x.Family, y.Family))
	})
	return plan
}

// allocator is the state of one plan: the pods in creation order, and the addresses given so far.
type allocator struct {
	in     Input
	pods   []Pod
	order  map[string]int // UID -> position in pods
	ifaces map[string]int // interface name -> position in in.Interfaces
	have   map[slot]netip.Prefix
	used   map[netip.Addr]bool
}

// newAllocator sorts the pods by creation (then name, UID) and indexes them and the interfaces.
func newAllocator(in Input) *allocator {
	pods := slices.Clone(in.Pods)
	slices.SortFunc(pods, func(a, b Pod) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	order := map[string]int{} // UID -> position in pods
	for i, p := range pods {
		order[p.UID] = i
	}
	ifaces := map[string]int{}
	for i, f := range in.Interfaces {
		ifaces[f.Name] = i
	}
	return &allocator{in: in, pods: pods, order: order, ifaces: ifaces, have: map[slot]netip.Prefix{}, used: map[netip.Addr]bool{}}
}

// other says whether another resource on the interface's network holds a (held), and whether this one must give
// it up (yield).
func (al *allocator) other(iface int, a netip.Addr) (held, yield bool) {
	yield, held = al.in.Others[al.in.Interfaces[iface].Network][a]
	return held, yield
}

// keepCurrent keeps what is still right of the current allocations, older pods first (of two pods holding one
// address, the older keeps it).
func (al *allocator) keepCurrent() {
	current := slices.Clone(al.in.Current)
	rank := func(a v1.PodAddressAllocation) int {
		if i, ok := al.order[a.PodUID]; ok {
			return i
		}
		return len(al.pods)
	}
	slices.SortStableFunc(current, func(a, b v1.PodAddressAllocation) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(al.ifaces[a.Interface], al.ifaces[b.Interface]), cmp.Compare(a.Address, b.Address))
	})
	for _, a := range current {
		al.keep(a)
	}
}

// keep keeps one current allocation when its pod is selected, its interface's pool holds the address, its slot is
// not yet filled and nobody before it (nor another resource that comes first) claims the address.
func (al *allocator) keep(a v1.PodAddressAllocation) {
	i, podOK := al.order[a.PodUID]
	fi, ifaceOK := al.ifaces[a.Interface]
	if !podOK || !ifaceOK || al.in.Interfaces[fi].Pool == nil {
		return
	}
	p, err := netip.ParsePrefix(a.Address)
	if err != nil {
		return
	}
	pfx, ok := al.in.Interfaces[fi].Pool.Contains(p.Addr())
	if !ok {
		return
	}
	s := slot{al.pods[i].UID, fi, podaddr.FamilyOf(pfx.Addr())}
	if _, dup := al.have[s]; dup {
		return
	}
	if _, yield := al.other(fi, pfx.Addr()); al.used[pfx.Addr()] || yield {
		return
	}
	al.have[s], al.used[pfx.Addr()] = pfx, true
}

// handOut gives the pods, in creation order, the addresses they still lack, and returns those it could not give
// (their pool's family is exhausted).
func (al *allocator) handOut() []Missing {
	var missing []Missing
	for _, pod := range al.pods {
		for fi, f := range al.in.Interfaces {
			if f.Pool == nil {
				continue
			}
			for _, fam := range podaddr.Families() {
				s := slot{pod.UID, fi, fam}
				if _, ok := al.have[s]; ok || !f.Pool.Has(fam) {
					continue
				}
				pfx, ok := f.Pool.Next(fam, func(a netip.Addr) bool { held, _ := al.other(fi, a); return al.used[a] || held })
				if !ok {
					missing = append(missing, Missing{Pod: pod.Name, Interface: f.Name, Family: fam})
					continue
				}
				al.have[s], al.used[pfx.Addr()] = pfx, true
			}
		}
	}
	return missing
}

// allocations are the addresses given, sorted by pod name (then UID), interface (spec order) and family.
func (al *allocator) allocations() []v1.PodAddressAllocation {
	var out []v1.PodAddressAllocation
	byName := slices.Clone(al.pods)
	slices.SortFunc(byName, func(a, b Pod) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID)) })
	for _, pod := range byName {
		for fi, f := range al.in.Interfaces {
			for _, fam := range podaddr.Families() {
				if pfx, ok := al.have[slot{pod.UID, fi, fam}]; ok {
					out = append(out, v1.PodAddressAllocation{
						Pod: pod.Name, PodUID: pod.UID, Interface: f.Name, Address: pfx.String()})
				}
			}
		}
	}
	return out
}
