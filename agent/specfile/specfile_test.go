package specfile

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/golden"
)

// testEnv is a node whose das-schiff underlay loopback carries 10.0.0.1.
var testEnv = Env{Addrs: fakeAddrs(map[string][]string{UnderlayLoopback: {"127.0.0.1", "fe80::1", "10.0.0.1"}})}

func fakeAddrs(m map[string][]string) func(string) ([]netip.Addr, error) {
	return func(name string) ([]netip.Addr, error) {
		list, ok := m[name]
		if !ok {
			return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
		}
		var out []netip.Addr
		for _, s := range list {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}
}

// render is what a document means: the node's spec, the FRR replacements and the conversion notes.
func render(t *testing.T, d *Document) []byte {
	t.Helper()
	spec, err := yaml.Marshal(d.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s\nname: %q\nspec:\n", d.Format, d.Name)
	for _, l := range strings.SplitAfter(strings.TrimRight(string(spec), "\n"), "\n") {
		b.WriteString("  " + l)
	}
	b.WriteString("\nreplacements:\n")
	for _, r := range d.Replacements {
		fmt.Fprintf(&b, "  - old %q new %q regex %v\n", r.Old, r.New, r.Regex)
	}
	b.WriteString("notes:\n")
	for _, n := range d.Notes {
		b.WriteString("  - " + n + "\n")
	}
	return []byte(b.String())
}

// das-schiff's own node config files (README example, pkg/config testdata, the operator's config), a file of
// the latest generation with a NodeNetworkConfig naming its VRFs, and a NodeNetworkConfig document translate to
// what they mean (golden files under testdata/golden; go test -run TestTranslate -update rewrites them).
func TestTranslate(t *testing.T) {
	files := []string{"das-schiff/readme-example.yaml", "das-schiff/config.yaml", "das-schiff/operator-config.yaml",
		"combined.yaml", "node.yaml"}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			d, err := ReadFile(filepath.Join("testdata", f), testEnv)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", "golden", strings.ReplaceAll(strings.TrimSuffix(f, ".yaml"), "/", "_")+".txt"), render(t, d))
		})
	}
}

