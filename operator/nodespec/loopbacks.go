package nodespec

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strings"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// LoopbackKey names one loopback of a VRF. Addresses are allocated per key: the same subnet on two loopbacks
// (or two VRFs) is two independent pools.
type LoopbackKey struct{ VRF, Loopback string }

// LoopbackPool is one loopback of a revision with the nodes that get it.
type LoopbackPool struct {
	LoopbackKey
	// Subnet the addresses come from (CIDR).
	Subnet string
	// Configs are the VRFRouteConfigurations that define the loopback, for messages.
	Configs []string
	// Nodes get one address each.
	Nodes []string
}

// LoopbackHolding is an address a node carries today for a loopback (its current NodeNetworkConfig).
type LoopbackHolding struct {
	LoopbackKey
	Node    string
	Address string // "10.0.0.3/32" (a bare address is accepted too)
}

// LoopbackShortage is a subnet with fewer host addresses than nodes that need one. It fails the revision.
type LoopbackShortage struct {
	LoopbackKey
	Subnet  string
	Configs []string
	// Hosts is how many host addresses the subnet has (math.MaxInt when more), Need how many nodes need one.
	Hosts, Need int
	// Unaddressed are the nodes left without address, by name.
	Unaddressed []string
}

func (s *LoopbackShortage) Error() string {
	quoted := make([]string, len(s.Configs))
	for i, c := range s.Configs {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	kind := "VRFRouteConfiguration"
	if len(quoted) > 1 {
		kind += "s"
	}
	return fmt.Sprintf("%s %s, VRF %q, loopback %q: subnet %s has %d host addresses, %d nodes need one (none left for %s)",
		kind, strings.Join(quoted, ", "), s.VRF, s.Loopback, s.Subnet, s.Hosts, s.Need, listNodes(s.Unaddressed))
}

func listNodes(nodes []string) string {
	const limit = 5
	if len(nodes) <= limit {
		return strings.Join(nodes, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(nodes[:limit], ", "), len(nodes)-limit)
}

// PlanLoopbackAddresses gives every node of every pool a host address of the pool's subnet. It is a pure,
// deterministic function of its inputs, so every operator replica and every planning round computes the same:
//
//   - A node keeps the address it holds for the loopback when that is still a host address of the subnet (and no
//     node earlier by name holds the same one).
//   - Other nodes, in name order, take the lowest free host address. Host addresses are the subnet without its
//     network address and, for IPv4, its broadcast address; a /31 or /32 (IPv6: /127, /128) has no network or
//     broadcast address, all its addresses are hosts (RFC 3021, RFC 6164).
//   - An address a node holds but no longer needs (the node left the pool: deselected, or its VRF changed) is
//     free, but taken only when no never-held address is left: the node may still carry it until it gets the
//     new revision, and handing it out at once would put it on two nodes during the rollout.
//   - A subnet without enough host addresses is a LoopbackShortage (nodes without address are not in the
//     result); the others are still planned.
//
// The result maps each pool to node -> address with the host prefix length ("10.0.0.3/32", "fd00::3/128").
func PlanLoopbackAddresses(pools []LoopbackPool, held []LoopbackHolding) (map[LoopbackKey]map[string]string, []*LoopbackShortage, error) {
	byKey := map[LoopbackKey][]LoopbackHolding{}
	for _, h := range held {
		byKey[h.LoopbackKey] = append(byKey[h.LoopbackKey], h)
	}
	out := make(map[LoopbackKey]map[string]string, len(pools))
	var short []*LoopbackShortage
	for _, p := range pools {
		subnet, err := netip.ParsePrefix(p.Subnet)
		if err != nil {
			return nil, nil, fmt.Errorf("VRF %q, loopback %q: subnet %q: %w", p.VRF, p.Loopback, p.Subnet, err)
		}
		got, missing := planPool(subnet.Masked(), p.Nodes, byKey[p.LoopbackKey])
		out[p.LoopbackKey] = got
		if len(missing) > 0 {
			short = append(short, &LoopbackShortage{LoopbackKey: p.LoopbackKey, Subnet: p.Subnet, Configs: p.Configs,
				Hosts: hostCount(subnet), Need: len(got) + len(missing), Unaddressed: missing})
		}
	}
	slices.SortFunc(short, func(a, b *LoopbackShortage) int {
		return cmp.Or(cmp.Compare(a.VRF, b.VRF), cmp.Compare(a.Loopback, b.Loopback))
	})
	return out, short, nil
}

// planPool allocates one subnet; missing are the nodes (by name) left without address.
func planPool(subnet netip.Prefix, nodes []string, held []LoopbackHolding) (map[string]string, []string) {
	first, last := hostRange(subnet)
	usable := func(a netip.Addr) bool { return a.IsValid() && first.Compare(a) <= 0 && a.Compare(last) <= 0 }
	nodes = slices.Sorted(slices.Values(nodes))
	nodes = slices.Compact(nodes)
	need := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		need[n] = true
	}

	got := make(map[string]netip.Addr, len(nodes))
	used := map[netip.Addr]bool{}
	lingering := map[netip.Addr]bool{} // held by nodes that no longer need it
	held = slices.Clone(held)
	slices.SortFunc(held, func(a, b LoopbackHolding) int { return cmp.Compare(a.Node, b.Node) })
	for _, h := range held {
		a := parseHostAddr(h.Address)
		if !usable(a) {
			continue // outside the (possibly changed) subnet: the node gets a new one
		}
		_, has := got[h.Node]
		switch {
		case !need[h.Node]:
			lingering[a] = true
		case !has && !used[a]:
			got[h.Node], used[a] = a, true
		}
	}

	var missing []string
	next := first
	var spare []netip.Addr // lingering addresses, taken last
	for _, n := range nodes {
		if _, ok := got[n]; ok {
			continue
		}
		for next.IsValid() && usable(next) && (used[next] || lingering[next]) {
			next = next.Next()
		}
		if next.IsValid() && usable(next) {
			got[n], used[next] = next, true
			next = next.Next()
			continue
		}
		if spare == nil {
			spare = slices.SortedFunc(maps.Keys(lingering), netip.Addr.Compare)
		}
		for len(spare) > 0 && used[spare[0]] {
			spare = spare[1:]
		}
		if len(spare) == 0 {
			missing = append(missing, n)
			continue
		}
		got[n], used[spare[0]] = spare[0], true
		spare = spare[1:]
	}

	out := make(map[string]string, len(got))
	for n, a := range got {
		out[n] = netip.PrefixFrom(a, a.BitLen()).String()
	}
	return out, missing
}

// hostRange returns the first and last host address of a masked subnet.
func hostRange(subnet netip.Prefix) (first, last netip.Addr) {
	first = subnet.Addr()
	b := first.AsSlice()
	for i := subnet.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	last, _ = netip.AddrFromSlice(b)
	if first.Is4() && subnet.Bits() <= 30 {
		first, last = first.Next(), last.Prev()
	} else if !first.Is4() && subnet.Bits() <= 126 {
		first = first.Next() // the subnet-router anycast address
	}
	return first, last
}

// hostCount is how many host addresses hostRange spans (math.MaxInt when more).
func hostCount(subnet netip.Prefix) int {
	subnet = subnet.Masked()
	hostBits := subnet.Addr().BitLen() - subnet.Bits()
	if hostBits >= 62 {
		return math.MaxInt
	}
	n := 1 << hostBits
	switch {
	case subnet.Addr().Is4() && subnet.Bits() <= 30:
		n -= 2
	case !subnet.Addr().Is4() && subnet.Bits() <= 126:
		n--
	}
	return n
}

func parseHostAddr(s string) netip.Addr {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Addr()
	}
	a, _ := netip.ParseAddr(s)
	return a
}

