package nodespec

import (
	"strings"
	"testing"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func TestParseInterface(t *testing.T) {
	tests := []struct {
		in      string
		want    v1.DataPlaneInterface
		wantErr string
	}{
		{in: "eth1=blue", want: v1.DataPlaneInterface{Name: "eth1", VRF: "blue", Mode: v1.ModeRoute, Hook: v1.HookAuto}},
		{in: "eth1@100=blue:pass", want: v1.DataPlaneInterface{Name: "eth1", VLAN: 100, VRF: "blue", Mode: v1.ModePass, Hook: v1.HookAuto}},
		{in: "eth4=:fib", want: v1.DataPlaneInterface{Name: "eth4", Mode: v1.ModeFIB, Hook: v1.HookAuto}},
		{in: "l2br.100=blue", want: v1.DataPlaneInterface{Name: "l2br.100", VRF: "blue", Mode: v1.ModeRoute, Hook: v1.HookAuto}},
		{in: "bond0.42@7=red", want: v1.DataPlaneInterface{Name: "bond0.42", VLAN: 7, VRF: "red", Mode: v1.ModeRoute, Hook: v1.HookAuto}},
		{in: "eth3=red:redirect>veth0", want: v1.DataPlaneInterface{Name: "eth3", VRF: "red", Mode: v1.ModeRedirect, RedirectTarget: "veth0", Hook: v1.HookAuto}},
		{in: "eth1", wantErr: "want name[@vlan]=vrf[:mode]"},
		{in: "eth1@5000=blue", wantErr: `vlan "5000" is not 1..4094`},
		{in: "averyveryverylongname=blue", wantErr: "longer than 15 bytes"},
		{in: "eth1=blue:bounce", wantErr: `mode "bounce"`},
		{in: "eth1=blue:redirect", wantErr: "redirect needs a target"},
		{in: "eth1=blue:fib", wantErr: `takes no vrf ("blue")`},
	}
	for _, tc := range tests {
		got, err := ParseInterface(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}
