package nodespec

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

// FloodPeersError is a node whose layer-2 network or Link would flood to more peers than v1.MaxFloodPeers: its
// configuration cannot be rolled out.
type FloodPeersError struct {
	Node       string
	Kind, Name string // the Layer2NetworkConfiguration or Link
	Peers      int
}

func (e *FloodPeersError) Error() string {
	return fmt.Sprintf("%s %q, flooding static without peers: %d other nodes, at most %d peers "+
		"(list the peers, select fewer nodes, or use mode evpn)", e.Kind, e.Name, e.Peers, v1.MaxFloodPeers)
}

// floodUse is the flooding of one object in a node's spec (a layer-2 network or a Link's VXLAN), to fill in.
type floodUse struct {
	kind, name string
	flooding   *v1.Flooding
}

// floodUses lists the static floodings of a node's spec.
func floodUses(spec *v1.NodeNetworkConfigSpec) []floodUse {
	var out []floodUse
	for i := range spec.Layer2s {
		if f := spec.Layer2s[i].Flooding; f != nil {
			out = append(out, floodUse{v1.KindLayer2NetworkConfiguration, spec.Layer2s[i].Name, f})
		}
	}
	for i := range spec.Links {
		if x := spec.Links[i].VXLAN; x != nil && x.Flooding != nil {
			out = append(out, floodUse{v1.KindLink, spec.Links[i].Name, x.Flooding})
		}
	}
	return out
}

// AssignFloodPeers fills in the peers of every static flooding (of a layer-2 network or a Link) that lists none, in
// the specs built for rev (node -> spec; nodes whose spec could not be built are absent): the VTEP address of
// every other node whose spec has the object, of the node's own address family (its VXLAN device reaches no
// other), sorted. So the peers change as nodes join or leave, are deselected or change their VTEP address, and
// every node sees the others the same way. It is pure. A node whose list would exceed v1.MaxFloodPeers keeps none
// and is returned (by node name): the caller must not roll its spec out.
func AssignFloodPeers(rev *v1.NetworkConfigRevisionSpec, specs map[string]*v1.NodeNetworkConfigSpec) []*FloodPeersError {
	derived := map[string]bool{} // kind/name
	for _, l := range rev.Layer2 {
		if l.Flooding != nil && l.Flooding.Mode == v1.FloodingStatic && len(l.Flooding.Peers) == 0 {
			derived[v1.KindLayer2NetworkConfiguration+"/"+l.Name] = true
		}
	}
	for _, l := range rev.Links {
		if x := l.VXLAN; x != nil && x.Flooding != nil && x.Flooding.Mode == v1.FloodingStatic && len(x.Flooding.Peers) == 0 {
			derived[v1.KindLink+"/"+l.Name] = true
		}
	}
	if len(derived) == 0 {
		return nil
	}
	nodes := slices.Sorted(maps.Keys(specs))
	vteps := make(map[string]netip.Addr, len(specs))
	members := map[string][]string{} // kind/name -> nodes, by name
	for _, node := range nodes {
		vteps[node], _ = netip.ParseAddr(specs[node].Underlay.VTEPAddress)
		for _, u := range floodUses(specs[node]) {
			if key := u.kind + "/" + u.name; derived[key] {
				members[key] = append(members[key], node)
			}
		}
	}
	var errs []*FloodPeersError
	for _, node := range nodes {
		own := vteps[node]
		for _, u := range floodUses(specs[node]) {
			key := u.kind + "/" + u.name
			if !derived[key] {
				continue
			}
			var peers []netip.Addr
			for _, other := range members[key] {
				if a := vteps[other]; other != node && a.IsValid() && a != own && a.Is4() == own.Is4() {
					peers = append(peers, a)
				}
			}
			u.flooding.Peers = sortedAddrs(peers)
			if n := len(u.flooding.Peers); n > v1.MaxFloodPeers {
				u.flooding.Peers = nil
				errs = append(errs, &FloodPeersError{Node: node, Kind: u.kind, Name: u.name, Peers: n})
			}
		}
	}
	slices.SortFunc(errs, func(a, b *FloodPeersError) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return errs
}
