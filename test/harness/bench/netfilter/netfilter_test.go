package netfilter

import (
	"net/netip"
	"strings"
	"testing"
)

func TestRulesetLayoutAndAddresses(t *testing.T) {
	tests := []struct {
		name  string
		rules int
	}{
		{"default size", 5000},
		{"small", 7},
		{"one", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Rules: tt.rules, ServiceCIDR: netip.MustParsePrefix("10.96.0.0/12")}
			text, layout, err := Ruleset(spec)
			if err != nil {
				t.Fatal(err)
			}
			if layout.Total() != tt.rules {
				t.Fatalf("layout total %d, want %d", layout.Total(), tt.rules)
			}
			perChain := map[string]int{}
			seen := map[netip.Addr]bool{}
			for _, line := range strings.Split(text, "\n") {
				f := strings.Fields(line)
				if len(f) < 4 || f[0] != "-A" || !strings.HasPrefix(f[1], "BENCH-") {
					continue
				}
				perChain[f[1]]++
				if f[2] != "-d" {
					t.Fatalf("rule without destination match: %q", line)
				}
				p, err := netip.ParsePrefix(f[3])
				if err != nil || p.Bits() != 32 || !spec.ServiceCIDR.Contains(p.Addr()) {
					t.Fatalf("rule destination %q not a /32 inside %s", f[3], spec.ServiceCIDR)
				}
				if seen[p.Addr()] {
					t.Fatalf("destination %s used twice", p.Addr())
				}
				seen[p.Addr()] = true
			}
			want := map[string]int{rawChain: layout.RawPrerouting, mangleChain: layout.ManglePrerouting,
				inputChain: layout.FilterInput, forwardChain: layout.FilterForward}
			for chain, n := range want {
				if perChain[chain] != n {
					t.Errorf("chain %s has %d rules, want %d", chain, perChain[chain], n)
				}
			}
			for _, jump := range []string{"-A PREROUTING -j " + rawChain, "-A PREROUTING -j " + mangleChain,
				"-A INPUT -j " + inputChain, "-A FORWARD -j " + forwardChain, "-A FORWARD -m conntrack --ctstate INVALID -j DROP"} {
				if !strings.Contains(text, jump+"\n") {
					t.Errorf("ruleset lacks %q", jump)
				}
			}
			if got := strings.Count(text, "COMMIT\n"); got != 3 {
				t.Errorf("%d COMMIT lines, want 3 (raw, mangle, filter)", got)
			}
		})
	}
}

func TestRulesetForwardChainGetsMostRules(t *testing.T) {
	_, l, err := Ruleset(DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	if l.FilterForward < l.Total()*3/4 {
		t.Fatalf("FORWARD has %d of %d rules; the forwarded path must cross most of them", l.FilterForward, l.Total())
	}
}

func TestRulesetRejectsBadSpec(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{"zero rules", Spec{Rules: 0, ServiceCIDR: netip.MustParsePrefix("10.96.0.0/12")}, "rules: 0"},
		{"ipv6 cidr", Spec{Rules: 5, ServiceCIDR: netip.MustParsePrefix("fd00::/64")}, `serviceCIDR: "fd00::/64"`},
		{"no cidr", Spec{Rules: 5}, "serviceCIDR:"},
		{"cidr too small", Spec{Rules: 10, ServiceCIDR: netip.MustParsePrefix("10.96.0.0/29")}, "too few for 10 rules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Ruleset(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Ruleset(%+v) error = %v, want it to contain %q", tt.spec, err, tt.wantErr)
			}
		})
	}
}
