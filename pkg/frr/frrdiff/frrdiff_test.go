package frrdiff_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/pkg/frr/frrdiff"
	"github.com/network-operator/network-operator/test/harness/golden"
)

// TestCompareCases keeps each case's listing (what frr-reload.py --test prints; TestCasesAgainstFRRReload
// checks it against frr-reload.py) and script (checked there against real daemons) as a golden file, per
// dialect: testdata/compare (FRR 10) and testdata/compare-frr8. go test ./pkg/frr/frrdiff -run TestCompareCases -update.
func TestCompareCases(t *testing.T) {
	for d, dir := range map[frrdiff.Dialect]string{frrdiff.FRR10: "compare", frrdiff.FRR8: "compare-frr8"} {
		for _, c := range compareCases {
			t.Run(dir+"/"+c.name, func(t *testing.T) { assertCompare(t, c, d, filepath.Join("testdata", dir, c.name+".txt")) })
		}
	}
}

// assertCompare is one case of TestCompareCases in one dialect.
func assertCompare(t *testing.T, c compareCase, dialect frrdiff.Dialect, path string) {
	cand, err := frrdiff.Parse([]byte(c.cand), frrdiff.File, dialect)
	if err != nil {
		t.Fatal(err)
	}
	running, err := frrdiff.Parse([]byte(c.running), frrdiff.Running, dialect)
	if err != nil {
		t.Fatal(err)
	}
	d, err := frrdiff.Compare(cand, running)
	if err != nil {
		t.Fatal(err)
	}
	del, add := d.Listing()
	var b strings.Builder
	b.WriteString("Lines To Delete\n" + strings.Join(del, "\n") + "\n\nLines To Add\n" + strings.Join(add, "\n") + "\n\nScript\n")
	b.Write(d.Script())
	golden.Assert(t, path, []byte(b.String()))
}