// AssignLoopbackAddresses fills loopbacks[].address in the specs built for rev (node -> spec; nodes whose spec
// could not be built are absent), by PlanLoopbackAddresses: the pools are the loopbacks the built specs have,
// the holdings the addresses in current (node -> the spec the node carries now, nil or absent when none).
// The nodes of a shortage keep an empty address; the caller must not roll such a spec out.
func AssignLoopbackAddresses(rev *v1.NetworkConfigRevisionSpec, specs, current map[string]*v1.NodeNetworkConfigSpec) ([]*LoopbackShortage, error) {
	pools := map[LoopbackKey]*LoopbackPool{}
	for _, node := range slices.Sorted(maps.Keys(specs)) {
		for _, v := range specs[node].VRFs {
			for _, lo := range v.Loopbacks {
				k := LoopbackKey{v.Name, lo.Name}
				if pools[k] == nil {
					pools[k] = &LoopbackPool{LoopbackKey: k, Subnet: lo.Subnet}
				}
				pools[k].Nodes = append(pools[k].Nodes, node)
			}
		}
	}
	if len(pools) == 0 {
		return nil, nil
	}
	for _, it := range rev.VRF {
		for _, lo := range it.Loopbacks {
			if p := pools[LoopbackKey{it.VRF, lo.Name}]; p != nil && !slices.Contains(p.Configs, it.Name) {
				p.Configs = append(p.Configs, it.Name)
			}
		}
	}
	list := make([]LoopbackPool, 0, len(pools))
	for _, k := range slices.SortedFunc(maps.Keys(pools), func(a, b LoopbackKey) int {
		return cmp.Or(cmp.Compare(a.VRF, b.VRF), cmp.Compare(a.Loopback, b.Loopback))
	}) {
		slices.Sort(pools[k].Configs)
		list = append(list, *pools[k])
	}
	var held []LoopbackHolding
	for node, spec := range current {
		if spec == nil {
			continue
		}
		for _, v := range spec.VRFs {
			for _, lo := range v.Loopbacks {
				if lo.Address != "" {
					held = append(held, LoopbackHolding{LoopbackKey{v.Name, lo.Name}, node, lo.Address})
				}
			}
		}
	}

	plan, short, err := PlanLoopbackAddresses(list, held)
	if err != nil {
		return nil, err
	}
	for node, spec := range specs {
		for i := range spec.VRFs {
			v := &spec.VRFs[i]
			for j := range v.Loopbacks {
				v.Loopbacks[j].Address = plan[LoopbackKey{v.Name, v.Loopbacks[j].Name}][node]
			}
		}
		spec.ExpectedMapVersion = spec.MapVersion()
	}
	return short, nil
}
