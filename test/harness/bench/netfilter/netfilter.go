// Package netfilter generates a kube-proxy-sized iptables ruleset for the benchmark: thousands of rules that never
// match the measured traffic but are walked for every forwarded packet, plus a conntrack match so connection
// tracking runs in the namespace, as on a Kubernetes node. The eBPF tc path redirects before netfilter's hooks,
// the kernel forwarding path crosses them; the ruleset shows what that costs.
package netfilter

import (
	"fmt"
	"net/netip"
	"strings"
)

// Spec sizes the ruleset.
type Spec struct {
	// Rules is the number of per-service rules, spread over the chains a forwarded packet crosses.
	Rules int
	// ServiceCIDR holds the virtual IPs the rules match; the measured traffic must not use it.
	ServiceCIDR netip.Prefix
}

// DefaultSpec is what `make bench` uses: 5000 rules over Kubernetes' default service range.
func DefaultSpec() Spec {
	return Spec{Rules: 5000, ServiceCIDR: netip.MustParsePrefix("10.96.0.0/12")}
}

// Chain names are prefixed so a reader of iptables-save sees at once where the rules came from.
const (
	rawChain     = "BENCH-KUBE-RAW"
	mangleChain  = "BENCH-KUBE-MANGLE"
	inputChain   = "BENCH-KUBE-NODEPORTS"
	forwardChain = "BENCH-KUBE-SERVICES"
)

// Layout says how many rules went where; the benchmark prints it next to the figures.
type Layout struct {
	RawPrerouting, ManglePrerouting, FilterInput, FilterForward int
}

// Total is the number of per-service rules (jump and conntrack rules not included).
func (l Layout) Total() int {
	return l.RawPrerouting + l.ManglePrerouting + l.FilterInput + l.FilterForward
}

func (l Layout) String() string {
	return fmt.Sprintf("%d rules: raw PREROUTING %d, mangle PREROUTING %d, filter INPUT %d, filter FORWARD %d, conntrack on",
		l.Total(), l.RawPrerouting, l.ManglePrerouting, l.FilterInput, l.FilterForward)
}

// split mirrors where kube-proxy and a CNI put rules: most in filter (services without endpoints are rejected
// there), some marking in mangle and notrack in raw (CNI-style), node ports on INPUT.
func split(n int) Layout {
	l := Layout{RawPrerouting: n / 20, ManglePrerouting: n / 20, FilterInput: n / 10}
	l.FilterForward = n - l.RawPrerouting - l.ManglePrerouting - l.FilterInput
	return l
}

// Ruleset returns iptables-restore input (IPv4) for spec, and where its rules are.
func Ruleset(spec Spec) (string, Layout, error) {
	if spec.Rules < 1 {
		return "", Layout{}, fmt.Errorf("rules: %d must be at least 1", spec.Rules)
	}
	if !spec.ServiceCIDR.IsValid() || !spec.ServiceCIDR.Addr().Is4() {
		return "", Layout{}, fmt.Errorf("serviceCIDR: %q is not an IPv4 prefix", spec.ServiceCIDR)
	}
	cidr := spec.ServiceCIDR.Masked()
	if hosts := uint64(1) << (32 - cidr.Bits()); hosts < uint64(spec.Rules)+2 {
		return "", Layout{}, fmt.Errorf("serviceCIDR: %s has %d addresses, too few for %d rules", cidr, hosts, spec.Rules)
	}
	layout := split(spec.Rules)

	vip := cidr.Addr().Next() // skip the network address
	nextVIP := func() netip.Addr { a := vip; vip = vip.Next(); return a }
	port := func(i int) int { return 1024 + i%60000 }

	var b strings.Builder
	b.WriteString("# kube-proxy-sized benchmark ruleset: " + layout.String() + "\n")

	b.WriteString("*raw\n:" + rawChain + " - [0:0]\n")
	fmt.Fprintf(&b, "-A PREROUTING -j %s\n", rawChain)
	for i := range layout.RawPrerouting {
		fmt.Fprintf(&b, "-A %s -d %s/32 -p udp -m udp --dport %d -j CT --notrack\n", rawChain, nextVIP(), port(i))
	}
	b.WriteString("COMMIT\n")

	b.WriteString("*mangle\n:" + mangleChain + " - [0:0]\n")
	fmt.Fprintf(&b, "-A PREROUTING -j %s\n", mangleChain)
	for i := range layout.ManglePrerouting {
		fmt.Fprintf(&b, "-A %s -d %s/32 -p tcp -m tcp --dport %d -j MARK --set-xmark 0x4000/0x4000\n", mangleChain, nextVIP(), port(i))
	}
	b.WriteString("COMMIT\n")

	b.WriteString("*filter\n:" + inputChain + " - [0:0]\n:" + forwardChain + " - [0:0]\n")
	fmt.Fprintf(&b, "-A INPUT -j %s\n", inputChain)
	// kube-proxy's first forwarding rule; a conntrack match makes the namespace track every connection.
	b.WriteString("-A FORWARD -m conntrack --ctstate INVALID -j DROP\n")
	fmt.Fprintf(&b, "-A FORWARD -j %s\n", forwardChain)
	for i := range layout.FilterInput {
		fmt.Fprintf(&b, "-A %s -d %s/32 -p tcp -m tcp --dport %d -j REJECT --reject-with icmp-port-unreachable\n", inputChain, nextVIP(), port(i))
	}
	for i := range layout.FilterForward {
		fmt.Fprintf(&b, "-A %s -d %s/32 -p tcp -m comment --comment \"bench/svc-%d has no endpoints\" -m tcp --dport %d -j REJECT --reject-with icmp-port-unreachable\n",
			forwardChain, nextVIP(), i, port(i))
	}
	b.WriteString("COMMIT\n")
	return b.String(), layout, nil
}
