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
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// FamilyOf is the address family of a (valid) address; an IPv4-mapped IPv6 address is IPv4.
func FamilyOf(a netip.Addr) v1.IPFamily {
	if a.Is4() || a.Is4In6() {
		return v1.IPv4
	}
	return v1.IPv6
}

// ParseIPFamily reads a family as the operator's flags and annotations write it: "IPv4"/"ipv4"/"4", "IPv6"/...
func ParseIPFamily(s string) (v1.IPFamily, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ipv4", "4", "v4":
		return v1.IPv4, true
	case "ipv6", "6", "v6":
		return v1.IPv6, true
	}
	return "", false
}

// UnderlayFamilies are the unicast address families an underlay's sessions carry: addressFamilies (valid ones,
// IPv4 before IPv6), else the VTEP address's family, else IPv4 (an underlay without a VTEP address, as before
// IPv6 underlays).
func UnderlayFamilies(u *v1.UnderlaySpec) []v1.IPFamily {
	var out []v1.IPFamily
	for _, f := range []v1.IPFamily{v1.IPv4, v1.IPv6} {
		if slices.Contains(u.AddressFamilies, f) {
			out = append(out, f)
		}
	}
	if len(out) > 0 {
		return out
	}
	if a, err := netip.ParseAddr(u.VTEPAddress); err == nil {
		return []v1.IPFamily{FamilyOf(a)}
	}
	return []v1.IPFamily{v1.IPv4}
}

// ValidateVTEPAddress checks a VTEP address: an IP address without zone, not IPv4-mapped IPv6, and one the
// other VTEPs can send to (not unspecified, loopback, link-local or multicast: a VXLAN device sends from it over
// the routed underlay). It returns the address (zero with errors).
func ValidateVTEPAddress(path *field.Path, s string) (netip.Addr, field.ErrorList) {
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil || a.Zone() != "":
		return netip.Addr{}, field.ErrorList{field.Invalid(path, s, "not an IP address (IPv4 or IPv6, no zone)")}
	case a.Is4In6():
		return netip.Addr{}, field.ErrorList{field.Invalid(path, s, "IPv4-mapped IPv6 address: write "+a.Unmap().String())}
	case a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast():
		return netip.Addr{}, field.ErrorList{field.Invalid(path, s,
			"not a VTEP address the fabric can route (unspecified, loopback, link-local and multicast addresses are not)")}
	}
	return a, nil
}

// ValidateUnderlay checks what an underlay says about address families, at every place one is made or taken: the
// operator's node builder, the agent before it renders FRR. Errors name the field and value:
//
//   - addressFamilies: IPv4 and IPv6, each once; they include the VTEP address's family (the VTEP is announced in
//     it: an IPv6 VTEP in an IPv4-only underlay would be unreachable for the other nodes);
//   - vtepAddress (when set): ValidateVTEPAddress;
//   - interfaces: interface names;
//   - neighbors: an interface (unnumbered: every family runs over its link-local session), an address (numbered,
//     IPv4 or IPv6, without zone, of a family the underlay carries: a numbered session carries its own family
//     only), or an IPv6 link-local address with the interface it is on (without it the address is ambiguous);
//     none twice.
//
// The router id is the caller's: the operator and the agent say where it comes from.
func ValidateUnderlay(path *field.Path, u *v1.UnderlaySpec) field.ErrorList {
	var errs field.ErrorList
	fp := path.Child("addressFamilies")
	seen := map[v1.IPFamily]bool{}
	for i, f := range u.AddressFamilies {
		switch {
		case f != v1.IPv4 && f != v1.IPv6:
			errs = append(errs, field.NotSupported(fp.Index(i), f, []v1.IPFamily{v1.IPv4, v1.IPv6}))
		case seen[f]:
			errs = append(errs, field.Duplicate(fp.Index(i), f))
		}
		seen[f] = true
	}
	families := UnderlayFamilies(u)
	if u.VTEPAddress != "" {
		vtep, verrs := ValidateVTEPAddress(path.Child("vtepAddress"), u.VTEPAddress)
		errs = append(errs, verrs...)
		if vtep.IsValid() && len(u.AddressFamilies) > 0 && !slices.Contains(families, FamilyOf(vtep)) {
			errs = append(errs, field.Invalid(path.Child("vtepAddress"), u.VTEPAddress, fmt.Sprintf(
				"an %s VTEP address, but the underlay carries %s only (%s): the other nodes would not learn it; add %s",
				FamilyOf(vtep), joinFamilies(families), fp, FamilyOf(vtep))))
		}
	}
	for i, ifname := range u.Interfaces {
		errs = append(errs, validateInterfaceName(path.Child("interfaces").Index(i), ifname)...)
	}
	keys := map[string]bool{}
	for i := range u.Neighbors {
		np := path.Child("neighbors").Index(i)
		key, nerrs := ValidateUnderlayNeighbor(np, &u.Neighbors[i], families)
		errs = append(errs, nerrs...)
		switch {
		case key == "":
		case keys[key]:
			errs = append(errs, field.Duplicate(np, key))
		default:
			keys[key] = true
		}
	}
	return errs
}

