package frr

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/network-operator/network-operator/pkg/bounds"
)

// Brownfield is what RenderBrownfield renders into besides the desired state: a host's own FRR config in the
// das-schiff style and the agent's settings for it.
type Brownfield struct {
	// Base is the host's own frr.conf with hint comment lines ("#++{{.VRFs}}", ...).
	Base []byte
	// ManagementVRFs are das-schiff's skipVRFConfig: VRFs the base provisions itself (VRF, L3VNI, BGP
	// instance). Of such a VRF of the desired state only its route configs are rendered, as entries of the
	// base's own route-maps rm_<vrf>_export / rm6_<vrf>_export (routes of the cluster VRF into it) and
	// rm_<vrf>_import / rm6_<vrf>_import - das-schiff's management-VRF hook. A name matches a VRF with or
	// without the "vr." device prefix.
	ManagementVRFs []string
}

// dasSchiffVRFPrefix is the prefix das-schiff puts before a VRF's name for its FRR VRF ("vr.<name>"); its
// route-maps are named after the name without it ("rm_<name>_export").
const dasSchiffVRFPrefix = "vr."

// RenderBrownfield inserts the rendered sections into b.Base at its hint comments ("#++{{.VRFs}}",
// "#++{{.Neighbors}}", "#++{{.NeighborsV4}}", "#++{{.NeighborsV6}}", "#++{{.L2VNIs}}", "#++{{.BGP}}",
// "#++{{.PrefixLists}}", "#++{{.RouteMaps}}"). Every other byte of the base is kept, except that "router bgp
// <ASN> vrf default" (which das-schiff asked for) is written "router bgp <ASN>", the form FRR shows, so reloads
// do not delete and re-create the default instance. The base owns the underlay, so cfg.Underlay only gives ASN
// and router-id.
//
// A missing hint renders nothing; the config is refused only when that would lose content (the error names the
// hint and what). A route-map the base refers to by das-schiff's name (rm_<vrf>_import, rm6_<vrf>_export, ...
// for VRF vr.<vrf>) takes that name. A value that clashes with the base (a VRF or VNI it already has, a
// route-map, prefix-list or neighbour name it already uses) is refused naming the base's line. All such
// refusals match ErrBaseConfig.
func RenderBrownfield(b Brownfield, cfg *NodeConfig) ([]byte, error) {
	if err := cfg.validate(true); err != nil {
		return nil, fmt.Errorf("render brownfield frr.conf: %w", err)
	}
	base := parseBase(string(b.Base))
	tenants, mgmt, err := splitManagement(cfg, b.ManagementVRFs)
	if err != nil {
		return nil, err
	}
	v := buildView(tenants)
	v.Cluster.V4.ImplicitActivate = base.defaultIPv4Unicast
	hooks := map[string]bool{}
	for i := range mgmt {
		for _, fam := range [2]int{4, 6} {
			v.leaking(fam, &mgmt[i], &afView{})
			for _, dir := range []string{"import", "export"} {
				hooks[rmName(fam, mgmt[i].Name, dir)] = true
			}
		}
	}
	v.renameRouteMaps(dasSchiffNames(tenants.VRFs, base, hooks))
	errs := base.conflicts(v, tenants)
	errs = append(errs, base.checkRouteMaps(v, hooks)...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBaseConfig, strings.Join(errs, "; "))
	}
	slices.SortFunc(v.PrefixLists, func(a, b prefixListView) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(v.RouteMaps, func(a, b routeMapView) int { return strings.Compare(a.Name, b.Name) })
	sections, err := renderSections(v)
	if err != nil {
		return nil, err
	}
	return insertSections(normalizeDefaultVRF(string(b.Base)), sections, v.lostWithout(sections))
}

var defaultVRFRe = regexp.MustCompile(`(?m)^([ \t]*router bgp [0-9.]+) vrf default([ \t]*\r?)$`)

// normalizeDefaultVRF writes "router bgp <ASN> vrf default" as FRR shows it: "router bgp <ASN>". Otherwise
// frr-reload.py sees a different context on every reload and deletes and re-creates the default instance.
func normalizeDefaultVRF(base string) string {
	return defaultVRFRe.ReplaceAllString(base, "$1$2")
}

