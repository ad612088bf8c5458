package nodenet_test

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/golden"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
)

func mustDesired(t *testing.T, spec *v1alpha1.NodeNetworkConfigSpec, s nodenet.Settings, f nodenet.Features) *nodenet.Desired {
	t.Helper()
	d, err := nodenet.BuildDesired(spec, s, f)
	if err != nil {
		t.Fatalf("BuildDesired: %v", err)
	}
	return d
}

// lines renders actions as "phase: action" for comparison.
func lines(acts []nodenet.Action) []string {
	out := make([]string, 0, len(acts))
	for _, a := range acts {
		out = append(out, fmt.Sprintf("%s: %s", a.Phase(), a))
	}
	return out
}

func diffLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	t.Errorf("actions differ\n got (%d):\n  %s\nwant (%d):\n  %s", len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
}

// TestPlanGolden renders complete plans from scratch; the rendered text is what --dry-run prints.
func TestPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		features nodenet.Features
		settings func() nodenet.Settings
		spec     func() *v1alpha1.NodeNetworkConfigSpec // nil: twoVRFsOneL2
	}{
		{"scratch-table-only", noVRFKernel, testSettings, nil},
		{"scratch-vrf-devices", fullKernel, testSettings, nil},
		{"scratch-vlan-trunk-unsupported", noVRFKernel, func() nodenet.Settings {
			s := testSettings()
			s.L2Trunk = "eth1"
			return s
		}, nil},
		{"scratch-disable-segmentation", fullKernel, testSettings, withoutSegmentation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := twoVRFsOneL2()
			if tc.spec != nil {
				spec = tc.spec()
			}
			d := mustDesired(t, spec, tc.settings(), tc.features)
			got := nodenet.ComputePlan(d, &nodenet.Observed{}).String()
			golden.Assert(t, filepath.Join("testdata", tc.name+".golden"), []byte(got))
		})
	}
}

