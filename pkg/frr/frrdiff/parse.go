// Package frrdiff computes, in Go, what frr-reload.py computes in Python: the lines to delete and to add that
// turn FRR's running configuration into a config file, and the vtysh command file that applies them. It
// follows the frr-reload.py of FRR 8 (8.4) or of FRR 10 (10.3), as the Dialect says.
//
// Parse reads a config into contexts the way frr-reload.py's Config does after "vtysh -m" marked it (block
// headers, nested address-families and VNIs, single-line contexts, its normalisations of prefixes, "network"
// lines, IPv6 words and static routes). frr-reload.py leaves the structure of a file to vtysh's parser, which
// knows every command's node; this package does not, so it reads only configs whose structure is explicit:
// every block ends with its exit line (as FRR's own "show running-config" and pkg/frr's templates write them),
// every line inside a block is indented deeper than the block's header, and every block is one of those
// pkg/frr renders (router bgp with address-families and VNIs, vrf, interface, route-map, line vty, bfd profiles). Anything else
// is ErrUndecidable: the caller then runs frr-reload.py itself.
//
// Compare is a line-for-line port of frr-reload.py's compare_context_objects with the clean-ups it runs
// (check_for_exit_vrf, ignore_delete_re_add_lines, delete_move_lines, ignore_unconfigurable_lines), so the
// Delta lists what "frr-reload.py --test" prints; where frr-reload.py would fail (a Python exception) or
// behaves in ways not worth copying (BFD timer lines), Compare returns ErrUndecidable. Script orders a Delta
// for one "vtysh -f" run.
package frrdiff

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// ErrUndecidable marks a config (or a pair) this package does not diff the way frr-reload.py would; the
// *UndecidableError says why.
var ErrUndecidable = errors.New("frrdiff cannot decide")

// UndecidableError names the reason and, when it comes from a line, the line (1-based; 0 when none).
type UndecidableError struct {
	Line   int
	Reason string
}

func (e *UndecidableError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", ErrUndecidable, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", ErrUndecidable, e.Reason)
}

// Is makes errors.Is(err, ErrUndecidable) true.
func (e *UndecidableError) Is(target error) bool { return target == ErrUndecidable }

func undecidable(line int, format string, args ...any) error {
	return &UndecidableError{Line: line, Reason: fmt.Sprintf(format, args...)}
}

// Dialect is the FRR release line whose frr-reload.py Parse and Compare follow: its rules changed between
// releases, and a Delta must list what the running FRR's own frr-reload.py would.
type Dialect int

const (
	// FRR8 is FRR 8's frr-reload.py (Debian 12's 8.4): a host's own FRR.
	FRR8 Dialect = iota
	// FRR10 is FRR 10's (Debian 13's 10.3, the FRR that ships): a file's "interface X vrf Y" read as
	// "interface X" and "ebgp-multihop 255" as "ebgp-multihop"; no "exit-vrf" inserted after the lines added
	// to a VRF; deleted "neighbor ... remote-as" lines always moved last; a deleted description without its
	// text.
	FRR10
)

// Side says how a text is read: as a config file (frr.conf, a candidate) or as FRR's "show running-config".
// frr-reload.py normalises a file's lines more than the running config's.
type Side int

const (
	// File is a config file: whitespace runs collapsed, IPv6 words in canonical form, old-style VRF routes.
	File Side = iota
	// Running is FRR's running config: lines only trimmed, its header skipped.
	Running
)

// Context is one block (or single-line context) of a Config: its key path (the header lines, outermost
// first; a single line is its own one-element key) and its lines in order, repeats kept as frr-reload.py does.
type Context struct {
	Keys  []string
	Lines []string
}

// Config is a parsed configuration: its contexts in the order they first appear.
type Config struct {
	dialect  Dialect
	contexts []*Context
	index    map[string]*Context
}

// Contexts returns the contexts in order.
func (c *Config) Contexts() []*Context { return c.contexts }

func (c *Config) get(keys []string) *Context { return c.index[joinKeys(keys)] }

func joinKeys(keys []string) string { return strings.Join(keys, "\x00") }

// keyword is a node of frr-reload.py's ctx_keywords tree: the line prefixes that open a block at that level.
type keyword struct {
	prefix    string
	children  []keyword
	supported bool // rendered by pkg/frr and diffed here; the others are ErrUndecidable
	exit      string
}

