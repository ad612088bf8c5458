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

package bgp

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateASN(t *testing.T) {
	tests := []struct {
		asn  int64
		want string // "" = valid
	}{
		{1, ""}, {65000, ""}, {65535, ""}, {4200000000, ""}, {4294967294, ""},
		{0, "within 1..4294967294"}, {-1, "within 1..4294967294"},
		{4294967295, "within 1..4294967294"}, // reserved, RFC 7300
		{23456, "AS_TRANS"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.asn), func(t *testing.T) {
			checkOne(t, ValidateASN(field.NewPath("asn"), tc.asn), tc.want, fmt.Sprintf("asn: Invalid value: %d", tc.asn))
		})
	}
}

func TestParseASN(t *testing.T) {
	tests := []struct {
		in   string
		asn  int64
		want string
	}{
		{"65000", 65000, ""},
		{"4294967294", 4294967294, ""},
		{"4294967295", 4294967295, "within 1..4294967294"},
		{"sixty", 0, `"sixty": not an AS number`},
		{"1.10", 0, "not an AS number"}, // asdot is not used anywhere
		{"", 0, "not an AS number"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			asn, errs := ParseASN(field.NewPath("a"), tc.in)
			checkOne(t, errs, tc.want, "a: Invalid value")
			if tc.want == "" && asn != tc.asn {
				t.Errorf("asn %d, want %d", asn, tc.asn)
			}
		})
	}
}

func TestValidateRemoteAS(t *testing.T) {
	tests := []struct{ in, want string }{
		{"internal", ""}, {"external", ""}, {"65001", ""},
		{"External", `must be "internal", "external" or an AS number`},
		{"0", "within 1..4294967294"},
		{"23456", "AS_TRANS"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			checkOne(t, ValidateRemoteAS(field.NewPath("remoteAS"), tc.in), tc.want, "remoteAS: Invalid value")
		})
	}
}

func TestParseCommunity(t *testing.T) {
	tests := []struct {
		in   string
		kind CommunityKind
		want string
	}{
		{"65000:100", StandardCommunity, ""},
		{"0:0", StandardCommunity, ""},
		{"65535:65535", StandardCommunity, ""},
		{"65536:1", NotACommunity, "standard community parts must be within 0..65535"},
		{"65000:1:2", LargeCommunity, ""},
		{"4294967295:4294967295:4294967295", LargeCommunity, ""},
		{"4294967296:1:1", NotACommunity, "large community parts must be within 0..4294967295"},
		{"no-export", WellKnownCommunity, ""},
		{"local-AS", WellKnownCommunity, ""},
		{"accept-own-nexthop", WellKnownCommunity, ""},
		{"llgr-stale", WellKnownCommunity, ""},
		{"local-as", NotACommunity, "not a BGP community"}, // FRR is case-sensitive
		{"no-export-subconfed", NotACommunity, "not a BGP community"},
		{"bogus", NotACommunity, "not a BGP community"},
		{"1:2:3:4", NotACommunity, "not a BGP community"},
		{"1:", NotACommunity, "not a BGP community"},
		{"+1:2", NotACommunity, "not a BGP community"},
		{"", NotACommunity, "not a BGP community"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			kind, err := ParseCommunity(tc.in)
			if kind != tc.kind {
				t.Errorf("kind %d, want %d", kind, tc.kind)
			}
			var errs field.ErrorList
			if err != nil {
				errs = field.ErrorList{field.Invalid(field.NewPath("c"), tc.in, err.Error())}
			}
			checkOne(t, errs, tc.want, "")
		})
	}
	if n := len(WellKnownCommunities()); n != 15 {
		t.Errorf("%d well-known communities, FRR 8.4 has 15", n)
	}
}

