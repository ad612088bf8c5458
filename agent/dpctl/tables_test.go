package dpctl

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/agent/bpftables"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/maps"
)

const validFile = `
revision: demo-1
vrfs:
  - {name: tenant-a, id: 1, table: 101, vni: 10101, lookupInterface: fwd-a}
  - {name: tenant-b, id: 2, table: 102}
interfaces:
  - {name: ra, vrf: tenant-a}
  - {name: rb, vrf: tenant-b, strict: true}
  - {name: rb, vlan: 100, vrf: tenant-b, mode: pass}
  - {name: rx, mode: redirect}
redirects:
  - {from: rx, to: ry, peer: true, srcMAC: "02:00:00:00:00:02", dstMAC: "02:00:00:00:00:01"}
sbr:
  - {prefix: "fd00:50::/64", vrf: tenant-b}
  - {prefix: 10.50.0.0/24, vrf: tenant-a}
  - {prefix: 10.60.0.0/16, vrf: tenant-a}
`

func TestParseValid(t *testing.T) {
	f, err := Parse([]byte(validFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.VRFs) != 2 || len(f.Interfaces) != 4 || len(f.Redirects) != 1 || len(f.SBR) != 3 {
		t.Fatalf("parsed %d vrfs, %d interfaces, %d redirects, %d sbr; want 2, 4, 1, 3", len(f.VRFs), len(f.Interfaces),
			len(f.Redirects), len(f.SBR))
	}
	if f.SBR[1] != (SBR{Prefix: "10.50.0.0/24", VRF: "tenant-a"}) {
		t.Fatalf("sbr not decoded: %+v", f.SBR)
	}
	if f.VRFs[0].LookupInterface != "fwd-a" || f.VRFs[0].VNI != 10101 || f.Interfaces[1].Strict == nil || !*f.Interfaces[1].Strict {
		t.Fatalf("fields not decoded: %+v", f)
	}
}

// TestParseErrors: every error names the field and the value, as the user wrote them.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"undefined vrf", `
vrfs: [{name: red, id: 1, table: 10}]
interfaces: [{name: a, vrf: red}, {name: b, vrf: red}, {name: c, vrf: blue}]`,
			[]string{`interfaces[2].vrf: Invalid value: "blue": not in vrfs`}},
		{"route needs vrf", `interfaces: [{name: a}]`, []string{`interfaces[0].vrf: Invalid value: "": required for mode route`}},
		{"unknown mode", `interfaces: [{name: a, mode: bridge}]`, []string{`interfaces[0].mode: Unsupported value: "bridge": supported values: "route", "redirect", "pass"`}},
		{"vrf id 0", `vrfs: [{name: red, id: 0, table: 10}]`, []string{`vrfs[0].id: Invalid value: 0: reserved`}},
		{"vrf id too big", `vrfs: [{name: red, id: 4096, table: 10}]`, []string{`vrfs[0].id: Invalid value: 4096: must be within 1..4095`}},
		{"duplicate vrf id and name", `vrfs: [{name: red, id: 1, table: 10}, {name: red, id: 1, table: 11}]`,
			[]string{`vrfs[1].name: Duplicate value: "red"`, `vrfs[1].id: Invalid value: 1: duplicate of vrfs[0]`}},
		{"table 0", `vrfs: [{name: red, id: 1}]`, []string{`vrfs[0].table: Invalid value: 0: reserved: not a routing table`}},
		{"vni too big", `vrfs: [{name: red, id: 1, table: 10, vni: 16777216}]`, []string{`vrfs[0].vni: Invalid value: 16777216: must be within 0..16777215 (24 bits)`}},
		{"vlan range", `
vrfs: [{name: red, id: 1, table: 10}]
interfaces: [{name: a, vrf: red, vlan: 4095}]`, []string{`interfaces[0].vlan: Invalid value: 4095: must be within 0..4094`}},
		{"duplicate interface", `
vrfs: [{name: red, id: 1, table: 10}]
interfaces: [{name: a, vrf: red}, {name: a, vrf: red}]`, []string{`interfaces[1]: Invalid value: "a vlan 0": duplicate of interfaces[0]`}},
		{"long name", `interfaces: [{name: abcdefghijklmnop, mode: pass}]`, []string{`interfaces[0].name: Invalid value: "abcdefghijklmnop": longer than 15 bytes`}},
		{"redirect without entry", `interfaces: [{name: x, mode: redirect}]`,
			[]string{`interfaces[0].name: Invalid value: "x": mode redirect but no redirects entry`}},
		{"redirect to self", `
interfaces: [{name: x, mode: redirect}]
redirects: [{from: x, to: x}]`, []string{`redirects[0].to: Invalid value: "x": the same interface as the ingress interface`}},
		{"bad mac", `
interfaces: [{name: x, mode: redirect}]
redirects: [{from: x, to: y, srcMAC: "zz", dstMAC: "02:00:00:00:00:01"}]`, []string{`redirects[0].srcMAC: Invalid value: "zz": not a MAC address`}},
		{"group src mac", `
interfaces: [{name: x, mode: redirect}]
redirects: [{from: x, to: y, srcMAC: "01:00:5e:00:00:01", dstMAC: "02:00:00:00:00:01"}]`,
			[]string{`redirects[0].srcMAC: Invalid value: "01:00:5e:00:00:01": a group address`}},
		{"one mac only", `
interfaces: [{name: x, mode: redirect}]
redirects: [{from: x, to: y, dstMAC: "02:00:00:00:00:01"}]`, []string{`redirects[0].srcMAC: Invalid value: "": must be set when dstMAC is set`}},
		{"unknown field", `vrfs: [{name: red, id: 1, tabel: 10}]`, []string{`vrfs[0].tabel: Invalid value: "tabel": not a known field`}},
		{"wrong type", `vrfs: [{name: red, id: one, table: 10}]`, []string{"vrfs.id"}},
		{"revision too long", "revision: " + strings.Repeat("r", 65), []string{`revision: Invalid value: "rrrr`, "longer than 64 bytes"}},
		{"vrf id negative", `vrfs: [{name: red, id: -1, table: 10}]`, []string{`vrfs[0].id: Invalid value: -1: must be within 1..4095`}},
		// sbr: the prefix's syntax is the file's; the rest is maps.Tables' rules, named in the file's fields.
		{"sbr prefix not a CIDR", `
vrfs: [{name: red, id: 1, table: 10}]
sbr: [{prefix: 10.50.0.0/24, vrf: red}, {prefix: 10.60.0.1, vrf: red}]`, []string{`sbr[1].prefix: Invalid value: "10.60.0.1": not a CIDR prefix`}},
		{"sbr prefix or vrf missing", `
vrfs: [{name: red, id: 1, table: 10}]
sbr: [{vrf: red}, {prefix: 10.50.0.0/24}]`, []string{`sbr[0].prefix: Required value: a CIDR prefix`, `sbr[1].vrf: Required value: a VRF name`}},
		{"sbr prefix with host bits", `
vrfs: [{name: red, id: 1, table: 10}]
sbr: [{prefix: 10.50.0.1/24, vrf: red}]`, []string{`sbr[0].prefix: Invalid value: "10.50.0.1/24": not a network address (the prefix is 10.50.0.0/24)`}},
		{"sbr vrf unknown", `
vrfs: [{name: red, id: 1, table: 10}]
sbr: [{prefix: 10.50.0.0/24, vrf: red}, {prefix: 10.60.0.0/24, vrf: blue}]`, []string{`sbr[1].vrf: Invalid value: "blue": not in vrfs`}},
		{"sbr vrf routes by main", `
vrfs: [{name: red, id: 1, table: 254}]
sbr: [{prefix: 10.50.0.0/24, vrf: red}]`, []string{`sbr[0].vrf: Invalid value: "red": routes by the main table (254)`}},
		{"sbr prefixes of two vrfs overlap", `
vrfs: [{name: red, id: 1, table: 10}, {name: blue, id: 2, table: 20}]
sbr: [{prefix: 10.50.0.0/16, vrf: red}, {prefix: 10.50.7.0/24, vrf: blue}]`,
			[]string{`sbr[1].prefix: Invalid value: "10.50.7.0/24": overlaps 10.50.0.0/16 of sbr[0], another VRF`}},
		{"sbr duplicate", `
vrfs: [{name: red, id: 1, table: 10}]
sbr: [{prefix: "fd00:50::/64", vrf: red}, {prefix: "fd00:50::/64", vrf: red}]`,
			[]string{`sbr[1].prefix: Invalid value: "fd00:50::/64": duplicate of sbr[0]`}},
		{"sbr unknown field", `sbr: [{prefix: 10.50.0.0/24, vrf: red, table: 10}]`, []string{`sbr[0].table: Invalid value: "table": not a known field`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want errors %q", tt.want)
			}
			if !errors.Is(err, fielderr.ErrInvalid) {
				t.Errorf("error %v does not wrap fielderr.ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n  %v\ndoes not contain\n  %s", err, w)
				}
			}
		})
	}
}