// keywords is frr-reload.py's ctx_keywords (FRR 8.4), in its order: a line opens the first block whose prefix
// it starts with.
var keywords = []keyword{
	{prefix: "router bgp ", supported: true, exit: "exit", children: []keyword{
		{prefix: "address-family ", supported: true, exit: "exit-address-family", children: []keyword{
			{prefix: "vni ", supported: true, exit: "exit-vni"},
		}},
		{prefix: "vnc defaults"}, {prefix: "vnc nve-group "}, {prefix: "vnc l2-group "}, {prefix: "vrf-policy "},
		{prefix: "bmp targets "}, {prefix: "segment-routing srv6"},
	}},
	{prefix: "router rip"}, {prefix: "router ripng"}, {prefix: "router isis "}, {prefix: "router openfabric "},
	{prefix: "router ospf"}, {prefix: "router ospf6"}, {prefix: "router eigrp "}, {prefix: "router babel"},
	{prefix: "mpls ldp"}, {prefix: "l2vpn "}, {prefix: "key chain "},
	{prefix: "vrf ", supported: true, exit: "exit-vrf"},
	{prefix: "interface ", supported: true, exit: "exit", children: []keyword{{prefix: "link-params"}}},
	{prefix: "pseudowire "}, {prefix: "segment-routing"}, {prefix: "nexthop-group "},
	{prefix: "route-map ", supported: true, exit: "exit"},
	{prefix: "pbr-map "}, {prefix: "rpki"},
	{prefix: "bfd", supported: true, exit: "exit", children: []keyword{
		{prefix: "peer "}, {prefix: "profile ", supported: true, exit: "exit"},
	}},
	{prefix: "line vty", supported: true, exit: "exit"},
}

// openBlock is a block being read: its keyword and the indentation of its header.
type openBlock struct {
	kw     keyword
	indent int
}

// Parse reads text as side, as d's frr-reload.py does. Lines whose structure needs vtysh's command tree to be
// known are ErrUndecidable.
func Parse(text []byte, side Side, d Dialect) (*Config, error) {
	lines, err := prepare(text, side, d)
	if err != nil {
		return nil, err
	}
	cfg := &Config{dialect: d, index: map[string]*Context{}}
	var keys []string
	var open []openBlock
	var cur []string
	level := func() []keyword {
		if len(open) == 0 {
			return keywords
		}
		return open[len(open)-1].kw.children
	}
	pop := func() {
		cfg.save(keys, cur)
		keys, open, cur = keys[:len(keys)-1], open[:len(open)-1], nil
	}
	for _, l := range lines {
		line := l.text
		switch {
		case line == "" || strings.HasPrefix(line, "!") || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "exit"):
			if len(open) == 0 {
				continue
			}
			if want := open[len(open)-1].kw.exit; line != "exit" && line != want {
				return nil, undecidable(l.number, "%q does not end the block %q (%s does)", line, keys[len(keys)-1], want)
			}
			pop()
			continue
		case strings.HasPrefix(line, "end"):
			if line != "end" || len(open) > 0 && !l.synthetic {
				return nil, undecidable(l.number, "%q inside a block", line)
			}
			for len(open) > 0 {
				pop()
			}
			continue
		}
		if len(open) > 0 && !l.synthetic && l.indent <= open[len(open)-1].indent {
			return nil, undecidable(l.number, "%q is not indented below %q: which block it belongs to is vtysh's decision", line, keys[len(keys)-1])
		}
		if l.synthetic && len(open) > 0 && strings.HasPrefix(line, "vrf ") {
			return nil, undecidable(l.number, "a route with \"vrf\" inside the block %q", keys[len(keys)-1])
		}
		if kw, ok := opens(line, level()); ok {
			if !kw.supported {
				return nil, undecidable(l.number, "block %q is not one pkg/frr renders", line)
			}
			cfg.save(keys, cur)
			keys, open, cur = append(keys, line), append(open, openBlock{kw: kw, indent: l.indent}), nil
			continue
		}
		if len(open) == 0 {
			cfg.save([]string{line}, nil)
		} else {
			cur = append(cur, line)
		}
	}
	for len(open) > 0 {
		pop()
	}
	return cfg, nil
}

// opens returns the keyword of the block line opens at this level, if any. A "candidate-path ... explicit" line
// is a single command in frr-reload.py; such blocks are not supported here anyway.
func opens(line string, level []keyword) (keyword, bool) {
	for _, k := range level {
		if strings.HasPrefix(line, k.prefix) {
			return k, true
		}
	}
	return keyword{}, false
}