func TestComputePlan(t *testing.T) {
	base := func(f nodenet.Features) *nodenet.Observed {
		return observedAfter(mustDesired(t, twoVRFsOneL2(), testSettings(), f))
	}
	for _, tc := range []struct {
		name     string
		features nodenet.Features
		spec     *v1alpha1.NodeNetworkConfigSpec
		observed *nodenet.Observed
		want     []string
		// conflicts lists the names expected in Plan.Conflicts.
		conflicts []string
	}{
		{
			name: "no-op after apply", features: noVRFKernel, spec: twoVRFsOneL2(), observed: base(noVRFKernel),
			want: nil,
		},
		{
			name: "no-op after apply with vrf devices", features: fullKernel, spec: twoVRFsOneL2(), observed: base(fullKernel),
			want: nil,
		},
		{
			name: "mtu change", features: noVRFKernel,
			spec: func() *v1alpha1.NodeNetworkConfigSpec {
				s := twoVRFsOneL2()
				s.VRFs[0].MTU = 1500
				return s
			}(),
			observed: base(noVRFKernel),
			want: []string{
				"interfaces: set mtu of br.blue 9000 -> 1500",
				"interfaces: set mtu of vx.blue 9000 -> 1500",
				"interfaces: set mtu of df.blue 9000 -> 1500",
				"interfaces: set mtu of vf.blue 9000 -> 1500",
			},
		},
		{
			name: "vrf added", features: noVRFKernel, spec: withGreen(twoVRFsOneL2()), observed: base(noVRFKernel),
			want: []string{
				"vrfs: add route unreachable default table 300 metric 4278198272",
				"vrfs: add route unreachable default (ipv6) table 300 metric 4278198272",
				"vrfs: add rule 1100: iif br.green lookup 300 (ipv4)",
				"vrfs: add rule 1100: oif br.green lookup 300 (ipv4)",
				"vrfs: add rule 1100: iif br.green lookup 300 (ipv6)",
				"vrfs: add rule 1100: oif br.green lookup 300 (ipv6)",
				"interfaces: create bridge br.green (vrf green, mtu 1500)",
				"interfaces: create vxlan vx.green (vrf green, vni 1300, local 192.0.2.1, dstport 4789, nolearning, mtu 1500, master br.green)",
				"interfaces: set bridge port flags of vx.green: learning off, neigh_suppress on",
				"interfaces: set br.green up",
				"interfaces: set vx.green up",
			},
		},
		{
			name: "vrf added with vrf devices", features: fullKernel, spec: withGreen(twoVRFsOneL2()), observed: base(fullKernel),
			want: []string{
				"vrfs: create vrf vr.green (table 300)",
				"vrfs: set vr.green up",
				"vrfs: add route unreachable default table 300 metric 4278198272",
				"vrfs: add route unreachable default (ipv6) table 300 metric 4278198272",
				"interfaces: create bridge br.green (vrf green, mtu 1500, master vr.green)",
				"interfaces: create vxlan vx.green (vrf green, vni 1300, local 192.0.2.1, dstport 4789, nolearning, mtu 1500, master br.green)",
				"interfaces: set bridge port flags of vx.green: learning off, neigh_suppress on",
				"interfaces: set br.green up",
				"interfaces: set vx.green up",
			},
		},
		{
			name: "l2 network removed", features: noVRFKernel, spec: withoutL2(twoVRFsOneL2()), observed: base(noVRFKernel),
			want: []string{
				// The routes on l2br.100 go with the device; only the rules (by name) need deleting.
				"removals: delete rule 1100: from 10.100.0.1/32 lookup 100 (ipv4) (no longer desired)",
				"removals: delete rule 1100: from fd00:100::1/128 lookup 100 (ipv6) (no longer desired)",
				"removals: delete rule 1100: iif l2br.100 lookup 100 (ipv4) (no longer desired)",
				"removals: delete rule 1100: iif l2br.100 lookup 100 (ipv6) (no longer desired)",
				"removals: delete rule 1100: oif l2br.100 lookup 100 (ipv4) (no longer desired)",
				"removals: delete rule 1100: oif l2br.100 lookup 100 (ipv6) (no longer desired)",
				"removals: delete vxlan l2vx.100 (no longer desired)",
				"removals: delete bridge l2br.100 (no longer desired)",
			},
		},
		{
			name: "anycast gateway removed", features: noVRFKernel,
			spec: func() *v1alpha1.NodeNetworkConfigSpec {
				s := twoVRFsOneL2()
				s.Layer2s[0].AnycastGateways = s.Layer2s[0].AnycastGateways[:1]
				return s
			}(),
			observed: base(noVRFKernel),
			want: []string{
				"removals: delete route fd00:100::/64 dev l2br.100 table 100 metric 256 (no longer desired)",
				"removals: delete route local fd00:100::1 dev l2br.100 table 100 metric 1024 (no longer desired)",
				"removals: delete rule 1100: from fd00:100::1/128 lookup 100 (ipv6) (no longer desired)",
				"removals: delete address fd00:100::1/64 from l2br.100 (no longer desired)",
			},
		},
		{
			name: "vni change recreates only the vxlan", features: noVRFKernel,
			spec: func() *v1alpha1.NodeNetworkConfigSpec {
				s := twoVRFsOneL2()
				s.Layer2s[0].VNI = 2101
				return s
			}(),
			observed: base(noVRFKernel),
			want: []string{
				"interfaces: delete vxlan l2vx.100 (recreate: vni 2100, local 192.0.2.1, dstport 4789, nolearning -> vni 2101, local 192.0.2.1, dstport 4789, nolearning)",
				"interfaces: create vxlan l2vx.100 (layer2 net1, vrf blue, vni 2101, local 192.0.2.1, dstport 4789, nolearning, mtu 1500, master l2br.100)",
				"interfaces: set bridge port flags of l2vx.100: learning off, neigh_suppress on",
				"interfaces: set l2vx.100 up",
			},
		},
		{
			// Deleting vr.blue releases its running ports and enslaving them again cycles them down and up: the
			// kernel drops their IPv6 addresses each time, so l2br.100's gateway is added after the enslaving.
			name: "vrf table change re-adds the ipv6 addresses of running ports", features: fullKernel,
			spec: func() *v1alpha1.NodeNetworkConfigSpec {
				s := twoVRFsOneL2()
				s.VRFs[0].TableID = 101
				return s
			}(),
			observed: base(fullKernel),
			want: []string{
				"vrfs: delete vrf vr.blue (recreate: table 100 -> 101)",
				"vrfs: create vrf vr.blue (table 101)",
				"vrfs: set vr.blue up",
				"vrfs: add route unreachable default table 101 metric 4278198272",
				"vrfs: add route unreachable default (ipv6) table 101 metric 4278198272",
				"interfaces: set master of br.blue none -> vr.blue",
				"interfaces: set master of vf.blue none -> vr.blue",
				"interfaces: set master of l2br.100 none -> vr.blue",
				"interfaces: add address fd00:100::1/64 to l2br.100",
				"removals: delete route unreachable default (ipv6) table 100 metric 4278198272 (no longer desired)",
				"removals: delete route unreachable default table 100 metric 4278198272 (no longer desired)",
			},
		},
		{
			// A port that is down is not cycled: it keeps its addresses.
			name: "vrf table change keeps the addresses of ports that are down", features: fullKernel,
			spec: func() *v1alpha1.NodeNetworkConfigSpec {
				s := twoVRFsOneL2()
				s.VRFs[0].TableID = 101
				return s
			}(),
			observed: func() *nodenet.Observed {
				o := base(fullKernel)
				for i := range o.Links {
					if o.Links[i].Name == "l2br.100" {
						o.Links[i].Up = false
					}
				}
				return o
			}(),
			want: []string{
				"vrfs: delete vrf vr.blue (recreate: table 100 -> 101)",
				"vrfs: create vrf vr.blue (table 101)",
				"vrfs: set vr.blue up",
				"vrfs: add route unreachable default table 101 metric 4278198272",
				"vrfs: add route unreachable default (ipv6) table 101 metric 4278198272",
				"interfaces: set master of br.blue none -> vr.blue",
				"interfaces: set master of vf.blue none -> vr.blue",
				"interfaces: set master of l2br.100 none -> vr.blue",
				"interfaces: set l2br.100 up",
				"removals: delete route unreachable default (ipv6) table 100 metric 4278198272 (no longer desired)",
				"removals: delete route unreachable default table 100 metric 4278198272 (no longer desired)",
			},
		},
		{
			name: "layer2 moved to another vrf re-adds its ipv6 gateway", features: fullKernel,
			spec: func() *v1alpha1.NodeNetworkConfigSpec {
				s := twoVRFsOneL2()
				s.Layer2s[0].VRF = "red"
				return s
			}(),
			observed: base(fullKernel),
			want: []string{
				"interfaces: set master of l2br.100 vr.blue -> vr.red",
				"interfaces: add address fd00:100::1/64 to l2br.100",
			},
		},
		{
			name: "foreign link with our prefix and no alias is a conflict", features: noVRFKernel,
			spec: withGreen(twoVRFsOneL2()),
			observed: withLink(base(noVRFKernel), nodenet.LinkState{
				LinkSpec: nodenet.LinkSpec{Name: "br.green", Kind: nodenet.KindBridge, MTU: 1500}, Up: true}),
			// br.green is someone else's: neither it, its port vx.green nor rules steering its traffic are planned.
			want: []string{
				"vrfs: add route unreachable default table 300 metric 4278198272",
				"vrfs: add route unreachable default (ipv6) table 300 metric 4278198272",
			},
			conflicts: []string{"br.green", "vx.green"},
		},
		{
			name: "stale foreign link with our prefix is not deleted", features: noVRFKernel, spec: twoVRFsOneL2(),
			observed: withLink(base(noVRFKernel), nodenet.LinkState{
				LinkSpec: nodenet.LinkSpec{Name: "l2br.999", Kind: nodenet.KindBridge, MTU: 1500, Alias: "someone-else"}}),
			want: nil,
		},
		{
			name: "veth peer without alias is adopted", features: noVRFKernel, spec: twoVRFsOneL2(),
			observed: func() *nodenet.Observed {
				o := base(noVRFKernel)
				for i := range o.Links {
					if o.Links[i].Name == "vf.blue" {
						o.Links[i].Alias = ""
					}
				}
				return o
			}(),
			want: []string{`interfaces: set alias of vf.blue "" -> "network-operator:veth-vrf:blue"`},
		},
		{
			name: "port flags and link state drift are repaired", features: noVRFKernel, spec: twoVRFsOneL2(),
			observed: func() *nodenet.Observed {
				o := base(noVRFKernel)
				for i := range o.Links {
					switch o.Links[i].Name {
					case "l2vx.100":
						o.Links[i].Port = &nodenet.PortFlags{Learning: true}
					case "l2br.100":
						o.Links[i].Up = false
					}
				}
				return o
			}(),
			want: []string{
				"interfaces: set bridge port flags of l2vx.100: learning off, neigh_suppress on",
				"interfaces: set l2br.100 up",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustDesired(t, tc.spec, testSettings(), tc.features)
			p := nodenet.ComputePlan(d, tc.observed)
			diffLines(t, lines(p.Actions), tc.want)
			var got []string
			for _, c := range p.Conflicts {
				got = append(got, c.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.conflicts, ",") {
				t.Errorf("conflicts = %v, want %v\n%s", got, tc.conflicts, p)
			}
			if err := p.Err(); (err != nil) != (len(tc.conflicts) > 0) || (err != nil && !errors.Is(err, nodenet.ErrConflict)) {
				t.Errorf("Err() = %v, want ErrConflict iff conflicts", err)
			}
			for _, name := range tc.conflicts {
				if !strings.Contains(fmt.Sprint(p.Err()), name) {
					t.Errorf("Err() %q does not name %s", p.Err(), name)
				}
			}
		})
	}
}

// TestPlanIsDeterministic guards the dry-run output and the empty-after-apply property against map order.
func TestPlanIsDeterministic(t *testing.T) {
	d := mustDesired(t, withGreen(twoVRFsOneL2()), testSettings(), noVRFKernel)
	first := nodenet.ComputePlan(d, base4Removal(t)).String()
	for range 20 {
		if got := nodenet.ComputePlan(d, base4Removal(t)).String(); got != first {
			t.Fatalf("plan changed between runs:\n%s\n---\n%s", first, got)
		}
	}
}

// base4Removal is the state after applying a spec with two more layer-2 networks than the desired one, so a
// plan has removals of several objects whose order must not depend on map iteration.
func base4Removal(t *testing.T) *nodenet.Observed {
	s := twoVRFsOneL2()
	s.Layer2s = append(s.Layer2s,
		v1alpha1.NodeLayer2{Name: "net2", VLAN: 200, VNI: 2200, MTU: 1500, VRF: "red", AnycastGateways: []string{"10.200.0.1/24"}},
		v1alpha1.NodeLayer2{Name: "net3", VLAN: 300, VNI: 2300, MTU: 1500})
	return observedAfter(mustDesired(t, s, testSettings(), noVRFKernel))
}

func TestBuildDesiredTableOnly(t *testing.T) {
	d := mustDesired(t, twoVRFsOneL2(), testSettings(), noVRFKernel)
	if len(d.VRFs) != 2 {
		t.Fatalf("VRFs = %+v, want blue and red", d.VRFs)
	}
	blue := d.VRFs[0]
	if blue.Name != "blue" || blue.Mode != nodenet.VRFModeTableOnly || blue.Device != "" || blue.Table != 100 ||
		blue.Bridge != "br.blue" || blue.VXLAN != "vx.blue" {
		t.Errorf("blue = %+v", blue)
	}
	if got, want := strings.Join(blue.Members, ","), "br.blue,vf.blue,l2br.100"; got != want {
		t.Errorf("blue members = %s, want %s", got, want)
	}
	if len(d.Notes) != 2 || !strings.Contains(d.Notes[0], "table-only") || !strings.Contains(d.Notes[0], noVRFKernel.VRFReason) {
		t.Errorf("notes = %q, want a table-only note with the kernel's reason per VRF", d.Notes)
	}
	for _, l := range d.Links {
		if l.Kind == nodenet.KindVRF || l.Master == "vr.blue" {
			t.Errorf("table-only desired state has VRF device or enslaves to one: %+v", l)
		}
	}
	dev := mustDesired(t, twoVRFsOneL2(), testSettings(), fullKernel)
	if dev.VRFs[0].Mode != nodenet.VRFModeDevice || dev.VRFs[0].Device != "vr.blue" || len(dev.Rules) != 0 || len(dev.Notes) != 0 {
		t.Errorf("device mode: vrf %+v, %d rules, notes %q; want vr.blue, no rules, no notes", dev.VRFs[0], len(dev.Rules), dev.Notes)
	}
	unknownVeth := testSettings()
	unknownVeth.VethVRFs = []string{"gone"}
	if d := mustDesired(t, twoVRFsOneL2(), unknownVeth, noVRFKernel); !slices.ContainsFunc(d.Notes, func(n string) bool {
		return strings.Contains(n, "vethVRFs[gone]")
	}) || slices.ContainsFunc(d.Links, func(l nodenet.LinkSpec) bool { return l.Kind == nodenet.KindVeth }) {
		t.Errorf("veth for a VRF not in the spec: notes %q; want a note and no veth", d.Notes)
	}
	forced := testSettings()
	forced.VRFMode = nodenet.VRFModeTableOnly
	if d := mustDesired(t, twoVRFsOneL2(), forced, fullKernel); d.VRFs[0].Mode != nodenet.VRFModeTableOnly {
		t.Errorf("forced table-only on a VRF kernel: mode %s", d.VRFs[0].Mode)
	}
}

func TestBuildDesiredErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(*v1alpha1.NodeNetworkConfigSpec, *nodenet.Settings)
		features nodenet.Features
		want     error
		mention  string // the field and value the message must name
	}{
		{"bad vtep", func(s *v1alpha1.NodeNetworkConfigSpec, st *nodenet.Settings) {
			st.VTEPAddress = netip.Addr{}
			s.Underlay.VTEPAddress = "not-an-ip"
		}, noVRFKernel, fielderr.ErrInvalid, `underlay.vtepAddress: Invalid value: "not-an-ip"`},
		{"vlan out of range", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) { s.Layer2s[0].VLAN = 4095 },
			noVRFKernel, fielderr.ErrInvalid, "layer2s[net1].vlan: Invalid value: 4095: must be within 1..4094"},
		{"unknown vrf", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) { s.Layer2s[0].VRF = "nope" },
			noVRFKernel, fielderr.ErrInvalid, `layer2s[net1].vrf: Invalid value: "nope"`},
		{"duplicate table", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) { s.VRFs[1].TableID = 100 },
			noVRFKernel, fielderr.ErrInvalid, "vrfs[red].tableID: Invalid value: 100: already used by vrfs[blue]"},
		{"main table", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) { s.VRFs[1].TableID = 254 },
			noVRFKernel, fielderr.ErrInvalid, "vrfs[red].tableID: Invalid value: 254: the kernel's main table"},
		{"duplicate vni", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) { s.Layer2s[0].VNI = 1100 },
			noVRFKernel, fielderr.ErrInvalid, "layer2s[net1].vni: Invalid value: 1100: already used by vrfs[blue]"},
		{"name too long", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) { s.VRFs[1].Name = "averyverylongname" },
			noVRFKernel, fielderr.ErrInvalid, `"br.averyverylongname"`},
		{"multicast anycast mac", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) {
			s.Layer2s[0].AnycastMAC = "01:00:5e:00:00:01"
		},
			noVRFKernel, fielderr.ErrInvalid, `layer2s[net1].anycastMac: Invalid value: "01:00:5e:00:00:01": a multicast address`},
		{"bad gateway", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) {
			s.Layer2s[0].AnycastGateways = []string{"10.0.0.1"}
		},
			noVRFKernel, fielderr.ErrInvalid, `layer2s[net1].anycastGateways[0]: Invalid value: "10.0.0.1"`},
		{"mtu out of range", func(s *v1alpha1.NodeNetworkConfigSpec, _ *nodenet.Settings) { s.VRFs[0].MTU = 70000 },
			noVRFKernel, fielderr.ErrInvalid, "vrfs[blue].mtu: Invalid value: 70000: must be within 68..65535"},
		{"vrf devices forced without kernel support", func(_ *v1alpha1.NodeNetworkConfigSpec, st *nodenet.Settings) { st.VRFMode = nodenet.VRFModeDevice },
			noVRFKernel, nodenet.ErrVRFNotSupported, "vrfMode device"},
		// Debian 12's 6.1: no BPF_FIB_LOOKUP_TBID, so the router reaches a VRF's table only through its device.
		{"table-only forced without table lookups", func(_ *v1alpha1.NodeNetworkConfigSpec, st *nodenet.Settings) {
			st.VRFMode, st.NoTableLookup = nodenet.VRFModeTableOnly, "TBID missing"
		}, fullKernel, nodenet.ErrTableLookupNotSupported, "vrfMode table-only"},
		{"auto without vrf devices nor table lookups", func(_ *v1alpha1.NodeNetworkConfigSpec, st *nodenet.Settings) {
			st.NoTableLookup = "TBID missing"
		}, noVRFKernel, nodenet.ErrTableLookupNotSupported, "TBID missing"},
		{"source-based routing without table lookups", func(s *v1alpha1.NodeNetworkConfigSpec, st *nodenet.Settings) {
			st.NoTableLookup = "TBID missing"
			s.VRFs[1].SBRPrefixes = []string{"10.9.0.0/16"}
		}, fullKernel, nodenet.ErrTableLookupNotSupported, "vrfs[red].sbrPrefixes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, st := twoVRFsOneL2(), testSettings()
			tc.mutate(spec, &st)
			d, err := nodenet.BuildDesired(spec, st, tc.features)
			if !errors.Is(err, tc.want) {
				t.Fatalf("BuildDesired = %v, %v; want error %v", d, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not name %q", err, tc.mention)
			}
		})
	}
}