// splitManagement returns cfg without its management VRFs, and those VRFs named as das-schiff names them
// (without "vr."). The base owns a management VRF's BGP instance: a peering or aggregate in one is refused.
func splitManagement(cfg *NodeConfig, names []string) (*NodeConfig, []VRF, error) {
	if len(names) == 0 {
		return cfg, nil, nil
	}
	isMgmt := func(name string) bool {
		return name != "" && (slices.Contains(names, name) || slices.Contains(names, strings.TrimPrefix(name, dasSchiffVRFPrefix)))
	}
	out := *cfg
	out.VRFs, out.Peerings = nil, nil
	var mgmt []VRF
	var errs []string
	for _, vrf := range cfg.VRFs {
		if !isMgmt(vrf.Name) {
			out.VRFs = append(out.VRFs, vrf)
			continue
		}
		if len(vrf.Aggregates) > 0 {
			errs = append(errs, fmt.Sprintf("management VRF %s: its aggregates would be lost (the base owns its BGP instance)", vrf.Name))
		}
		m := vrf
		m.Name = strings.TrimPrefix(vrf.Name, dasSchiffVRFPrefix)
		mgmt = append(mgmt, m)
	}
	for _, p := range cfg.Peerings {
		if isMgmt(p.VRF) {
			errs = append(errs, fmt.Sprintf("peering %s: VRF %s is a management VRF, the base owns its BGP instance", p.Name, p.VRF))
			continue
		}
		out.Peerings = append(out.Peerings, p)
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("%w: %s", ErrBaseConfig, strings.Join(errs, "; "))
	}
	return &out, mgmt, nil
}

// dasSchiffNames maps the route-map names of the tenant VRFs to das-schiff's (rm_<vrf>_export for VRF
// vr.<vrf>) where the base refers to das-schiff's name; those maps become hooks: the base may hold entries of
// them.
func dasSchiffNames(vrfs []VRF, base *baseConfig, hooks map[string]bool) map[string]string {
	rename := map[string]string{}
	for _, vrf := range vrfs {
		short := strings.TrimPrefix(vrf.Name, dasSchiffVRFPrefix)
		for _, fam := range [2]int{4, 6} {
			for _, dir := range []string{"import", "export"} {
				ours, theirs := rmName(fam, vrf.Name, dir), rmName(fam, short, dir)
				if base.tokens[theirs] == 0 {
					continue
				}
				if ours != theirs {
					rename[ours] = theirs
				}
				hooks[theirs] = true
			}
		}
	}
	return rename
}

// renameRouteMaps renames route-maps and every reference to them.
func (v *view) renameRouteMaps(rename map[string]string) {
	if len(rename) == 0 {
		return
	}
	to := func(s *string) {
		if n, ok := rename[*s]; ok {
			*s = n
		}
	}
	for i := range v.RouteMaps {
		to(&v.RouteMaps[i].Name)
		for j := range v.RouteMaps[i].Entries {
			to(&v.RouteMaps[i].Entries[j].Call)
		}
	}
	to(&v.Cluster.V4.ImportRouteMap)
	to(&v.Cluster.V6.ImportRouteMap)
	for i := range v.VRFs {
		for j := range v.VRFs[i].AFs {
			to(&v.VRFs[i].AFs[j].ImportRouteMap)
		}
	}
}

// checkRouteMaps refuses a route-map the base already defines unless it is a hook, and a hook's entry at a
// sequence the base already has. A hook's default deny the base already has is not rendered again. A hook
// with entries the base never refers to would be lost.
func (b *baseConfig) checkRouteMaps(v *view, hooks map[string]bool) []string {
	var errs []string
	var keep []routeMapView
	for _, rm := range v.RouteMaps {
		have, defined := b.routeMaps[rm.Name]
		switch {
		case hooks[rm.Name] && b.tokens[rm.Name] == 0:
			var seqs []string
			for _, e := range rm.Entries {
				if e.Seq != bounds.DefaultDenyRouteMapSeq {
					seqs = append(seqs, strconv.Itoa(int(e.Seq)))
				}
			}
			errs = append(errs, fmt.Sprintf("route-map %s (das-schiff's management-VRF hook) is not in the base: its entries %s would "+
				"be lost (add e.g. \"route-map %s deny %d\" and call it)", rm.Name, strings.Join(seqs, ", "), rm.Name, bounds.DefaultDenyRouteMapSeq))
			continue
		case !defined:
			keep = append(keep, rm)
			continue
		case !hooks[rm.Name]:
			errs = append(errs, fmt.Sprintf("route-map %s: the base already defines it (%s)", rm.Name, b.at(firstLine(have))))
			continue
		}
		var entries []routeMapEntryView
		for _, e := range rm.Entries {
			be, ok := have[e.Seq]
			switch {
			case !ok:
				entries = append(entries, e)
			case e.Seq == bounds.DefaultDenyRouteMapSeq && be.action == string(e.Action):
				// the base's own default deny, as das-schiff's README asks for
			default:
				errs = append(errs, fmt.Sprintf("route-map %s %s %d: the base already has this entry (%s)", rm.Name, e.Action, e.Seq, b.at(be.line)))
			}
		}
		rm.Entries = entries
		if len(entries) > 0 {
			keep = append(keep, rm)
		}
	}
	v.RouteMaps = keep
	return errs
}