// contextsOf renders a Config as "key / key: line, line" per context.
func contextsOf(c *frrdiff.Config) []string {
	var out []string
	for _, ctx := range c.Contexts() {
		out = append(out, strings.Join(ctx.Keys, " / ")+": "+strings.Join(ctx.Lines, ", "))
	}
	return out
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		side frrdiff.Side
		text string
		want []string
	}{
		{"running config with its header", frrdiff.Running,
			"Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nvrf red\n vni 5001\nexit-vrf\n!\nrouter bgp 65000\n" +
				" neighbor a peer-group\n !\n address-family l2vpn evpn\n  vni 100\n   rd 1.1.1.1:100\n  exit-vni\n  advertise-all-vni\n" +
				" exit-address-family\n neighbor b peer-group\nexit\n!\nend\n",
			[]string{"frr version 8.4.4: ", "vrf red: vni 5001", "router bgp 65000: neighbor a peer-group, neighbor b peer-group",
				"router bgp 65000 / address-family l2vpn evpn: advertise-all-vni", "router bgp 65000 / address-family l2vpn evpn / vni 100: rd 1.1.1.1:100"}},
		{"a block repeated in a file is one context", frrdiff.File,
			"route-map rm permit 10\n match tag 1\nexit\nroute-map rm permit 10\n set tag 2\nexit\n",
			[]string{"route-map rm permit 10: match tag 1, set tag 2"}},
		{"file lines: blanks collapsed, IPv6 words canonical, comments skipped", frrdiff.File,
			"# a comment\n! another\nipv6 prefix-list p seq 5   permit FD00:0:0::1/48 le 64\nrouter bgp 65000\n  neighbor FD00::0001 remote-as 1\nexit\n",
			[]string{"ipv6 prefix-list p seq 5 permit fd00::/48 le 64: ", "router bgp 65000: neighbor fd00::1 remote-as 1"}},
		{"file lines: other Unicode blanks separate words too", frrdiff.File,
			"route-map rm permit 10\n description a\u00a0b\u2003 c\u00a0\nexit\n",
			[]string{"route-map rm permit 10: description a b c"}},
		{"running lines are only trimmed", frrdiff.Running,
			"router bgp 65000\n neighbor FD00::0001   remote-as 1\nexit\n",
			[]string{"router bgp 65000: neighbor FD00::0001   remote-as 1"}},
		{"prefix-list: network address, ge before le", frrdiff.Running,
			"ip prefix-list p seq 5 permit 10.1.2.3/16 le 28 ge 24\n",
			[]string{"ip prefix-list p seq 5 permit 10.1.0.0/16 ge 24 le 28: "}},
		{"static routes: network address, Null0", frrdiff.File,
			"ip route 10.1.2.3/16 null0\n",
			[]string{"ip route 10.1.0.0/16 Null0: "}},
		{"a route with vrf is the VRF's", frrdiff.File,
			"ip route 10.1.0.0/16 blackhole vrf red\n",
			[]string{"vrf red: ip route 10.1.0.0/16 blackhole"}},
		{"network lines in network form, a bare address a /8", frrdiff.File,
			"router bgp 1\n address-family ipv4 unicast\n  network 10.0.0.1\n  network 192.168.1.7/24 route-map rm\n exit-address-family\nexit\n",
			[]string{"router bgp 1: ", "router bgp 1 / address-family ipv4 unicast: network 10.0.0.0/8 , network 192.168.1.0/24  route-map rm"}},
		{"ES ids lower case", frrdiff.File,
			"interface eth0\n evpn mh es-id 03:AA:BB:CC:DD:EE:FF:00:11:22 trailing\nexit\n",
			[]string{"interface eth0: evpn mh es-id 03:aa:bb:cc:dd:ee:ff:00:11:22"}},
		{"a block open at the end is closed", frrdiff.File,
			"router bgp 1\n neighbor a peer-group\nline vty\n",
			nil}, // "line vty" is not indented below router bgp: undecidable, see TestParseUndecidable
		{"exit at the top is ignored", frrdiff.Running,
			"exit\nline vty\nexit\n",
			[]string{"line vty: "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := frrdiff.Parse([]byte(c.text), c.side, frrdiff.FRR10)
			if c.want == nil {
				if !errors.Is(err, frrdiff.ErrUndecidable) {
					t.Errorf("Parse = %v, want ErrUndecidable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := contextsOf(cfg); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("contexts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestParseUndecidable: where vtysh's command tree would decide the structure, Parse refuses and names the line.
func TestParseUndecidable(t *testing.T) {
	cases := []struct {
		name string
		side frrdiff.Side
		text string
		line int
	}{
		{"top-level line inside an open block", frrdiff.File, "router bgp 1\n neighbor a peer-group\nip prefix-list x seq 5 permit any\n", 3},
		{"address-family line at the block's indentation", frrdiff.File,
			"router bgp 1\n  address-family ipv4 unicast\n    network 10.0.0.0/8\n  neighbor a activate\n  exit-address-family\nexit\n", 4},
		{"exit of another block", frrdiff.File, "router bgp 1\n address-family ipv4 unicast\n  vni 1\n exit-address-family\nexit\n", 4},
		{"block pkg/frr does not render", frrdiff.File, "router ospf\n ospf router-id 1.1.1.1\nexit\n", 1},
		{"sub-block pkg/frr does not render", frrdiff.File, "router bgp 1\n bmp targets x\n exit\nexit\n", 2},
		{"end inside a block", frrdiff.Running, "router bgp 1\n neighbor a peer-group\nend\n", 3},
		{"tab indentation", frrdiff.File, "router bgp 1\n\tneighbor a peer-group\nexit\n", 2},
		{"IPv4-mapped IPv6 (Python prints it otherwise)", frrdiff.File, "ipv6 prefix-list p seq 5 permit ::ffff:10.0.0.0/104\n", 1},
		{"prefix length with a leading zero (Python reads it)", frrdiff.File, "ipv6 prefix-list p seq 5 permit fd00::/048\n", 1},
		{"route with vrf inside a block", frrdiff.File, "vrf red\n ip route 10.0.0.0/8 blackhole vrf blue\nexit-vrf\n", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := frrdiff.Parse([]byte(c.text), c.side, frrdiff.FRR10)
			var u *frrdiff.UndecidableError
			if !errors.Is(err, frrdiff.ErrUndecidable) || !errors.As(err, &u) {
				t.Fatalf("Parse = %v, want an UndecidableError", err)
			}
			if u.Line != c.line {
				t.Errorf("line %d, want %d (%v)", u.Line, c.line, err)
			}
		})
	}
}

// TestCompareUndecidable: where frr-reload.py fails with a Python exception or does what is not worth copying,
// Compare leaves the decision to frr-reload.py.
func TestCompareUndecidable(t *testing.T) {
	cases := []struct{ name, running, cand string }{
		{"BFD timers of a neighbor deleted",
			"router bgp 1\n neighbor a peer-group\n neighbor a bfd 3 300 300\nexit\n", "router bgp 1\n neighbor a peer-group\nexit\n"},
		{"a route-map line deleted before any added line in BGP",
			"router bgp 1\n neighbor a peer-group\n neighbor a route-map x in\nexit\n",
			"router bgp 1\n neighbor a peer-group\nexit\nrouter bgp 1 vrf red\n neighbor b peer-group\nexit\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cand, err := frrdiff.Parse([]byte(c.cand), frrdiff.File, frrdiff.FRR10)
			if err != nil {
				t.Fatal(err)
			}
			running, err := frrdiff.Parse([]byte(c.running), frrdiff.Running, frrdiff.FRR10)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := frrdiff.Compare(cand, running); !errors.Is(err, frrdiff.ErrUndecidable) {
				t.Errorf("Compare = %v, want ErrUndecidable", err)
			}
		})
	}
}

// Contexts of many lines are compared by set, few by scan: both find exactly the lines that differ.
func TestCompareContextSizes(t *testing.T) {
	for _, n := range []int{3, 17, 18, 200} { // a side has n-1 lines
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			block := func(skip int) string {
				var b strings.Builder
				b.WriteString("router bgp 65000\n")
				for i := range n {
					if i != skip {
						fmt.Fprintf(&b, " neighbor 10.0.0.%d remote-as %d\n", i, 65000+i)
					}
				}
				return b.String() + "exit\n"
			}
			cand, err := frrdiff.Parse([]byte(block(0)), frrdiff.File, frrdiff.FRR10)
			if err != nil {
				t.Fatal(err)
			}
			running, err := frrdiff.Parse([]byte(block(n-1)), frrdiff.Running, frrdiff.FRR10)
			if err != nil {
				t.Fatal(err)
			}
			d, err := frrdiff.Compare(cand, running)
			if err != nil {
				t.Fatal(err)
			}
			del, add := d.Listing()
			wantDel := []string{"router bgp 65000", " no neighbor 10.0.0.0 remote-as 65000"}
			wantAdd := []string{"router bgp 65000", fmt.Sprintf(" neighbor 10.0.0.%d remote-as %d", n-1, 65000+n-1)}
			if !slices.Equal(del, wantDel) || !slices.Equal(add, wantAdd) {
				t.Errorf("delete %q, add %q; want %q, %q", del, add, wantDel, wantAdd)
			}
		})
	}
}