// TestCheckKernel: the agent's start-up refusal is BuildDesired's own decision, for any spec.
func TestCheckKernel(t *testing.T) {
	for _, tc := range []struct {
		mode     nodenet.VRFMode
		noLookup string
		kernel   nodenet.Features
		want     error
	}{
		{nodenet.VRFModeAuto, "", noVRFKernel, nil},
		{nodenet.VRFModeAuto, "TBID missing", fullKernel, nil},
		{nodenet.VRFModeAuto, "TBID missing", noVRFKernel, nodenet.ErrTableLookupNotSupported},
		{nodenet.VRFModeDevice, "TBID missing", fullKernel, nil},
		{nodenet.VRFModeDevice, "", noVRFKernel, nodenet.ErrVRFNotSupported},
		{nodenet.VRFModeTableOnly, "", noVRFKernel, nil},
		{nodenet.VRFModeTableOnly, "TBID missing", fullKernel, nodenet.ErrTableLookupNotSupported},
	} {
		st := testSettings()
		st.VRFMode, st.NoTableLookup = tc.mode, tc.noLookup
		if err := nodenet.CheckKernel(st, tc.kernel); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("CheckKernel(%s, no lookups %q, vrf devices %t) = %v, want %v", tc.mode, tc.noLookup, tc.kernel.VRF, err, tc.want)
		}
	}
}