// conflicts lists what the desired state would add that the base already has.
func (b *baseConfig) conflicts(v *view, cfg *NodeConfig) []string {
	var errs []string
	vniUse := func(what string, vni uint32) {
		if l, ok := b.l3vnis[vni]; ok {
			errs = append(errs, fmt.Sprintf("%s: VNI %d is already the L3VNI of VRF %s in the base (%s)", what, vni, l.vrf, b.at(l.line)))
		}
		if n, ok := b.l2vnis[vni]; ok {
			errs = append(errs, fmt.Sprintf("%s: VNI %d is already an L2VNI of the base (%s)", what, vni, b.at(n)))
		}
	}
	for _, l2 := range cfg.L2VNIs {
		vniUse(fmt.Sprintf("L2VNI %d", l2.VNI), l2.VNI)
	}
	for _, vrf := range cfg.VRFs {
		if n, ok := b.vrfs[vrf.Name]; ok {
			errs = append(errs, fmt.Sprintf("VRF %s: the base already defines it (%s)", vrf.Name, b.at(n)))
		}
		vniUse("VRF "+vrf.Name, vrf.VNI)
	}
	for _, rt := range cfg.RoutingTables {
		if n, ok := b.vrfs[rt.Name]; ok {
			errs = append(errs, fmt.Sprintf("routing table %s: the base already defines its VRF (%s)", rt.Name, b.at(n)))
		}
	}
	for _, p := range v.Cluster.Peerings {
		for _, name := range append([]string{p.Name}, p.Neighbors...) {
			if n, ok := b.neighbors[name]; ok {
				errs = append(errs, fmt.Sprintf("peering %s: neighbor %s is already in the base's default BGP instance (%s)", p.Name, name, b.at(n)))
			}
		}
	}
	for _, pl := range v.PrefixLists {
		if n, ok := b.prefixLists[pl.Family+" "+pl.Name]; ok {
			errs = append(errs, fmt.Sprintf("%s prefix-list %s: the base already defines it (%s)", pl.Family, pl.Name, b.at(n)))
		}
	}
	return errs
}

