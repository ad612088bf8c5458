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

// Package podaddr holds the rules of the address pools of PodNetworkConfig interfaces (spec.interfaces[].addresses)
// in one place, for admission (internal/validation) and for the operator's allocator (operator/podnetwork/podalloc):
// which subnet a pool lies in, which of its addresses are handed out, with which prefix length, and whether two
// pools overlap. It is pure.
//
// A network with anycast gateways has a subnet per gateway (10.40.0.1/24: 10.40.0.0/24). Every range and static
// address of a pool on it must lie inside one of those subnets, and must not contain a gateway address nor the
// subnet's network address or IPv4 broadcast address: every address of a range is handed out (static addresses
// first). Each address gets the prefix length of its subnet (10.40.0.65/24), so the pod is on-link with the gateway.
//
// Without a subnet - an interface inside the pod (vlan, bridge), or a network without anycast gateways - a pool is
// free-form: its range of a family is that family's subnet (addresses get the range's prefix length; the range's
// network address and IPv4 broadcast address are not handed out unless it is a /31, /32, /127 or /128), and a
// static address must lie inside the range of its family (that is where its prefix length comes from).
package podaddr

import (
	"fmt"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Family is an IP family: index into the per-family parts of a Pool.
type Family int

const (
	IPv4 Family = iota
	IPv6
)

// Families are both families in their allocation order.
func Families() [2]Family { return [2]Family{IPv4, IPv6} }

func (f Family) String() string {
	if f == IPv6 {
		return "IPv6"
	}
	return "IPv4"
}

// FamilyOf is the family of an address.
func FamilyOf(a netip.Addr) Family {
	if a.Is4() {
		return IPv4
	}
	return IPv6
}

// Network is the subnets of a layer-2 network, from its anycast gateways. A Network without subnets (nil, or a
// network without gateways) makes pools free-form.
type Network struct {
	// Name is the Layer2NetworkConfiguration's, for messages.
	Name string
	// Subnets are the masked gateway prefixes, Gateways the gateway addresses, in the order of anycastGateways.
	Subnets  []netip.Prefix
	Gateways []netip.Addr
}

// NetworkOf returns the subnets of a Layer2NetworkConfiguration. Gateways that do not parse are left out (admission
// refuses them).
func NetworkOf(l2 *v1.Layer2NetworkConfiguration) *Network {
	n := &Network{Name: l2.Name}
	for _, g := range l2.Spec.AnycastGateways {
		p, err := netip.ParsePrefix(g)
		if err != nil || p.Addr().Zone() != "" {
			continue
		}
		n.Subnets = append(n.Subnets, p.Masked())
		n.Gateways = append(n.Gateways, p.Addr())
	}
	return n
}

func (n *Network) hasSubnets() bool { return n != nil && len(n.Subnets) > 0 }

// subnetOf is the most specific subnet of the network holding all of p, and whether there is one.
func (n *Network) subnetOf(p netip.Prefix) (netip.Prefix, bool) {
	var best netip.Prefix
	for _, s := range n.Subnets {
		if s.Addr().BitLen() == p.Addr().BitLen() && s.Bits() <= p.Bits() && s.Contains(p.Addr()) &&
			(!best.IsValid() || s.Bits() > best.Bits()) {
			best = s
		}
	}
	return best, best.IsValid()
}

func (n *Network) describe() string {
	var s []string
	for _, p := range n.Subnets {
		s = append(s, p.String())
	}
	return fmt.Sprintf("network %q (subnets %s)", n.Name, strings.Join(s, ", "))
}

// Pool is the checked address pool of one interface: per family an optional range and static addresses.
type Pool struct {
	fams [2]famPool
}

type famPool struct {
	// static are the static addresses with their prefix lengths, in list order; staticIndex their indexes in
	// PodAddresses.Static.
	static      []netip.Prefix
	staticIndex []int
	// rng is the range (invalid: none), rngIndex its index in PodAddresses.Ranges; rngBits the prefix length
	// its addresses get.
	rng      netip.Prefix
	rngIndex int
	rngBits  int
	// reserved are addresses of rng not handed out by the range: the free-form range's network and broadcast
	// addresses, and the static addresses (handed out as statics).
	reserved map[netip.Addr]bool
}

// Has reports whether the pool hands out addresses of family f: a pod gets one address per such family.
func (p *Pool) Has(f Family) bool {
	fp := &p.fams[f]
	return len(fp.static) > 0 || fp.rng.IsValid()
}

// Contains returns a with the prefix length the pool gives it, when the pool hands out a.
func (p *Pool) Contains(a netip.Addr) (netip.Prefix, bool) {
	if !a.IsValid() {
		return netip.Prefix{}, false
	}
	fp := &p.fams[FamilyOf(a)]
	for _, s := range fp.static {
		if s.Addr() == a {
			return s, true
		}
	}
	if fp.rng.IsValid() && fp.rng.Contains(a) && !fp.reserved[a] {
		return netip.PrefixFrom(a, fp.rngBits), true
	}
	return netip.Prefix{}, false
}

// Next returns the first address of family f that used does not claim, with its prefix length: the static
// addresses in list order, then the range in ascending order. false: the family is exhausted (or not in the pool).
func (p *Pool) Next(f Family, used func(netip.Addr) bool) (netip.Prefix, bool) {
	fp := &p.fams[f]
	for _, s := range fp.static {
		if !used(s.Addr()) {
			return s, true
		}
	}
	if !fp.rng.IsValid() {
		return netip.Prefix{}, false
	}
	for a := fp.rng.Addr(); a.IsValid() && fp.rng.Contains(a); a = a.Next() {
		if !fp.reserved[a] && !used(a) {
			return netip.PrefixFrom(a, fp.rngBits), true
		}
	}
	return netip.Prefix{}, false
}

// Overlap is an item of a pool that can hand out an address another pool can hand out too.
type Overlap struct {
	// Field is "ranges" or "static", Index the item's index in it, Value the item as written.
	Field string
	Index int
	Value string
	// Detail says what it meets, e.g. "10.40.0.64/27 overlaps 10.40.0.80/28".
	Detail string
}

// Overlap returns the first item of p that meets q (ranges before statics, IPv4 before IPv6), or nil when the
// pools are disjoint.
func (p *Pool) Overlap(q *Pool) *Overlap {
	for _, f := range Families() {
		a, b := &p.fams[f], &q.fams[f]
		if a.rng.IsValid() {
			if b.rng.IsValid() && a.rng.Overlaps(b.rng) {
				return &Overlap{"ranges", a.rngIndex, a.rng.String(), fmt.Sprintf("%s overlaps %s", a.rng, b.rng)}
			}
			for _, t := range b.static {
				if a.rng.Contains(t.Addr()) {
					return &Overlap{"ranges", a.rngIndex, a.rng.String(), fmt.Sprintf("%s contains %s", a.rng, t.Addr())}
				}
			}
		}
		for i, s := range a.static {
			if b.rng.IsValid() && b.rng.Contains(s.Addr()) {
				return &Overlap{"static", a.staticIndex[i], s.Addr().String(), fmt.Sprintf("%s lies in %s", s.Addr(), b.rng)}
			}
			for _, t := range b.static {
				if s.Addr() == t.Addr() {
					return &Overlap{"static", a.staticIndex[i], s.Addr().String(), fmt.Sprintf("both have %s", s.Addr())}
				}
			}
		}
	}
	return nil
}

// Parse checks the pool of one interface against its network (nil or without gateways: free-form) and returns
// it. path is the interface's addresses field; the errors name the range or static address and its value. A pool
// with errors is nil.
func Parse(path *field.Path, a *v1.PodAddresses, n *Network) (*Pool, field.ErrorList) {
	if a == nil {
		return nil, nil
	}
	var errs field.ErrorList
	if len(a.Ranges) == 0 && len(a.Static) == 0 {
		return nil, field.ErrorList{field.Required(path.Child("ranges"), "a range or a static address (or leave addresses out)")}
	}
	p := &Pool{}
	rp, sp := path.Child("ranges"), path.Child("static")
	// Ranges first: a free-form static address takes its prefix length from the range of its family.
	for i, s := range a.Ranges {
		errs = append(errs, p.addRange(rp.Index(i), i, s, n)...)
	}
	seen := map[netip.Addr]bool{}
	for i, s := range a.Static {
		errs = append(errs, p.addStatic(sp.Index(i), i, s, n, seen)...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// addRange checks range s (ranges[i], at path) and sets it as the range of its family, with the prefix length its
// addresses get and the addresses it does not hand out.
func (p *Pool) addRange(path *field.Path, i int, s string, n *Network) field.ErrorList {
	r, ferr := parseRange(path, s)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	fp := &p.fams[FamilyOf(r.Addr())]
	if fp.rng.IsValid() {
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf(
			"a second %s range: at most one range per IP family (the first is %s)", FamilyOf(r.Addr()), fp.rng))}
	}
	fp.rng, fp.rngIndex, fp.reserved = r, i, map[netip.Addr]bool{}
	if n.hasSubnets() {
		sub, ok := n.subnetOf(r)
		if !ok {
			return field.ErrorList{field.Invalid(path, s, "outside the subnets of "+n.describe())}
		}
		fp.rngBits = sub.Bits()
		var errs field.ErrorList
		for _, bad := range subnetExcluded(n, sub) {
			if r.Contains(bad.addr) {
				errs = append(errs, field.Invalid(path, s, fmt.Sprintf(
					"contains %s %s of network %q: every address of a range is handed out; pick a range beside it",
					bad.what, bad.addr, n.Name)))
			}
		}
		return errs
	}
	fp.rngBits = r.Bits()
	for _, x := range ownExcluded(r) {
		fp.reserved[x] = true
	}
	return nil
}

// addStatic checks static address s (static[i], at path; seen: the addresses before it, updated) and adds it to
// its family with its prefix length: its subnet's, or without subnets its family's range's.
func (p *Pool) addStatic(path *field.Path, i int, s string, n *Network, seen map[netip.Addr]bool) field.ErrorList {
	addr, ferr := parseStatic(path, s)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	if seen[addr] {
		return field.ErrorList{field.Duplicate(path, s)}
	}
	seen[addr] = true
	fp := &p.fams[FamilyOf(addr)]
	one := netip.PrefixFrom(addr, addr.BitLen())
	var errs field.ErrorList
	var bits int
	switch {
	case n.hasSubnets():
		sub, ok := n.subnetOf(one)
		if !ok {
			return field.ErrorList{field.Invalid(path, s, "outside the subnets of "+n.describe())}
		}
		bits = sub.Bits()
		for _, bad := range subnetExcluded(n, sub) {
			if bad.addr == addr {
				errs = append(errs, field.Invalid(path, s, fmt.Sprintf("is %s %s of network %q", bad.what, bad.addr, n.Name)))
			}
		}
	case fp.rng.IsValid() && fp.rng.Contains(addr):
		bits = fp.rng.Bits()
		if fp.reserved[addr] {
			errs = append(errs, field.Invalid(path, s, fmt.Sprintf(
				"is the network or broadcast address of the range %s", fp.rng)))
		}
	default:
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf(
			"outside the %s range of the interface: without a network subnet (no network, or one without anycastGateways) "+
				"a static address must lie in the range of its family, which gives its prefix length", FamilyOf(addr)))}
	}
	fp.static, fp.staticIndex = append(fp.static, netip.PrefixFrom(addr, bits)), append(fp.staticIndex, i)
	if fp.rng.IsValid() && fp.rng.Contains(addr) {
		fp.reserved[addr] = true
	}
	return errs
}