// TestCopiesThatDisagreed: the file's validator and maps.Tables.Validate had rules of their own; where they
// disagreed, the table rule is kept (it is the only one now).
func TestCopiesThatDisagreed(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // "" = valid
	}{
		// The file refused a redirect entry that no interface in mode redirect uses; maps.Tables accepts it (the
		// router never reads it) and is the one table validator: accepted.
		{"redirect entry without an interface in mode redirect", `redirects: [{from: x, to: y}]`, ""},
		// maps.Tables accepted a redirect to the ingress interface, the file refused it: a redirect does not
		// decrement the TTL, the table rule refuses it now.
		{"redirect to itself", "interfaces: [{name: x, mode: redirect}]\nredirects: [{from: x, to: x}]",
			`redirects[0].to: Invalid value: "x": the same interface as the ingress interface`},
		// The file checked a table id above 32 bits, maps.Tables cannot see one: refused by the table rule with
		// the file's value.
		{"table id above 32 bits", `vrfs: [{name: red, id: 1, table: 4294967296}]`, `vrfs[0].table: Invalid value: 4294967296: reserved`},
		// A VLAN above 16 bits wrapped around in the file's conversion; refused with the file's value.
		{"vlan above 16 bits", "vrfs: [{name: red, id: 1, table: 10}]\ninterfaces: [{name: a, vrf: red, vlan: 65536}]",
			`interfaces[0].vlan: Invalid value: 65536: must be within 0..4094`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

type fakeResolver map[string]int

func (f fakeResolver) Link(name string) (bpftables.Link, error) {
	if i, ok := f[name]; ok {
		return bpftables.Link{Ifindex: i}, nil
	}
	return bpftables.Link{}, fmt.Errorf("link %q not found", name)
}

func TestTablesResolvesNames(t *testing.T) {
	f, err := Parse([]byte(validFile))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := f.Tables(fakeResolver{"ra": 10, "rb": 11, "rx": 12, "ry": 13, "fwd-a": 20})
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Tables{
		VRFs: []maps.VRF{{ID: 1, TableID: 101, VNI: 10101, LookupIfindex: 20}, {ID: 2, TableID: 102}},
		Interfaces: []maps.Interface{
			{Ifindex: 10, VRF: 1, Mode: maps.ModeRoute},
			{Ifindex: 11, VRF: 2, Mode: maps.ModeRoute, Strict: true},
			{Ifindex: 11, VLAN: 100, VRF: 2, Mode: maps.ModePass},
			{Ifindex: 12, Mode: maps.ModeRedirect},
		},
		Redirects: []maps.Redirect{{Ifindex: 12, EgressIfindex: 13, Peer: true,
			SrcMAC: maps.MAC{2, 0, 0, 0, 0, 2}, DstMAC: maps.MAC{2, 0, 0, 0, 0, 1}}},
		SBR: []maps.SBR{{Prefix: netip.MustParsePrefix("10.50.0.0/24"), VRF: 1}, {Prefix: netip.MustParsePrefix("10.60.0.0/16"), VRF: 1},
			{Prefix: netip.MustParsePrefix("fd00:50::/64"), VRF: 2}},
	}
	if !tables.Equal(want) {
		t.Fatalf("Tables() =\n%+v\nwant\n%+v", tables, want)
	}
	if got := f.RevisionFor(tables); got != "demo-1" {
		t.Fatalf("RevisionFor = %q, want the file's revision", got)
	}
}

func TestTablesFileStrictIsDefault(t *testing.T) {
	f, err := Parse([]byte(`
strict: true
vrfs: [{name: red, id: 1, table: 10}]
interfaces: [{name: a, vrf: red}, {name: b, vrf: red, strict: false}]`))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := f.Tables(fakeResolver{"a": 1, "b": 2})
	if err != nil {
		t.Fatal(err)
	}
	if !tables.Interfaces[0].Strict || tables.Interfaces[1].Strict {
		t.Fatalf("strict = %v, %v; want file default true, explicit false", tables.Interfaces[0].Strict, tables.Interfaces[1].Strict)
	}
}

func TestTablesUnknownInterfaceNamesField(t *testing.T) {
	f, err := Parse([]byte(validFile))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Tables(fakeResolver{"ra": 10, "rb": 11, "rx": 12, "fwd-a": 20})
	if err == nil || !strings.Contains(err.Error(), `redirects[0].to: Invalid value: "ry": does not exist on the node`) || !errors.Is(err, fielderr.ErrInvalid) {
		t.Fatalf("error = %v, want redirects[0].to named", err)
	}
}

func TestRevisionDefaultsToContentHash(t *testing.T) {
	f := File{VRFs: []VRF{{Name: "red", ID: 1, Table: 10}}, Interfaces: []Interface{{Name: "a", VRF: "red"}}}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	t1, err := f.Tables(fakeResolver{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	t2, err := f.Tables(fakeResolver{"a": 2})
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := f.RevisionFor(t1), f.RevisionFor(t2)
	if r1 == r2 || !strings.HasPrefix(r1, "sha256:") || len(r1) >= 64 {
		t.Fatalf("revisions %q, %q: want distinct sha256:... under 64 bytes", r1, r2)
	}
	if again := f.RevisionFor(t1); again != r1 {
		t.Fatalf("revision not deterministic: %q then %q", r1, again)
	}
}

// TestDemoTablesFile keeps the shipped example valid.
func TestDemoTablesFile(t *testing.T) {
	data, err := os.ReadFile("../../hack/demo/tables.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatalf("hack/demo/tables.yaml: %v", err)
	}
	if len(f.VRFs) != 2 || f.VRFs[0].Table == f.VRFs[1].Table {
		t.Fatalf("demo tables: want two VRFs with different routing tables, got %+v", f.VRFs)
	}
}
