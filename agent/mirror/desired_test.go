package mirror_test

import (
	"strings"
	"testing"

	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     v1.TrafficMatch
		fams  []int // family of each key set
		err   string
		first []mirror.Key
	}{
		{name: "all", fams: []int{4, 6}},
		{name: "v4 prefix", m: v1.TrafficMatch{DstPrefix: ptr("10.1.0.0/16")}, fams: []int{4},
			first: []mirror.Key{{Off: 16, Val: 0x0a010000, Mask: 0xffff0000}}},
		{name: "v6 prefix", m: v1.TrafficMatch{SrcPrefix: ptr("fd00:1::/40")}, fams: []int{6},
			first: []mirror.Key{{Off: 8, Val: 0xfd000001, Mask: 0xffffffff}, {Off: 12, Val: 0, Mask: 0xff000000}}},
		{name: "icmpv6", m: v1.TrafficMatch{Protocol: ptr("icmpv6")}, fams: []int{6},
			first: []mirror.Key{{Off: 4, Val: 58 << 8, Mask: 0xff00}}},
		{name: "ports: one set per IPv4 header length", m: v1.TrafficMatch{Protocol: ptr("tcp"), SrcPort: ptr(int32(1))},
			fams: []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 6}},
		{name: "ports without protocol", m: v1.TrafficMatch{DstPort: ptr(int32(1))}, err: "need protocol"},
		{name: "mixed families", m: v1.TrafficMatch{SrcPrefix: ptr("10.0.0.0/8"), DstPrefix: ptr("fd00::/8")}, err: "family"},
		{name: "icmp with v6", m: v1.TrafficMatch{Protocol: ptr("icmp"), DstPrefix: ptr("fd00::/8")}, err: "family"},
		{name: "bad protocol", m: v1.TrafficMatch{Protocol: ptr("gre2")}, err: "protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mirror.Match(tc.m)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var fams []int
			for _, g := range got {
				fams = append(fams, g.Family)
			}
			if len(fams) != len(tc.fams) || (len(fams) > 0 && fams[0] != tc.fams[0]) {
				t.Fatalf("families %v, want %v", fams, tc.fams)
			}
			if tc.first != nil && len(got) > 0 {
				for i, k := range tc.first {
					if got[0].Keys[i] != k {
						t.Fatalf("keys %+v, want %+v first", got[0].Keys, tc.first)
					}
				}
			}
		})
	}
}

func TestRulesSourcesAndProblems(t *testing.T) {
	nd := &nodenet.Desired{Links: []nodenet.LinkSpec{
		{Name: "vx.100", Alias: nodenet.Alias(nodenet.RoleL2VXLAN, "a")},
		{Name: "vl.100", Alias: nodenet.Alias(nodenet.RoleVLAN, "a")},
		{Name: "vx.b", Alias: nodenet.Alias(nodenet.RoleL2VXLAN, "b")},
		{Name: "vx.red", Alias: nodenet.Alias(nodenet.RoleL3VXLAN, "red")},
	}}
	tgt := v1.NodeMirrorTarget{Name: "c"}
	spec := &v1.NodeNetworkConfigSpec{Mirrors: []v1.NodeMirror{
		{Name: "trunk", Layer2: "a", Direction: v1.MirrorIngress, Target: tgt, Match: v1.TrafficMatch{Protocol: ptr("icmp")}},
		{Name: "vxlan", Layer2: "b", Direction: v1.MirrorIngress, Target: tgt, Match: v1.TrafficMatch{Protocol: ptr("icmp")}},
		{Name: "vrf", VRF: "red", Direction: v1.MirrorEgress, Target: tgt, Match: v1.TrafficMatch{Protocol: ptr("icmp")}},
		{Name: "novrf", VRF: "blue", Direction: v1.MirrorEgress, Target: tgt},
		{Name: "notarget", Layer2: "a", Direction: v1.MirrorEgress, Target: v1.NodeMirrorTarget{Name: "x"}},
	}}
	rules, probs := mirror.Rules(spec, nd, map[string]string{"c": "gm.c"})
	want := []string{"trunk: vl.100 egress", "vxlan: vx.b ingress", "vrf: vx.red egress"}
	if len(rules) != len(want) {
		t.Fatalf("rules %v", rules)
	}
	for i, r := range rules {
		if !strings.Contains(r.String(), want[i]) || r.TargetDevice != "gm.c" {
			t.Errorf("rule %d: %s, want %q", i, r, want[i])
		}
	}
	if len(probs) != 2 || probs[0].Mirror != "novrf" || probs[1].Mirror != "notarget" {
		t.Fatalf("problems %v", probs)
	}
}