type excluded struct {
	what string
	addr netip.Addr
}

// subnetExcluded are the addresses of a subnet of the network no pool may hand out: the gateways in it, its
// network address and its IPv4 broadcast address.
func subnetExcluded(n *Network, sub netip.Prefix) []excluded {
	var out []excluded
	for _, g := range n.Gateways {
		if sub.Contains(g) {
			out = append(out, excluded{"the gateway", g})
		}
	}
	own := ownExcluded(sub)
	if len(own) > 0 {
		out = append(out, excluded{"the network address", own[0]})
	}
	if len(own) > 1 {
		out = append(out, excluded{"the broadcast address", own[1]})
	}
	return out
}

// ownExcluded are a prefix's network address and, for IPv4, its broadcast address; none for the host-only
// prefixes /31, /32, /127 and /128.
func ownExcluded(p netip.Prefix) []netip.Addr {
	bits := p.Addr().BitLen()
	if p.Bits() >= bits-1 {
		return nil
	}
	out := []netip.Addr{p.Masked().Addr()}
	if bits == 32 {
		out = append(out, lastAddr(p))
	}
	return out
}

// lastAddr is the highest address of a prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// unicast refuses what no pod interface can be given.
func unicast(a netip.Addr) string {
	switch {
	case a.Is4In6():
		return "IPv4-mapped IPv6 address: write the IPv4 form"
	case a.IsUnspecified(), a.IsLoopback(), a.IsMulticast(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(),
		a.Is4() && a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "not a unicast address a pod interface can be given (no loopback, link-local, multicast or unspecified)"
	}
	return ""
}

func parseRange(path *field.Path, s string) (netip.Prefix, *field.Error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Zone() != "" {
		return netip.Prefix{}, field.Invalid(path, s, "not a CIDR (address/prefix-length, e.g. 10.40.0.64/27)")
	}
	if msg := unicast(p.Addr()); msg != "" {
		return netip.Prefix{}, field.Invalid(path, s, msg)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, field.Invalid(path, s, fmt.Sprintf("not a network address (did you mean %s?)", m))
	}
	return p, nil
}

func parseStatic(path *field.Path, s string) (netip.Addr, *field.Error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, field.Invalid(path, s, "not an IP address (write the address alone, e.g. 10.40.0.10: the prefix length comes from the subnet)")
	}
	if msg := unicast(a); msg != "" {
		return netip.Addr{}, field.Invalid(path, s, msg)
	}
	return a, nil
}
