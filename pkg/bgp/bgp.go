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

// Package bgp is the syntax of BGP values as FRR takes them: AS numbers, remote-AS keywords, communities and
// route targets, checked into apimachinery field errors.
package bgp

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// BGP syntax shared by the webhook (internal/validation), the operator, the node agent and the FRR renderer
// (pkg/frr): one rule each, so what the API admits is what FRR is given.

// AS numbers (RFC 6793): the API's bounds (api/v1alpha1 MinASN, MaxASN, ASTrans) are these; a test ties them.
const (
	MinASN = 1
	// MaxASN leaves out 4294967295, reserved (RFC 7300); FRR 8.4 refuses it.
	MaxASN = 4294967294
	// ASTrans is AS_TRANS (RFC 6793), a placeholder for 4-byte AS numbers, never a real AS.
	ASTrans = 23456
)

// Remote AS keywords of an underlay neighbour besides a number (FRR's "remote-as internal|external").
const (
	RemoteASInternal = "internal"
	RemoteASExternal = "external"
)

// ValidateASN checks an AS number, local or remote: MinASN..MaxASN, and not AS_TRANS.
func ValidateASN(path *field.Path, asn int64) field.ErrorList {
	switch {
	case asn < MinASN || asn > MaxASN:
		return field.ErrorList{field.Invalid(path, asn, fmt.Sprintf("AS number must be within %d..%d", MinASN, MaxASN))}
	case asn == ASTrans:
		return field.ErrorList{field.Invalid(path, asn, fmt.Sprintf("AS %d is AS_TRANS, not a real AS", ASTrans))}
	}
	return nil
}

// ParseASN parses and checks an AS number written as text (asplain: FRR's and the API's only notation).
func ParseASN(path *field.Path, s string) (int64, field.ErrorList) {
	asn, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, field.ErrorList{field.Invalid(path, s, "not an AS number")}
	}
	return asn, ValidateASN(path, asn)
}

// ValidateRemoteAS checks an underlay neighbour's remote AS: RemoteASInternal, RemoteASExternal or an AS number.
func ValidateRemoteAS(path *field.Path, s string) field.ErrorList {
	if s == RemoteASInternal || s == RemoteASExternal {
		return nil
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("must be %q, %q or an AS number", RemoteASInternal, RemoteASExternal))}
	}
	_, errs := ParseASN(path, s)
	return errs
}

// CommunityKind is the kind of a BGP community string.
type CommunityKind int

const (
	NotACommunity      CommunityKind = iota
	StandardCommunity                // AA:NN, 16 bits each (FRR "set community")
	LargeCommunity                   // A:B:C, 32 bits each (FRR "set large-community", RFC 8092)
	WellKnownCommunity               // a name FRR takes in "set community"
)

type wellKnownCommunity struct {
	name  string
	value uint32
}

// wellKnown are the names FRR 8.4 accepts in "set community" (bgpd's community_gettoken; checked with bgpd -C)
// with their values (RFC 1997, 7999, 8326, 8642, IANA's registry), in FRR's canonical order: by value.
// "no-export-subconfed" and "local-as" are not among them: FRR spells RFC 1997's NO_EXPORT_SUBCONFED "local-AS".
var wellKnown = []wellKnownCommunity{
	{"internet", 0}, {"graceful-shutdown", 0xFFFF0000}, {"accept-own", 0xFFFF0001},
	{"route-filter-translated-v4", 0xFFFF0002}, {"route-filter-v4", 0xFFFF0003},
	{"route-filter-translated-v6", 0xFFFF0004}, {"route-filter-v6", 0xFFFF0005}, {"llgr-stale", 0xFFFF0006},
	{"no-llgr", 0xFFFF0007}, {"accept-own-nexthop", 0xFFFF0008}, {"blackhole", 0xFFFF029A},
	{"no-export", 0xFFFFFF01}, {"no-advertise", 0xFFFFFF02}, {"local-AS", 0xFFFFFF03}, {"no-peer", 0xFFFFFF04},
}

// WellKnownCommunities are the well-known community names FRR takes in "set community".
func WellKnownCommunities() []string {
	out := make([]string, len(wellKnown))
	for i, w := range wellKnown {
		out[i] = w.name
	}
	return out
}