// lostWithout says, per section with content, what a missing hint would lose and where the hint goes. An
// L2VNI without RD and route targets loses nothing: advertise-all-vni (the base's) derives them.
func (v *view) lostWithout(sections map[string]string) map[string]string {
	lost := map[string]string{}
	names := func(kind string, list []string) string {
		if len(list) == 0 {
			return ""
		}
		return kind + " " + strings.Join(list, ", ")
	}
	var vrfs, tables, cluster, rms, pls []string
	for _, vrf := range v.VRFs {
		vrfs = append(vrfs, vrf.Name)
	}
	for _, t := range v.Tables {
		tables = append(tables, t.Name)
	}
	for _, p := range v.Cluster.Peerings {
		cluster = append(cluster, p.Name)
	}
	for _, rm := range v.RouteMaps {
		rms = append(rms, rm.Name)
	}
	for _, pl := range v.PrefixLists {
		pls = append(pls, pl.Name)
	}
	af := func(a afView) string {
		var what []string
		for _, p := range a.Peerings {
			what = append(what, p.Name)
		}
		what = append(what, a.ImportVRFs...)
		if a.ImportRouteMap != "" {
			what = append(what, "import vrf route-map "+a.ImportRouteMap)
		}
		return "the default BGP instance's " + a.Family + " unicast lines of " + strings.Join(what, ", ") +
			" would be lost (the hint goes inside its address-family " + a.Family + " unicast)"
	}
	var l2 []string
	for _, l := range v.L2VNIs {
		if l.RD != "" || len(l.ImportRTs)+len(l.ExportRTs) > 0 {
			l2 = append(l2, strconv.FormatUint(uint64(l.VNI), 10))
		}
	}
	for name, text := range sections {
		if text == "" {
			continue
		}
		switch name {
		case SectionVRFs:
			lost[name] = "the L3VNI of " + names("VRF", vrfs) + " would be lost (the hint goes at the top level, before the router bgp blocks)"
		case SectionNeighbors:
			lost[name] = "the cluster VRF's " + names("peer group", cluster) + " would be lost (the hint goes inside the default router bgp)"
		case SectionNeighborsV4:
			lost[name] = af(v.Cluster.V4)
		case SectionNeighborsV6:
			lost[name] = af(v.Cluster.V6)
		case SectionL2VNIs:
			if len(l2) > 0 {
				lost[name] = "the RD and route targets of " + names("L2VNI", l2) + " would be lost (the hint goes inside address-family l2vpn evpn of the default router bgp)"
			}
		case SectionBGP:
			what := names("VRF", vrfs)
			if len(tables) > 0 {
				what = strings.TrimPrefix(what+", "+names("routing table", tables), ", ")
			}
			lost[name] = "the BGP instance of " + what + " would be lost (the hint goes at the top level, after the router bgp blocks)"
		case SectionPrefixLists:
			lost[name] = names("prefix-list", pls) + " would be lost (the hint goes at the top level)"
		case SectionRouteMaps:
			lost[name] = names("route-map", rms) + " would be lost (the hint goes at the top level)"
		}
	}
	return lost
}

// baseConfig is what the brownfield renderer needs to know of a base config, each with its first line.
type baseConfig struct {
	lines       []string
	vrfs        map[string]int   // "vrf X" and "router bgp N vrf X"
	l3vnis      map[uint32]l3vni // "vni N" of a vrf block; at the top level the default VRF's
	l2vnis      map[uint32]int   // "vni N" in address-family l2vpn evpn of the default instance
	neighbors   map[string]int   // "neighbor X ..." of the default instance
	routeMaps   map[string]map[uint32]rmEntry
	prefixLists map[string]int // "ip NAME" / "ipv6 NAME"
	tokens      map[string]int // every word of a command line
	// defaultIPv4Unicast: the default instance lacks "no bgp default ipv4-unicast".
	defaultIPv4Unicast bool
}

type l3vni struct {
	line int
	vrf  string
}

type rmEntry struct {
	line   int
	action string
}

// at names a base line for an error: "line N: text".
func (b *baseConfig) at(n int) string {
	return fmt.Sprintf("base line %d: %s", n, strings.TrimSpace(Redact(b.lines[n-1])))
}

func firstLine(entries map[uint32]rmEntry) int {
	first := 0
	for _, e := range entries {
		if first == 0 || e.line < first {
			first = e.line
		}
	}
	return first
}

// topLevel are first words of commands that are only valid at the top level (with the second word, when
// set): at column 0 they end any block, whatever the base's indentation and exit lines say.
var topLevel = map[string][]string{
	"route-map": nil, "interface": nil, "line": nil, "bfd": nil, "frr": nil, "hostname": nil, "log": nil,
	"service": nil, "debug": nil, "agentx": nil, "access-list": nil, "end": nil, "password": nil,
	"ip":   {"prefix-list", "route", "protocol", "forwarding", "nht", "import-table", "as-path", "community-list"},
	"ipv6": {"prefix-list", "route", "protocol", "forwarding", "nht"},
	"bgp":  {"community-list", "extcommunity-list", "large-community-list", "as-path"},
}

