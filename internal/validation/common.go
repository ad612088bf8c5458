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

// Package validation checks network.network-operator.io resources. It is pure: every function takes the object
// (and, for the cross-object rules, a Snapshot of the other objects) and returns a field.ErrorList whose errors
// name the field path and the offending value, e.g.
//
//	spec.import[2].cidr: Invalid value: "10.0.0.1/24": not a network address (did you mean 10.0.0.0/24?)
//
// The CRD schemas (CEL rules in api/v1alpha1) repeat the checks they can express; the admission webhook
// (operator/webhook) runs all of them, including the cross-object ones.
//
// BGP syntax (AS numbers, communities, route targets) lives in pkg/bgp and the error sentinel every field.ErrorList
// turned into an error matches in pkg/fielderr: the libraries (pkg/frr, pkg/maps) share them without the API.
package validation

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

var vrfNameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`)

// validateVRFName checks a VRF name: the node agent names interfaces "<3-byte prefix>" + name, and Linux
// interface names have at most 15 bytes.
func validateVRFName(path *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return append(errs, field.Required(path, "the VRF name"))
	}
	if len(name) > v1.MaxVRFNameLen {
		errs = append(errs, field.Invalid(path, name, fmt.Sprintf(
			"VRF name has %d bytes, at most %d are allowed: interface names like %q must fit %d bytes",
			len(name), v1.MaxVRFNameLen, v1.BridgePrefix+name, v1.MaxInterfaceNameLen)))
	}
	if !vrfNameRE.MatchString(name) {
		errs = append(errs, field.Invalid(path, name,
			"VRF name must consist of letters, digits, '-' and '_', starting and ending with a letter or digit"))
	}
	return errs
}

func validateRange(path *field.Path, v, lo, hi int64, what string) field.ErrorList {
	if v < lo || v > hi {
		return field.ErrorList{field.Invalid(path, v, fmt.Sprintf("%s must be within %d..%d", what, lo, hi))}
	}
	return nil
}

// parseCIDR parses a prefix as the prefix-lists want it: no zone, no IPv4-mapped IPv6.
func parseCIDR(path *field.Path, s string) (netip.Prefix, *field.Error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, field.Invalid(path, s, "not a CIDR (address/prefix-length)")
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, field.Invalid(path, s, "IPv4-mapped IPv6 prefix: write the IPv4 form")
	}
	return p, nil
}

// parseNetwork parses a CIDR that must be a network address (host bits zero).
func parseNetwork(path *field.Path, s string) (netip.Prefix, *field.Error) {
	p, ferr := parseCIDR(path, s)
	if ferr != nil {
		return p, ferr
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, field.Invalid(path, s, fmt.Sprintf("not a network address (did you mean %s?)", m))
	}
	return p, nil
}

// validatePrefixList checks prefix-list entries: network addresses, ge/le within the family and the prefix,
// ge <= le, unique (effective) sequence numbers.
func validatePrefixList(path *field.Path, items []v1.PrefixItem) field.ErrorList {
	var errs field.ErrorList
	seqs := map[int64]int{}
	for i, it := range items {
		ip := path.Index(i)
		p, ferr := parseNetwork(ip.Child("cidr"), it.CIDR)
		if ferr != nil {
			errs = append(errs, ferr)
		}
		if it.Action != v1.PrefixActionPermit && it.Action != v1.PrefixActionDeny {
			errs = append(errs, field.NotSupported(ip.Child("action"), it.Action,
				[]v1.PrefixAction{v1.PrefixActionPermit, v1.PrefixActionDeny}))
		}
		errs = append(errs, ValidatePrefixSeq(ip.Child("seq"), it.Seq)...)
		seq := it.EffectiveSeq(i)
		if j, dup := seqs[seq]; dup {
			errs = append(errs, field.Invalid(ip.Child("seq"), seq,
				fmt.Sprintf("duplicate sequence number, also used by %s", path.Index(j))))
		} else {
			seqs[seq] = i
		}
		if ferr == nil {
			errs = append(errs, validateGeLe(ip, p, it.GE, it.LE)...)
		}
	}
	return errs
}

func validateGeLe(path *field.Path, p netip.Prefix, ge, le *int32) field.ErrorList {
	var errs field.ErrorList
	bits := p.Addr().BitLen()
	family := "IPv4"
	if bits == 128 {
		family = "IPv6"
	}
	check := func(name string, v *int32) bool {
		if v == nil {
			return true
		}
		switch {
		case int(*v) < p.Bits():
			errs = append(errs, field.Invalid(path.Child(name), int64(*v),
				fmt.Sprintf("must be at least the prefix length %d of %s", p.Bits(), p)))
		case int(*v) > bits:
			errs = append(errs, field.Invalid(path.Child(name), int64(*v),
				fmt.Sprintf("must be at most %d for the %s prefix %s", bits, family, p)))
		default:
			return true
		}
		return false
	}
	geOK, leOK := check("ge", ge), check("le", le)
	if geOK && leOK && ge != nil && le != nil && *ge > *le {
		errs = append(errs, field.Invalid(path.Child("ge"), int64(*ge), fmt.Sprintf("must not be greater than le %d", *le)))
	}
	return errs
}

func validateNodeSelector(path *field.Path, sel *metav1.LabelSelector) field.ErrorList {
	if sel == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
}

func validateMAC(path *field.Path, s string) *field.Error {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 || strings.Count(s, ":") != 5 {
		return field.Invalid(path, s, "not a MAC address (xx:xx:xx:xx:xx:xx)")
	}
	if hw[0]&1 != 0 {
		return field.Invalid(path, s, "multicast MAC address: an anycast gateway needs a unicast address")
	}
	return nil
}

// validateNetworks checks a list of networks (CIDR, network address) without repeats.
func validateNetworks(path *field.Path, list []string) field.ErrorList {
	var errs field.ErrorList
	seen := map[netip.Prefix]bool{}
	for i, a := range list {
		ip := path.Index(i)
		pfx, ferr := parseNetwork(ip, a)
		if ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		if seen[pfx] {
			errs = append(errs, field.Duplicate(ip, a))
		}
		seen[pfx] = true
	}
	return errs
}

// validateInterfaceName checks a Linux interface name: 1..15 bytes, no '/', ':' or white space, not "." or "..".
func validateInterfaceName(path *field.Path, name string) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(path, "an interface name")}
	case len(name) > v1.MaxInterfaceNameLen:
		return field.ErrorList{field.Invalid(path, name, fmt.Sprintf("interface name has %d bytes, at most %d are allowed", len(name), v1.MaxInterfaceNameLen))}
	case name == "." || name == ".." || strings.ContainsAny(name, "/: \t\n\r\v\f"):
		return field.ErrorList{field.Invalid(path, name, "not a Linux interface name (no '/', ':' or white space, not . or ..)")}
	}
	return nil
}

// ValidatePrefixSeq checks a prefix-list entry's sequence number: v1.MinPrefixSeq..v1.MaxPrefixSeq, or 0 for
// "unset" (the position decides, v1.PrefixItem.EffectiveSeq).
func ValidatePrefixSeq(path *field.Path, seq int64) field.ErrorList {
	if seq != 0 && (seq < v1.MinPrefixSeq || seq > v1.MaxPrefixSeq) {
		return field.ErrorList{field.Invalid(path, seq, fmt.Sprintf(
			"prefix-list sequence must be within %d..%d (0: from the position)", v1.MinPrefixSeq, v1.MaxPrefixSeq))}
	}
	return nil
}