// save is frr-reload.py's save_contexts: the key and lines normalised, merged into an existing context.
func (c *Config) save(keys, lines []string) {
	if len(keys) == 0 {
		return
	}
	keys = append([]string(nil), keys...)
	keys[0] = normalizeKey(keys[0])
	if strings.HasPrefix(keys[0], "router bgp") {
		for i, l := range lines {
			lines[i] = normalizeNetwork(l)
		}
	}
	if strings.HasPrefix(keys[0], "vrf ") {
		for i, l := range lines {
			if strings.HasPrefix(l, "ip route ") || strings.HasPrefix(l, "ipv6 route ") {
				lines[i] = null0Re.ReplaceAllString(l, " Null0")
			}
		}
	}
	k := joinKeys(keys)
	ctx, ok := c.index[k]
	if !ok {
		ctx = &Context{Keys: keys}
		c.index[k] = ctx
		c.contexts = append(c.contexts, ctx)
	}
	ctx.Lines = append(ctx.Lines, lines...)
}

var (
	routeKeyRe   = regexp.MustCompile(`^(ip|ipv6)\s+route\s+([A-Fa-f:.0-9/]+)(.*)$`)
	plistKeyRe   = regexp.MustCompile(`^(ip|ipv6)\s+prefix-list(.*)(permit|deny)\s+([A-Fa-f:.0-9/]+)(.*)$`)
	leGeRe       = regexp.MustCompile(`(.*)le\s+(\d+)\s+ge\s+(\d+)(.*)`)
	networkRe    = regexp.MustCompile(`^network\s+([A-Fa-f:.0-9/]+)(.*)$`)
	null0Re      = regexp.MustCompile(`\s+null0(\s*)$`)
	prefixLikeRe = regexp.MustCompile(`^[0-9A-Fa-f:.]+/[0-9]+$`)
)

// normalizeKey applies save_contexts' fixes to a context's first key: static route and prefix-list prefixes in
// network form, "le X ge Y" as "ge Y le X", null0 as Null0.
func normalizeKey(k string) string {
	if m := routeKeyRe.FindStringSubmatch(k); m != nil && strings.Contains(m[2], "/") {
		if p, ok := network(m[2]); ok {
			k = m[1] + " route " + p + m[3]
		}
	}
	if m := plistKeyRe.FindStringSubmatch(k); m != nil {
		addr := m[4]
		if strings.Contains(addr, "/") {
			if p, ok := network(addr); ok {
				addr = p
			}
		}
		lege := m[5]
		if g := leGeRe.FindStringSubmatch(lege); g != nil {
			lege = g[1] + "ge " + g[3] + " le " + g[2] + g[4]
		}
		k = m[1] + " prefix-list" + m[2] + m[3] + " " + addr + lege
	}
	if strings.HasPrefix(k, "ip route") || strings.HasPrefix(k, "ipv6 route") {
		k = null0Re.ReplaceAllString(k, " Null0")
	}
	return k
}

// normalizeNetwork is save_contexts' fix of "network" lines in router bgp: the prefix in network form (a bare
// address taken as /8, as BGP does), the rest after one space.
func normalizeNetwork(l string) string {
	m := networkRe.FindStringSubmatch(l)
	if m == nil {
		return l
	}
	addr := m[1]
	if !strings.Contains(addr, "/") {
		addr += "/8"
	}
	p, ok := network(addr)
	if !ok {
		return l
	}
	return "network " + p + " " + m[2]
}

// network is Python's ip_network(s, strict=False) printed as "address/length"; false where Python raises
// ValueError. Forms Python takes and netip does not (netmasks, prefix lengths with leading zeros) are not
// rendered by FRR or pkg/frr; prepare refuses them before they get here.
func network(s string) (string, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Zone() != "" {
		return "", false
	}
	return p.Masked().String(), true
}

// line is one input line after frr-reload.py's per-side treatment.
type line struct {
	text      string
	number    int // in the input; synthetic lines carry the number of the line they came from
	indent    int
	synthetic bool // made by prepare (old-style VRF routes), not in the input
}