// The VTEP address: --vtep-address wins, then the file, --vtep-interface, dum.underlay, the router id; without
// any the error names every source tried.
func TestVTEPAddress(t *testing.T) {
	const named = "vnimap: {vrf1: 100}\n---\nkind: NodeNetworkConfig\nspec:\n  vrfs: [{name: vrf1}]\n"
	const withRouterID = "vnimap: {vrf1: 100}\n---\nkind: NodeNetworkConfig\nspec:\n  underlay: {routerID: 10.9.9.9}\n  vrfs: [{name: vrf1}]\n"
	const withVTEP = "vnimap: {vrf1: 100}\n---\nkind: NodeNetworkConfig\nspec:\n  underlay: {vtepAddress: 10.8.8.8}\n  vrfs: [{name: vrf1}]\n"
	addrs := fakeAddrs(map[string][]string{"lo1": {"2001:db8::1", "10.1.1.1"}, UnderlayLoopback: {"10.0.0.1"}, "empty0": nil})
	cases := []struct {
		name, doc string
		env       Env
		want      string // VTEP address, or an error containing it
		routerID  string
	}{
		{"flag wins", withVTEP, Env{VTEPAddress: netip.MustParseAddr("10.7.7.7"), Addrs: addrs}, "10.7.7.7", ""},
		{"the file", withVTEP, Env{VTEPInterface: "lo1", Addrs: addrs}, "10.8.8.8", ""},
		{"--vtep-interface", named, Env{VTEPInterface: "lo1", Addrs: addrs}, "10.1.1.1", ""},
		{"dum.underlay", named, Env{VTEPInterface: "empty0", Addrs: addrs}, "10.0.0.1", ""},
		{"router id", withRouterID, Env{}, "10.9.9.9", "10.9.9.9"},
		{"serverASN: router id from the VTEP", "serverASN: 65001\n", Env{Addrs: addrs}, "10.0.0.1", "10.0.0.1"},
		{"nothing to go by", named, Env{VTEPInterface: "nosuch0", Addrs: fakeAddrs(nil)},
			"underlay.vtepAddress: Required value: the VXLAN devices of the VNIs need the VTEP address; tried --vtep-address (not given), " +
				"the file's underlay.vtepAddress (not set), --vtep-interface nosuch0 (no such interface), interface dum.underlay (no such interface), " +
				"the router id (not set)", ""},
		{"IPv6 VTEP, no router id", "serverASN: 65001\n", Env{VTEPAddress: netip.MustParseAddr("2001:db8::9")},
			`underlay.routerID: Required value: FRR (underlay.asn 65001) needs a router id; the VTEP address "2001:db8::9" is no IPv4 address`, ""},
		{"no VNI: nothing needed", "vnimap: {vrf1: 100}\n", Env{}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.doc), tc.env)
			if strings.Contains(tc.want, ":") && !strings.Contains(tc.want, "::") || strings.Contains(tc.want, "Required") {
				if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Spec.Underlay.VTEPAddress != tc.want || d.Spec.Underlay.RouterID != tc.routerID && tc.routerID != "" {
				t.Fatalf("underlay %+v, want VTEP %q router id %q; notes %q", d.Spec.Underlay, tc.want, tc.routerID, d.Notes)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct {
		doc  string
		want string
	}{
		"empty":                  {"", "empty document"},
		"das-schiff invalid":     {"-invalid\n", "node config file"},
		"neither":                {"foo: 1\n", "neither a NodeNetworkConfig"},
		"wrong kind":             {"kind: Node\n", `kind: Unsupported value: "Node": supported values: "NodeNetworkConfig"`},
		"wrong apiVersion":       {"apiVersion: v1\nkind: NodeNetworkConfig\n", `apiVersion: Unsupported value: "v1"`},
		"unknown NNC field":      {"kind: NodeNetworkConfig\nspec:\n  revison: x\n", "revison"},
		"unknown legacy":         {"vnimap: {a: 1}\nbpfInterface: [x]\n", `unknown field "bpfInterface"`},
		"unknown vrfConfig key":  {"vrfConfig: {a: {vni: 1, routeTarget: x}}\n", `unknown field "routeTarget"`},
		"unknown replacement":    {"replacements: [{old: a, new: b, global: true}]\n", `unknown field "global"`},
		"two das-schiff docs":    {"vnimap: {a: 1}\n---\nvnimap: {b: 2}\n", "more than one das-schiff document"},
		"bad VNI":                {"vnimap: {a: 0}\n", "vnimap.a: Invalid value: 0: VNI must be within 1..16777215"},
		"VNI too big":            {"vrfConfig: {a: {vni: 16777216}}\n", "vrfConfig.a.vni: Invalid value: 16777216: VNI must be within 1..16777215"},
		"bad route target":       {"vrfConfig: {a: {vni: 5, rt: \"65000\"}}\n", `vrfConfig.a.rt: Invalid value: "65000": route target must be`},
		"duplicate VNI":          {"vnimap: {a: 5, b: 5}\n", "vnimap.b: Invalid value: 5: also the VNI of a"},
		"duplicate VNI across":   {"vnimap: {a: 5}\nvrfConfig: {b: {vni: 5}}\n", "vrfConfig.b: Invalid value: 5: also the VNI of a"},
		"long VRF name":          {"vnimap: {abcdefghijklm: 5}\n", `vnimap.abcdefghijklm: Invalid value: "abcdefghijklm": not a VRF name`},
		"bad interface":          {"bpfInterfaces: [\"a b\"]\n", `bpfInterfaces[0]: Invalid value: "a b"`},
		"duplicate iface":        {"bpfInterfaces: [x, x]\n", `bpfInterfaces[1]: Duplicate value: "x"`},
		"empty skip entry":       {"skipVRFConfig: [\"\"]\n", `skipVRFConfig[0]: Required value`},
		"bad serverASN":          {"serverASN: 0x\n", "serverASN"},
		"serverASN out of range": {"serverASN: 4294967295\n", "serverASN: Invalid value: 4294967295"},
		"serverASN conflict": {"serverASN: 65001\n---\nkind: NodeNetworkConfig\nspec:\n  underlay: {asn: 65000}\n",
			"serverASN: Invalid value: 65001: the NodeNetworkConfig's spec.underlay.asn is 65000"},
		"empty replacement": {"replacements: [{new: b}]\n", "replacements[0].old: Required value"},
		"bad regex":         {"replacements: [{old: \"(\", new: b, regex: true}]\n", `replacements[0].old: Invalid value: "(": not a regular expression`},
		"VRF not in tables": {"vnimap: {a: 5}\n---\nkind: NodeNetworkConfig\nspec:\n  vrfs: [{name: b}]\n",
			`spec.vrfs[0].name: Invalid value: "b": named without vni and tableID, but in none of vrfConfig, vnimap and skipVRFConfig`},
		"all problems at once": {"vnimap: {a: 0}\nbpfInterfaces: [x, x]\n", "VNI must be within 1..16777215\nbpfInterfaces[1]: Duplicate value"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), testEnv)
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

// das-schiff's own invalid test file is refused.
func TestDasSchiffInvalidFile(t *testing.T) {
	_, err := ReadFile("testdata/das-schiff/invalidConfig.yaml", testEnv)
	if !errors.Is(err, fielderr.ErrInvalid) {
		t.Fatalf("error %v, want ErrInvalid", err)
	}
}

// Replacements apply in order, plain and as regular expressions with groups (das-schiff's semantics).
func TestReplacements(t *testing.T) {
	d, err := Parse([]byte("replacements:\n- {old: 'permit 10', new: 'permit 20'}\n- {old: 'rm_(\\w+)_in', new: 'rm_${1}_out', regex: true}\n"), Env{})
	if err != nil {
		t.Fatal(err)
	}
	got := string(d.Replacements.Apply([]byte("route-map rm_a_in permit 10\nroute-map rm_b_in permit 10\n")))
	if want := "route-map rm_a_out permit 20\nroute-map rm_b_out permit 20\n"; got != want {
		t.Fatalf("replaced\n%s\nwant\n%s", got, want)
	}
}
