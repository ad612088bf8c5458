package dataplane

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
)

// PlanAttach is the one decision of dry run and apply: table-driven, no kernel.
func TestPlanAttach(t *testing.T) {
	iface := func(name string, vlan int32, hook v1.AttachHook) v1.DataPlaneInterface {
		return v1.DataPlaneInterface{Name: name, VLAN: vlan, VRF: "red", Hook: hook}
	}
	att := func(name string, ifindex int, mode loader.Mode) loader.Attachment {
		return loader.Attachment{Interface: name, Ifindex: ifindex, Mode: mode}
	}
	auto := []loader.Mode{loader.ModeAuto}
	tc := []loader.Mode{loader.ModeTCX, loader.ModeTC}
	xdp := []loader.Mode{loader.ModeXDPNative, loader.ModeXDPGeneric}
	tests := []struct {
		name   string
		in     AttachInput
		attach []AttachStep // Reason compared by substring
		detach []string
		empty  bool
		kept   []string
	}{
		{
			name:  "nothing wanted, nothing attached",
			empty: true,
		},
		{
			name: "new interfaces, once each, sorted",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth1", 0, ""), iface("eth0", 0, v1.HookTC), iface("eth0", 7, "")},
				Ifindex: map[string]int{"eth0": 2, "eth1": 3}},
			attach: []AttachStep{
				{Interface: "eth0", Action: ActionAttach, Hook: v1.HookTC, Modes: tc, Reason: "not attached"},
				{Interface: "eth1", Action: ActionAttach, Hook: v1.HookAuto, Modes: auto, Reason: "not attached"},
			},
		},
		{
			name: "attached, hook auto: kept",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, "")}, Attached: []loader.Attachment{att("eth0", 2, loader.ModeTCX)},
				Ifindex: map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionKeep, Hook: v1.HookAuto, From: loader.ModeTCX, Reason: "tcx satisfies hook auto"}},
			empty:  true, kept: []string{"eth0"},
		},
		{
			name: "issue 11: a later entry of the interface asks for xdp: moved",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, ""), iface("eth0", 7, v1.HookXDP)},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTCX)}, Ifindex: map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionMove, Hook: v1.HookXDP, From: loader.ModeTCX, Modes: xdp,
				Reason: "hook xdp does not allow tcx"}},
		},
		{
			name: "an auto entry after the xdp one does not undo it",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 7, v1.HookXDP), iface("eth0", 0, v1.HookAuto)},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTCX)}, Ifindex: map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionMove, Hook: v1.HookXDP, From: loader.ModeTCX, Modes: xdp}},
		},
		{
			name: "the first named hook wins over a later one",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, v1.HookTC), iface("eth0", 7, v1.HookXDP)},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTCX)}, Ifindex: map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionKeep, Hook: v1.HookTC, From: loader.ModeTCX}},
			empty:  true, kept: []string{"eth0"},
		},
		{
			name: "xdp attached, hook tc: moved to tcx or legacy tc",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, v1.HookTC)},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeXDPGeneric)}, Ifindex: map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionMove, Hook: v1.HookTC, From: loader.ModeXDPGeneric, Modes: tc}},
		},
		{
			name: "legacy tc satisfies hook tc",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, v1.HookTC)},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTC)}, Ifindex: map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionKeep, Hook: v1.HookTC, From: loader.ModeTC}},
			empty:  true, kept: []string{"eth0"},
		},
		{
			name: "device re-created since: attached anew",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, "")},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTCX)}, Ifindex: map[string]int{"eth0": 9}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionReattach, Hook: v1.HookAuto, From: loader.ModeTCX, Modes: auto,
				Reason: "device re-created (ifindex 2 -> 9)"}},
		},
		{
			name: "re-created with another hook: attached anew with the new hook, not moved",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, v1.HookXDP)},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTCX)}, Ifindex: map[string]int{"eth0": 9}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionReattach, Hook: v1.HookXDP, From: loader.ModeTCX, Modes: xdp}},
		},
		{
			name: "device gone (nodenet creates it again or the attach fails)",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("br.red", 0, "")},
				Attached: []loader.Attachment{att("br.red", 5, loader.ModeTCX)}},
			attach: []AttachStep{{Interface: "br.red", Action: ActionReattach, Hook: v1.HookAuto, From: loader.ModeTCX, Modes: auto,
				Reason: "device gone (was ifindex 5)"}},
		},
		{
			name: "this apply re-creates the device: attached anew although the ifindex still matches",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("vx.red", 0, "")},
				Attached: []loader.Attachment{att("vx.red", 5, loader.ModeTCX)}, Ifindex: map[string]int{"vx.red": 5},
				Recreated: map[string]bool{"vx.red": true}},
			attach: []AttachStep{{Interface: "vx.red", Action: ActionReattach, Hook: v1.HookAuto, From: loader.ModeTCX, Modes: auto,
				Reason: "this apply re-creates the device"}},
		},
		{
			name: "mirrored ingress: attached as a clsact filter whatever the hook",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, ""), iface("eth1", 0, v1.HookXDP)},
				MirroredIngress: map[string]string{"eth0": "m1", "eth1": "m2"}},
			attach: []AttachStep{
				{Interface: "eth0", Action: ActionAttach, Hook: v1.HookAuto, Modes: []loader.Mode{loader.ModeTC}, Reason: "not attached"},
				{Interface: "eth1", Action: ActionAttach, Hook: v1.HookXDP, Modes: []loader.Mode{loader.ModeTC}, Reason: "not attached"},
			},
		},
		{
			name: "a mirror added to a tcx interface moves the router behind the mirror's filters",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, "")},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTCX)}, Ifindex: map[string]int{"eth0": 2},
				MirroredIngress: map[string]string{"eth0": "m1"}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionMove, Hook: v1.HookAuto, From: loader.ModeTCX,
				Modes: []loader.Mode{loader.ModeTC}, Reason: "mirror m1 copies its ingress: tcx would run before"}},
		},
		{
			name: "mirrored and on clsact already: kept",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, "")},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTC)}, Ifindex: map[string]int{"eth0": 2},
				MirroredIngress: map[string]string{"eth0": "m1"}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionKeep, Hook: v1.HookAuto, From: loader.ModeTC,
				Reason: "tc runs after mirror m1's filters"}},
			empty: true, kept: []string{"eth0"},
		},
		{
			name: "mirror removed: a clsact attachment satisfies auto and stays",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, "")},
				Attached: []loader.Attachment{att("eth0", 2, loader.ModeTC)}, Ifindex: map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionKeep, Hook: v1.HookAuto, From: loader.ModeTC}},
			empty:  true, kept: []string{"eth0"},
		},
		{
			name: "no longer configured: detached, sorted",
			in: AttachInput{Want: []v1.DataPlaneInterface{iface("eth0", 0, "")},
				Attached: []loader.Attachment{att("eth2", 4, loader.ModeXDPNative), att("eth0", 2, loader.ModeTCX), att("eth1", 3, loader.ModeTC)},
				Ifindex:  map[string]int{"eth0": 2}},
			attach: []AttachStep{{Interface: "eth0", Action: ActionKeep, Hook: v1.HookAuto, From: loader.ModeTCX}},
			detach: []string{"eth1", "eth2"},
			kept:   []string{"eth0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanAttach(tt.in)
			if len(p.Attach) != len(tt.attach) {
				t.Fatalf("attach steps %s, want %d", dump(p.Attach), len(tt.attach))
			}
			for i, want := range tt.attach {
				got := p.Attach[i]
				if got.Interface != want.Interface || got.Action != want.Action || got.Hook != want.Hook ||
					got.From != want.From || !slices.Equal(got.Modes, want.Modes) || !strings.Contains(got.Reason, want.Reason) {
					t.Errorf("step %d: %s\nwant %s", i, dump([]AttachStep{got}), dump([]AttachStep{want}))
				}
			}
			var detach []string
			for _, s := range p.Detach {
				if s.Action != ActionDetach || s.Reason == "" || len(s.Modes) != 0 {
					t.Errorf("detach step %+v", s)
				}
				detach = append(detach, s.Interface)
			}
			if !slices.Equal(detach, tt.detach) {
				t.Errorf("detach %q, want %q", detach, tt.detach)
			}
			if p.Empty() != tt.empty || !slices.Equal(p.Kept(), tt.kept) {
				t.Errorf("empty %t kept %q, want %t %q", p.Empty(), p.Kept(), tt.empty, tt.kept)
			}
		})
	}
}

func dump(steps []AttachStep) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "[%s %s hook=%q from=%q modes=%v reason=%q] ", s.Interface, s.Action, s.Hook, s.From, s.Modes, s.Reason)
	}
	return b.String()
}