func TestValidateRouteTarget(t *testing.T) {
	tests := []struct {
		in       string
		wildcard bool
		want     string
	}{
		{"65000:4294967295", false, ""},
		{"4200000000:65535", false, ""},
		{"192.0.2.1:100", false, ""},
		{"70000:70000", false, "<0-65535>:<0-4294967295>"},
		{"192.0.2.1:70000", false, "needs an IPv4 address and nn within 0..65535"},
		{"fd00::1:1", false, "must be <asn>:<nn> or <ipv4>:<nn>"},
		{"65000", false, "must be <asn>:<nn> or <ipv4>:<nn>"},
		{"*:100", true, ""},
		{"*:100", false, "<0-65535>:<0-4294967295>"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.in, tc.wildcard), func(t *testing.T) {
			checkOne(t, ValidateRouteTarget(field.NewPath("rt"), tc.in, tc.wildcard), tc.want, fmt.Sprintf("rt: Invalid value: %q", tc.in))
		})
	}
}

// checkOne asserts no error when want is empty, else exactly one containing want and prefix.
func checkOne(t *testing.T, errs field.ErrorList, want, prefix string) {
	t.Helper()
	switch {
	case want == "" && len(errs) > 0:
		t.Errorf("unexpected errors: %v", errs)
	case want != "" && len(errs) != 1:
		t.Errorf("got %d errors %v, want one containing %q", len(errs), errs, want)
	case want != "" && (!strings.Contains(errs[0].Error(), want) || !strings.HasPrefix(errs[0].Error(), prefix)):
		t.Errorf("error %q, want prefix %q and %q", errs[0], prefix, want)
	}
}

func TestCanonicalCommunities(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"no-export", "65000:1"}, []string{"65000:1", "no-export"}},
		{[]string{"65000:2", "65000:1", "65000:2"}, []string{"65000:1", "65000:2"}},
		{[]string{"65535:65281", "no-export", "65535:0"}, []string{"graceful-shutdown", "no-export"}},
		{[]string{"no-peer", "local-AS", "no-advertise", "blackhole", "internet", "1:1"},
			[]string{"internet", "1:1", "blackhole", "no-advertise", "local-AS", "no-peer"}},
		{[]string{"4200000101:3:4", "65000:100", "4200000101:1:2", "1:2:3", "4200000101:1:2"},
			[]string{"65000:100", "1:2:3", "4200000101:1:2", "4200000101:3:4"}},
	} {
		if got := CanonicalCommunities(tc.in, true); !slices.Equal(got, tc.want) {
			t.Errorf("CanonicalCommunities(%q, FRR 8) = %q, want %q", tc.in, got, tc.want)
		}
		// FRR 10 refuses the name "internet" and shows 0:0; every other name stays.
		want10 := slices.Clone(tc.want)
		if i := slices.Index(want10, "internet"); i >= 0 {
			want10[i] = "0:0"
		}
		if got := CanonicalCommunities(tc.in, false); !slices.Equal(got, want10) {
			t.Errorf("CanonicalCommunities(%q, FRR 10) = %q, want %q", tc.in, got, want10)
		}
	}
}

// FuzzCanonicalCommunities: the canonical form is a fixed point, holds every community once, and each of them
// stands for one of the input's (same value).
func FuzzCanonicalCommunities(f *testing.F) {
	f.Add("no-export 65000:1 65535:0 4200000101:1:2 65000:1")
	f.Fuzz(func(t *testing.T, s string) {
		in := strings.Fields(s)
		valid := slices.DeleteFunc(slices.Clone(in), func(c string) bool { _, err := ParseCommunity(c); return err != nil })
		for _, byName := range []bool{true, false} {
			got := CanonicalCommunities(valid, byName)
			if again := CanonicalCommunities(got, byName); !slices.Equal(again, got) {
				t.Fatalf("not a fixed point: %q -> %q -> %q", valid, got, again)
			}
			if len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("duplicates in %q", got)
			}
			for _, c := range valid {
				if !slices.Contains(got, CanonicalCommunities([]string{c}, byName)[0]) {
					t.Fatalf("%q lost from %q: %q", c, valid, got)
				}
			}
		}
	})
}