// prepare trims and normalises the lines of one side, and refuses what Parse could read differently than
// frr-reload.py.
func prepare(text []byte, side Side, d Dialect) ([]line, error) {
	// The lines are substrings of one copy of text, not each a copy of its own.
	rest := string(text)
	out := make([]line, 0, strings.Count(rest, "\n")+1)
	for n := 1; rest != ""; n++ {
		var raw string
		raw, rest, _ = strings.Cut(rest, "\n")
		l := strings.TrimSpace(raw)
		if l == "" || l[0] == '!' || l[0] == '#' {
			continue // comments: vtysh -m passes them, frr-reload.py skips them
		}
		if strings.ContainsAny(raw, "\t\v\f\r") {
			return nil, undecidable(n, "a tab or other whitespace than spaces")
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " "))
		if side == Running {
			if l == "Building configuration..." || l == "Current configuration:" {
				continue
			}
			out = append(out, line{text: l, number: n, indent: indent})
			continue
		}
		if strings.Contains(l, "  ") || !isASCII(l) {
			l = strings.Join(strings.Fields(l), " ")
		}
		if d == FRR10 {
			l = normalize10(l)
		}
		if strings.Contains(l, ":") {
			var err error
			if l, err = normalizeMACIP(l); err != nil {
				return nil, undecidable(n, "%v", err)
			}
		}
		if (strings.HasPrefix(l, "ip route ") || strings.HasPrefix(l, "ipv6 route ")) && strings.Contains(l, " vrf ") {
			// frr-reload.py writes "ip route P NH vrf V" as the block "vrf V / ip route P NH / exit-vrf".
			f := strings.Split(l, " ")
			vi := indexOf(f, "vrf")
			if vi+1 >= len(f) {
				return nil, undecidable(n, "%q names no VRF after \"vrf\"", l)
			}
			route := strings.Join(append(append([]string(nil), f[:vi]...), f[vi+2:]...), " ")
			out = append(out,
				line{text: "vrf " + f[vi+1], number: n, synthetic: true},
				line{text: route, number: n, indent: 1, synthetic: true},
				line{text: "exit-vrf", number: n, synthetic: true},
				line{text: "end", number: n, synthetic: true})
			continue
		}
		if l == "end" {
			continue // vtysh -m drops "end" lines of a file and writes its own
		}
		out = append(out, line{text: l, number: n, indent: indent})
	}
	return out, nil
}

// isASCII reports whether s has only ASCII bytes: then (trimmed, without tabs and the like, without "  ") its
// words are already separated by single spaces, as strings.Fields and Join would make them.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

var esiRe = regexp.MustCompile(`^(evpn mh es-id|evpn mh es-sys-mac) (\S*)`)

// normalizeMACIP is get_normalized_mac_ip_line: ES ids lower case, IPv6 words of other lines canonical.
func normalizeMACIP(l string) (string, error) {
	if strings.HasPrefix(l, "evpn mh es") {
		if m := esiRe.FindStringSubmatch(l); m != nil {
			return m[1] + " " + strings.ToLower(m[2]), nil
		}
		return l, nil
	}
	if strings.Contains(l, "ipv6 add") {
		return l, nil
	}
	words := strings.Split(l, " ")
	for i, w := range words {
		if !strings.Contains(w, ":") {
			continue
		}
		nw, err := normalizeIPv6Word(w)
		if err != nil {
			return "", err
		}
		words[i] = nw
	}
	return strings.Join(words, " "), nil
}

// normalizeIPv6Word is one word of get_normalized_ipv6_line: a prefix in network form, an address compressed,
// anything else as it is. Words whose reading by Python's ipaddress could differ from netip's are an error.
func normalizeIPv6Word(w string) (string, error) {
	if strings.Contains(w, "%") {
		return "", fmt.Errorf("IPv6 word %q with a zone", w)
	}
	if strings.Contains(w, "/") {
		if p, err := netip.ParsePrefix(w); err == nil && p.Addr().Is6() {
			if p.Addr().Is4In6() {
				return "", fmt.Errorf("IPv4-mapped IPv6 prefix %q", w)
			}
			return p.Masked().String(), nil
		}
		if prefixLikeRe.MatchString(w) {
			return "", fmt.Errorf("prefix %q that Python may read differently", w)
		}
		return w, nil // Python: not a network, and with '/' not an address either
	}
	a, err := netip.ParseAddr(w)
	if err != nil || !a.Is6() {
		return w, nil
	}
	if a.Is4In6() {
		return "", fmt.Errorf("IPv4-mapped IPv6 address %q", w)
	}
	return a.String(), nil
}

var (
	interfaceVRFRe = regexp.MustCompile(`interface (\S+) vrf (\S+)`)
	multihop255Re  = regexp.MustCompile(`(.*)ebgp-multihop\s+255`)
)

// normalize10 is FRR 10's load_from_file treatment of a file's line that FRR 8's lacks: "interface X vrf Y"
// without "vrf Y" (FRR shows the interface's VRF inside the block) and "ebgp-multihop 255" as "ebgp-multihop"
// (its default hop count, which FRR does not show).
func normalize10(l string) string {
	if strings.HasPrefix(l, "interface ") && strings.Contains(l, "vrf") {
		if m := interfaceVRFRe.FindStringSubmatch(l); m != nil {
			l = strings.TrimSpace(strings.Replace(l, "vrf "+m[2], "", 1))
		}
	}
	if strings.Contains(l, "ebgp-multihop") {
		if m := multihop255Re.FindStringSubmatch(l); m != nil {
			l = m[1] + "ebgp-multihop"
		}
	}
	return l
}
