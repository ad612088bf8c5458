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
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// ValidateFlooding checks how a VXLAN floods at admission (a layer-2 network's or a Link's flooding; nil: EVPN):
// ParseFlooding without a node.
func ValidateFlooding(path *field.Path, f *v1.Flooding) field.ErrorList {
	_, _, errs := ParseFlooding(path, f, netip.Addr{})
	return errs
}

// ParseFlooding checks how a VXLAN floods (nil: EVPN) and returns whether it floods statically and to which peers:
// a mode of evpn or static, peers only with static (parseFloodPeers; local is the node's own VTEP address, or the
// zero Addr where no node is known).
func ParseFlooding(path *field.Path, f *v1.Flooding, local netip.Addr) (static bool, peers []netip.Addr, errs field.ErrorList) {
	if f == nil {
		return false, nil, nil
	}
	switch f.Mode {
	case "", v1.FloodingEVPN:
		if len(f.Peers) > 0 {
			errs = append(errs, field.Forbidden(path.Child("peers"), fmt.Sprintf(
				"peers %v are only for mode static: in mode evpn BGP EVPN finds the peer VTEPs", f.Peers)))
		}
		return false, nil, errs
	case v1.FloodingStatic:
		peers, errs = parseFloodPeers(path.Child("peers"), f.Peers, local)
		return true, peers, errs
	}
	return false, nil, field.ErrorList{field.NotSupported(path.Child("mode"), f.Mode, []v1.FloodingMode{v1.FloodingEVPN, v1.FloodingStatic})}
}

// parseFloodPeers parses the peer VTEPs of static flooding, in their order: unicast IP addresses (no zone, no
// IPv4-mapped IPv6, not unspecified, loopback, link-local or multicast: one VXLAN sends to them over the underlay),
// all of one address family (a VXLAN device has one), none twice, at most v1.MaxFloodPeers. With a valid local
// (the node's own VTEP address, known to the operator's node builder and the agent, not at admission) every peer
// must be of its family, and local itself is left out of the result: one list of every VTEP serves every node, a
// VXLAN never floods to itself.
func parseFloodPeers(path *field.Path, peers []string, local netip.Addr) ([]netip.Addr, field.ErrorList) {
	var errs field.ErrorList
	if len(peers) > v1.MaxFloodPeers {
		errs = append(errs, field.TooMany(path, len(peers), v1.MaxFloodPeers))
	}
	out := make([]netip.Addr, 0, len(peers))
	seen := map[netip.Addr]bool{}
	first := -1 // index of out[0]
	for i, s := range peers {
		pp := path.Index(i)
		a, err := netip.ParseAddr(s)
		switch {
		case err != nil || a.Zone() != "":
			errs = append(errs, field.Invalid(pp, s, "not an IP address of a VTEP (no zone)"))
			continue
		case a.Is4In6():
			errs = append(errs, field.Invalid(pp, s, "IPv4-mapped IPv6 address: write "+a.Unmap().String()))
			continue
		case a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast():
			errs = append(errs, field.Invalid(pp, s,
				"not a unicast VTEP address (unspecified, loopback, link-local and multicast addresses are not)"))
			continue
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(pp, s))
			continue
		}
		if local.IsValid() && local.Is4() != a.Is4() {
			errs = append(errs, field.Invalid(pp, s, fmt.Sprintf(
				"of another address family than this node's VTEP address %s: a VXLAN device floods over one family", local)))
			continue
		}
		if first >= 0 && out[0].Is4() != a.Is4() {
			errs = append(errs, field.Invalid(pp, s, fmt.Sprintf(
				"of another address family than %s (%s): a VXLAN device floods over one family", path.Index(first), out[0])))
			continue
		}
		seen[a] = true
		if a == local {
			continue
		}
		if first < 0 {
			first = i
		}
		out = append(out, a)
	}
	return out, errs
}
