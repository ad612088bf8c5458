package nodefile

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

func TestReadNodeNetworkConfig(t *testing.T) {
	d, err := ReadFile("testdata/node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != FormatNodeNetworkConfig || d.Name != "worker-1" || d.Spec.Revision != "r1" ||
		len(d.Spec.VRFs) != 1 || d.Spec.VRFs[0].TableID != 1000000100 || d.Spec.DataPlane.Interfaces[0].Name != "br.red" {
		t.Fatalf("document %+v", d)
	}
}

// The seed's own example file (das-schiff README) converts.
func TestReadLegacy(t *testing.T) {
	d, err := ReadFile("testdata/das-schiff.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := v1.NodeNetworkConfigSpec{
		VRFs: []v1.NodeVRF{
			{Name: "vrf1", ID: 1, TableID: 1_000_000_100, VNI: 100},
			{Name: "vrf2", ID: 2, TableID: 1_000_000_101, VNI: 101},
			{Name: "vrf3", ID: 3, TableID: 1_000_000_102, VNI: 102},
		},
		DataPlane: v1.DataPlaneSpec{Interfaces: []v1.DataPlaneInterface{
			{Name: "br.mgmt_vrf", Mode: v1.ModePass, Hook: v1.HookAuto},
			{Name: "br.vrf2", VRF: "vrf2", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: "mgmt_vrf_def", Mode: v1.ModePass, Hook: v1.HookAuto},
			{Name: "vrf3_def", VRF: "vrf3", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: "vx.101", VRF: "vrf2", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: "vx.200", Mode: v1.ModePass, Hook: v1.HookAuto},
		}},
	}
	if d.Format != FormatLegacy || !reflect.DeepEqual(d.Spec, want) {
		t.Fatalf("converted spec\n got %+v\nwant %+v", d.Spec, want)
	}
	notes := strings.Join(d.Notes, "\n")
	for _, w := range []string{"vrf mgmt_vrf: in skipVRFConfig, not managed", "interface br.mgmt_vrf: VRF mgmt_vrf is not managed",
		"interface vx.200: no VRF recognisable", "FRR is not configured"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct {
		doc  string
		want string
	}{
		"empty":             {"", "empty document"},
		"neither":           {"foo: 1\n", "neither a NodeNetworkConfig"},
		"wrong kind":        {"kind: Node\n", `kind: Unsupported value: "Node": supported values: "NodeNetworkConfig"`},
		"wrong apiVersion":  {"apiVersion: v1\nkind: NodeNetworkConfig\n", `apiVersion: Unsupported value: "v1"`},
		"unknown NNC field": {"kind: NodeNetworkConfig\nspec:\n  revison: x\n", "revison"},
		"unknown legacy":    {"vnimap: {a: 1}\nbpfInterface: [x]\n", "bpfInterface"},
		"bad VNI":           {"vnimap: {a: 0}\n", "vnimap.a: Invalid value: 0: not a VNI"},
		"duplicate VNI":     {"vnimap: {a: 5, b: 5}\n", "vnimap.b: Invalid value: 5: also the VNI of a"},
		"long VRF name":     {"vnimap: {abcdefghijklm: 5}\n", `vnimap.abcdefghijklm: Invalid value: "abcdefghijklm": not a VRF name`},
		"bad interface":     {"bpfInterfaces: [\"a b\"]\n", `bpfInterfaces[0]: Invalid value: "a b"`},
		"duplicate iface":   {"bpfInterfaces: [x, x]\n", `bpfInterfaces[1]: Duplicate value: "x"`},
		"empty skip entry":  {"skipVRFConfig: [\"\"]\n", `skipVRFConfig[0]: Required value`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}
