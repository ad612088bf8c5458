package nodeconfig

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
)

// staticFlooding is a VXLAN's flooding as the node gets it: nil for EVPN; for static flooding the listed peers,
// sorted, without the node's own VTEP address vtep (one list of every VTEP serves every node), or none yet when
// none are listed: AssignFloodPeers fills in every other node of the network then.
func staticFlooding(path *field.Path, f *v1.Flooding, vtep string) (*v1.Flooding, field.ErrorList) {
	local, _ := netip.ParseAddr(vtep) // the underlay's own errors name a bad one
	static, peers, errs := validation.ParseFlooding(path, f, local)
	if len(errs) > 0 || !static {
		return nil, errs
	}
	return &v1.Flooding{Mode: v1.FloodingStatic, Peers: sortedAddrs(peers)}, nil
}

func sortedAddrs(addrs []netip.Addr) []string {
	if len(addrs) == 0 {
		return nil
	}
	addrs = slices.SortedFunc(slices.Values(addrs), netip.Addr.Compare)
	out := make([]string, 0, len(addrs))
	for _, a := range slices.Compact(addrs) {
		out = append(out, a.String())
	}
	return out
}

// FloodPeersError is a node whose network would flood to more peers than v1.MaxFloodPeers: its configuration
// cannot be rolled out.
type FloodPeersError struct {
	Node, Network string
	Peers         int
}

func (e *FloodPeersError) Error() string {
	return fmt.Sprintf("Layer2NetworkConfiguration %q, flooding static without peers: %d other nodes, at most %d peers "+
		"(list the peers, select fewer nodes, or use mode evpn)", e.Network, e.Peers, v1.MaxFloodPeers)
}

// AssignFloodPeers fills in the peers of every static-flooding network that lists none, in the specs built for
// rev (node -> spec; nodes whose spec could not be built are absent): the VTEP address of every other node whose
// spec has the network, of the node's own address family (its VXLAN device reaches no other), sorted. So the
// peers change as nodes join or leave a network, are deselected or change their VTEP address, and every node
// sees the others the same way. It is pure. A node whose list would exceed v1.MaxFloodPeers keeps none and is
// returned (by node name): the caller must not roll its spec out.
func AssignFloodPeers(rev *v1.NetworkConfigRevisionSpec, specs map[string]*v1.NodeNetworkConfigSpec) []*FloodPeersError {
	derived := map[string]bool{}
	for _, l := range rev.Layer2 {
		if l.Flooding != nil && l.Flooding.Mode == v1.FloodingStatic && len(l.Flooding.Peers) == 0 {
			derived[l.Name] = true
		}
	}
	if len(derived) == 0 {
		return nil
	}
	vteps := make(map[string]netip.Addr, len(specs))
	members := map[string][]string{} // network -> nodes, by name
	for _, node := range slices.Sorted(maps.Keys(specs)) {
		vteps[node], _ = netip.ParseAddr(specs[node].Underlay.VTEPAddress)
		for _, l := range specs[node].Layer2s {
			if derived[l.Name] && l.Flooding != nil {
				members[l.Name] = append(members[l.Name], node)
			}
		}
	}
	var errs []*FloodPeersError
	for _, node := range slices.Sorted(maps.Keys(specs)) {
		own := vteps[node]
		for i := range specs[node].Layer2s {
			l := &specs[node].Layer2s[i]
			if !derived[l.Name] || l.Flooding == nil {
				continue
			}
			var peers []netip.Addr
			for _, other := range members[l.Name] {
				if a := vteps[other]; other != node && a.IsValid() && a != own && a.Is4() == own.Is4() {
					peers = append(peers, a)
				}
			}
			l.Flooding.Peers = sortedAddrs(peers)
			if n := len(l.Flooding.Peers); n > v1.MaxFloodPeers {
				l.Flooding.Peers = nil
				errs = append(errs, &FloodPeersError{Node: node, Network: l.Name, Peers: n})
			}
		}
	}
	slices.SortFunc(errs, func(a, b *FloodPeersError) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Network, b.Network))
	})
	return errs
}