// parseBase reads a base config's VRFs, VNIs, default-instance neighbours, route-map entries, prefix-lists and
// words. Hint lines and comments are skipped.
func parseBase(text string) *baseConfig {
	b := newBaseConfig(text)
	const (
		ctxTop = iota
		ctxVRF
		ctxBGP
		ctxOther
	)
	ctx, vrf, af, defaultBGP := ctxTop, "", "", false
	for i, line := range b.lines {
		n := i + 1
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "!") || strings.HasPrefix(f[0], "#") {
			continue
		}
		for _, w := range f {
			recordFirst(b.tokens, w, n)
		}
		if startsTopLevel(line, f) {
			ctx = ctxTop
		}
		switch {
		case f[0] == "vrf" && len(f) == 2 && ctx != ctxBGP:
			ctx, vrf = ctxVRF, f[1]
			recordFirst(b.vrfs, vrf, n)
		case f[0] == "exit-vrf":
			ctx = ctxTop
		case f[0] == "router" && len(f) >= 3 && f[1] == "bgp":
			ctx, af = ctxBGP, ""
			defaultBGP = len(f) < 5 || f[4] == "default"
			if defaultBGP {
				b.defaultIPv4Unicast = true
			}
			if !defaultBGP && f[3] == "vrf" {
				recordFirst(b.vrfs, f[4], n)
			}
		case f[0] == "router" || f[0] == "interface" || f[0] == "line" || f[0] == "bfd":
			ctx = ctxOther
		case f[0] == "route-map" && len(f) >= 3:
			ctx = ctxOther
			b.addRouteMapEntry(f, n)
		case (f[0] == "ip" || f[0] == "ipv6") && len(f) >= 3 && f[1] == "prefix-list":
			recordFirst(b.prefixLists, f[0]+" "+f[2], n)
		case f[0] == "vni" && len(f) == 2:
			vni, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				continue
			}
			switch {
			case ctx == ctxTop:
				b.l3vnis[uint32(vni)] = l3vni{n, "default"}
			case ctx == ctxVRF:
				b.l3vnis[uint32(vni)] = l3vni{n, vrf}
			case ctx == ctxBGP && defaultBGP && af == "l2vpn evpn":
				b.l2vnis[uint32(vni)] = n
			}
		case ctx == ctxBGP && f[0] == "address-family" && len(f) >= 3:
			af = f[1] + " " + f[2]
		case ctx == ctxBGP && f[0] == "exit-address-family":
			af = ""
		case ctx == ctxBGP && defaultBGP && strings.Join(f, " ") == "no bgp default ipv4-unicast":
			b.defaultIPv4Unicast = false
		case ctx == ctxBGP && f[0] == "neighbor" && len(f) >= 3 && defaultBGP:
			recordFirst(b.neighbors, f[1], n)
		case f[0] == "exit" && ctx == ctxBGP && af != "":
			af = "" // "exit" leaves an address-family like exit-address-family
		case f[0] == "exit":
			ctx = ctxTop
		}
	}
	return b
}

// newBaseConfig returns a baseConfig holding text's lines, with every index empty.
func newBaseConfig(text string) *baseConfig {
	return &baseConfig{
		lines: strings.Split(text, "\n"), vrfs: map[string]int{}, l3vnis: map[uint32]l3vni{}, l2vnis: map[uint32]int{},
		neighbors: map[string]int{}, routeMaps: map[string]map[uint32]rmEntry{}, prefixLists: map[string]int{},
		tokens: map[string]int{},
	}
}

// recordFirst records line n for key k unless an earlier line already has it: the indexes keep first occurrences.
func recordFirst(m map[string]int, k string, n int) {
	if _, ok := m[k]; !ok {
		m[k] = n
	}
}

// startsTopLevel reports whether line (its words f) is a top-level-only command at column 0, which ends any block.
func startsTopLevel(line string, f []string) bool {
	if line[0] == ' ' || line[0] == '\t' {
		return false
	}
	second, ok := topLevel[f[0]]
	return ok && (second == nil || len(f) > 1 && slices.Contains(second, f[1]))
}

// addRouteMapEntry records the route-map entry "route-map NAME ACTION [SEQ]" (words f) of line n, unless an
// earlier line has the same name and sequence; a missing sequence counts as 0.
func (b *baseConfig) addRouteMapEntry(f []string, n int) {
	if b.routeMaps[f[1]] == nil {
		b.routeMaps[f[1]] = map[uint32]rmEntry{}
	}
	seq := uint64(0)
	if len(f) >= 4 {
		seq, _ = strconv.ParseUint(f[3], 10, 32)
	}
	if _, ok := b.routeMaps[f[1]][uint32(seq)]; !ok {
		b.routeMaps[f[1]][uint32(seq)] = rmEntry{line: n, action: f[2]}
	}
}