// TestPlanLinkEffects: what other packages learn about the links a plan creates and deletes (Action.Effect,
// Plan.DeletesLink), without the concrete action types.
func TestPlanLinkEffects(t *testing.T) {
	bridge := func(name string) nodenet.LinkSpec {
		return nodenet.LinkSpec{Name: name, Kind: nodenet.KindBridge, Alias: nodenet.Alias(nodenet.RoleL3Bridge, "red")}
	}
	for _, tc := range []struct {
		name        string
		desired     []nodenet.LinkSpec
		observed    []nodenet.LinkState
		wantEffects []string // "name created|deleted", in plan order
		deletes     map[string]bool
	}{
		{name: "new link", desired: []nodenet.LinkSpec{bridge("br.red")},
			wantEffects: []string{"br.red created"}, deletes: map[string]bool{"br.red": false}},
		{name: "link no longer desired",
			observed:    []nodenet.LinkState{{LinkSpec: bridge("br.old"), Index: 7, Up: true}},
			wantEffects: []string{"br.old deleted"}, deletes: map[string]bool{"br.old": true, "br.red": false}},
		{name: "link recreated with another kind",
			desired: []nodenet.LinkSpec{bridge("br.red")},
			observed: []nodenet.LinkState{{LinkSpec: nodenet.LinkSpec{Name: "br.red", Kind: nodenet.KindVeth,
				Alias: nodenet.Alias(nodenet.RoleL3Bridge, "red")}, Index: 7, Up: true}},
			wantEffects: []string{"br.red deleted", "br.red created"}, deletes: map[string]bool{"br.red": true}},
		{name: "link changed in place",
			desired:  []nodenet.LinkSpec{{Name: "br.red", Kind: nodenet.KindBridge, Alias: nodenet.Alias(nodenet.RoleL3Bridge, "red"), MTU: 9000}},
			observed: []nodenet.LinkState{{LinkSpec: bridge("br.red"), Index: 7, Up: true}},
			deletes:  map[string]bool{"br.red": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := nodenet.ComputePlan(&nodenet.Desired{Links: tc.desired}, &nodenet.Observed{Links: tc.observed})
			var got []string
			for _, a := range p.Actions {
				switch link, e := a.Effect(); e {
				case nodenet.LinkCreated:
					got = append(got, link+" created")
				case nodenet.LinkDeleted:
					got = append(got, link+" deleted")
				}
			}
			if !slices.Equal(got, tc.wantEffects) {
				t.Errorf("effects %q, want %q (plan:\n%s)", got, tc.wantEffects, p)
			}
			for name, want := range tc.deletes {
				if p.DeletesLink(name) != want {
					t.Errorf("DeletesLink(%s) = %v, want %v", name, !want, want)
				}
			}
		})
	}
}