// CanonicalCommunities returns communities as FRR shows a "set community" or "set large-community" it was given:
// FRR keeps them as numbers, sorted and without duplicates, and prints a standard community that has a
// well-known name by that name (65535:65281 is no-export). A config written otherwise never matches FRR's
// running config, and every reload finds the same difference again. Standard and well-known communities come
// first, then large ones; anything that is not a community (validation refuses it) keeps its place at the end.
// internetByName says whether FRR names 0:0 "internet" (FRR 8) or shows and takes it only as 0:0 (FRR 10,
// which refuses the name).
func CanonicalCommunities(in []string, internetByName bool) []string {
	var std []uint32
	var large [][3]uint32
	var other []string
	for _, c := range in {
		kind, err := ParseCommunity(c)
		switch {
		case err != nil:
			other = append(other, c)
		case kind == WellKnownCommunity:
			i := slices.IndexFunc(wellKnown, func(w wellKnownCommunity) bool { return w.name == c })
			std = append(std, wellKnown[i].value)
		default:
			var v [3]uint32
			for i, p := range strings.Split(c, ":") {
				n, _ := strconv.ParseUint(p, 10, 32)
				v[i] = uint32(n)
			}
			if kind == StandardCommunity {
				std = append(std, v[0]<<16|v[1])
			} else {
				large = append(large, v)
			}
		}
	}
	slices.Sort(std)
	std = slices.Compact(std)
	slices.SortFunc(large, func(a, b [3]uint32) int { return slices.Compare(a[:], b[:]) })
	large = slices.Compact(large)
	out := make([]string, 0, len(std)+len(large)+len(other))
	for _, v := range std {
		name := fmt.Sprintf("%d:%d", v>>16, v&0xFFFF)
		for _, w := range wellKnown {
			if w.value == v && (v != 0 || internetByName) {
				name = w.name
			}
		}
		out = append(out, name)
	}
	for _, v := range large {
		out = append(out, fmt.Sprintf("%d:%d:%d", v[0], v[1], v[2]))
	}
	return append(out, other...)
}

// ParseCommunity returns the kind of a community in FRR's spelling, or an error that says what is wrong with it.
func ParseCommunity(s string) (CommunityKind, error) {
	if slices.Contains(WellKnownCommunities(), s) {
		return WellKnownCommunity, nil
	}
	parts := strings.Split(s, ":")
	if !slices.ContainsFunc(parts, func(p string) bool { return !isDigits(p) }) {
		switch len(parts) {
		case 2:
			if fitsBits(parts[0], 16) && fitsBits(parts[1], 16) {
				return StandardCommunity, nil
			}
			return NotACommunity, fmt.Errorf("standard community parts must be within 0..65535")
		case 3:
			if fitsBits(parts[0], 32) && fitsBits(parts[1], 32) && fitsBits(parts[2], 32) {
				return LargeCommunity, nil
			}
			return NotACommunity, fmt.Errorf("large community parts must be within 0..4294967295")
		}
	}
	return NotACommunity, fmt.Errorf("not a BGP community: want AA:NN, A:B:C or a well-known name such as no-export")
}

// ValidateCommunity checks a standard, large or well-known community.
func ValidateCommunity(path *field.Path, s string) field.ErrorList {
	if _, err := ParseCommunity(s); err != nil {
		return field.ErrorList{field.Invalid(path, s, err.Error())}
	}
	return nil
}

// ValidateRouteTarget checks a route target or route distinguisher in the forms FRR takes (the administrator
// and number of a two-octet-AS, four-octet-AS or IPv4 extended community): <asn>:<nn> with a 2-byte ASN and a
// 4-byte number or a 4-byte ASN and a 2-byte number, or <ipv4>:<nn> with a 2-byte number. wildcard also
// accepts "*:<nn>" (FRR's import route targets).
func ValidateRouteTarget(path *field.Path, s string, wildcard bool) field.ErrorList {
	invalid := func(msg string) field.ErrorList { return field.ErrorList{field.Invalid(path, s, msg)} }
	admin, num, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(num, ":") {
		return invalid("route target must be <asn>:<nn> or <ipv4>:<nn>")
	}
	if admin == "*" && wildcard && fitsBits(num, 32) {
		return nil
	}
	if a, err := netip.ParseAddr(admin); err == nil {
		if a.Is4() && fitsBits(num, 16) {
			return nil
		}
		return invalid("route target <ipv4>:<nn> needs an IPv4 address and nn within 0..65535")
	}
	if fitsBits(admin, 16) && fitsBits(num, 32) || fitsBits(admin, 32) && fitsBits(num, 16) {
		return nil
	}
	return invalid("route target must be <0-65535>:<0-4294967295>, <0-4294967295>:<0-65535> or <ipv4>:<0-65535>")
}

func isDigits(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}

func fitsBits(s string, bits int) bool {
	_, err := strconv.ParseUint(s, 10, bits)
	return err == nil
}