// ValidateUnderlayNeighbor checks one underlay neighbour against the families its underlay carries (see
// ValidateUnderlay) and returns its key ("" when it has none): the address, or the interface of an unnumbered one.
func ValidateUnderlayNeighbor(path *field.Path, n *v1.UnderlayNeighbor, families []v1.IPFamily) (string, field.ErrorList) {
	var errs field.ErrorList
	if n.Interface != "" {
		errs = append(errs, validateInterfaceName(path.Child("interface"), n.Interface)...)
	}
	if n.Address == "" {
		if n.Interface == "" {
			return "", append(errs, field.Required(path, "an interface (unnumbered), an address (numbered), "+
				"or an IPv6 link-local address with its interface"))
		}
		return n.Interface, errs
	}
	ap := path.Child("address")
	a, err := netip.ParseAddr(n.Address)
	switch {
	case err != nil:
		return "", append(errs, field.Invalid(ap, n.Address, "not an IP address"))
	case a.Zone() != "":
		return "", append(errs, field.Invalid(ap, n.Address, fmt.Sprintf(
			"a zoned address: write %s and put %s into interface", a.WithZone(""), a.Zone())))
	case a.Is4In6():
		return "", append(errs, field.Invalid(ap, n.Address, "IPv4-mapped IPv6 address: write "+a.Unmap().String()))
	case a.IsUnspecified() || a.IsMulticast() || a.IsLoopback():
		return "", append(errs, field.Invalid(ap, n.Address, "not a neighbour's address (unspecified, multicast or loopback)"))
	case a.Is6() && a.IsLinkLocalUnicast() && n.Interface == "":
		errs = append(errs, field.Required(path.Child("interface"), fmt.Sprintf(
			"IPv6 link-local address %s is on some link: name the interface it is on (or leave the address out: "+
				"an unnumbered session on the interface)", a)))
	case n.Interface != "" && !(a.Is6() && a.IsLinkLocalUnicast()):
		errs = append(errs, field.Invalid(path.Child("interface"), n.Interface, fmt.Sprintf(
			"an interface goes with an IPv6 link-local address only; %s is routed: leave interface out "+
				"(or the address, for an unnumbered session on %s)", a, n.Interface)))
	}
	if fam := FamilyOf(a); !slices.Contains(families, fam) {
		other := "add " + string(fam)
		if fam == v1.IPv6 {
			other += ", or use an unnumbered session on the interface, which carries every family"
		}
		errs = append(errs, field.Invalid(ap, n.Address, fmt.Sprintf(
			"an %s session, but the underlay carries %s only: a numbered session carries its own family (%s)",
			fam, joinFamilies(families), other)))
	}
	return a.String(), errs
}

func joinFamilies(fs []v1.IPFamily) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return strings.Join(out, " and ")
}

// ValidateFloodingFamily checks the listed peers of static flooding against the fabric's VTEP family (""
// unknown: nothing to check): a VXLAN device sends from its node's VTEP address, so a peer of the other family is
// never reached. Addresses that do not parse are ValidateFlooding's.
func ValidateFloodingFamily(path *field.Path, f *v1.Flooding, vtepFamily v1.IPFamily) field.ErrorList {
	if f == nil || f.Mode != v1.FloodingStatic || vtepFamily == "" {
		return nil
	}
	var errs field.ErrorList
	for i, s := range f.Peers {
		if a, err := netip.ParseAddr(s); err == nil && FamilyOf(a) != vtepFamily {
			errs = append(errs, field.Invalid(path.Child("peers").Index(i), s, fmt.Sprintf(
				"an %s address, but the fabric's VTEPs are %s (the operator's --underlay-vtep-family): a VXLAN device "+
					"sends from its node's VTEP address, over that family only", FamilyOf(a), vtepFamily)))
		}
	}
	return errs
}
