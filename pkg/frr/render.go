package frr

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/network-operator/network-operator/pkg/bgp"
	"github.com/network-operator/network-operator/pkg/bounds"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// templates are parsed once; they are immutable after init, so sharing them
// is not mutable package state.
var templates = template.Must(template.New("frr").
	Funcs(template.FuncMap{"hint": hintLine}).
	Option("missingkey=error").
	ParseFS(templateFS, "templates/*.tmpl"))

// Section names, as used in the brownfield hint comments "#++{{.Name}}".
const (
	SectionVRFs        = "VRFs"
	SectionNeighbors   = "Neighbors"
	SectionNeighborsV4 = "NeighborsV4"
	SectionNeighborsV6 = "NeighborsV6"
	SectionL2VNIs      = "L2VNIs"
	SectionBGP         = "BGP"
	SectionPrefixLists = "PrefixLists"
	SectionRouteMaps   = "RouteMaps"
	// SectionBFD holds bfdd's profiles; a base without its hint gets them at its end (a top-level block, whose
	// place in the file does not matter), so a das-schiff base needs no new hint for BFD.
	SectionBFD = "BFD"
)

// sectionOrder fixes rendering order; each section has its own template.
var sectionOrder = [...]struct{ name, tmpl string }{
	{SectionVRFs, "vrfs"},
	{SectionNeighbors, "cluster-neighbors"},
	{SectionNeighborsV4, "cluster-af4"},
	{SectionNeighborsV6, "cluster-af6"},
	{SectionL2VNIs, "l2vnis"},
	{SectionBGP, "bgp-vrfs"},
	{SectionPrefixLists, "prefix-lists"},
	{SectionRouteMaps, "route-maps"},
	{SectionBFD, "bfd-profiles"},
}

// appendedWithoutHint are the sections written at the end of a base that has no hint for them.
func appendedWithoutHint(name string) bool { return name == SectionBFD }

func hintLine(name string) string { return "#++{{." + name + "}}" }

// ErrBaseConfig marks a brownfield base configuration that does not fit the
// desired state: an unknown or repeated hint, a missing one whose content
// would be lost, or a value the base already has.
var ErrBaseConfig = errors.New("brownfield base config")

// Render returns the complete frr.conf for cfg. The same cfg always gives the
// same bytes.
func Render(cfg *NodeConfig) ([]byte, error) {
	if err := cfg.validate(false); err != nil {
		return nil, fmt.Errorf("render frr.conf: %w", err)
	}
	v := buildView(cfg)
	var base bytes.Buffer
	if err := templates.ExecuteTemplate(&base, "underlay", v); err != nil {
		return nil, fmt.Errorf("render underlay: %w", err)
	}
	sections, err := renderSections(v)
	if err != nil {
		return nil, err
	}
	return insertSections(normalize(base.Bytes()), sections, v.lostWithout(sections))
}

func renderSections(v *view) (map[string]string, error) {
	out := make(map[string]string, len(sectionOrder))
	for _, s := range sectionOrder {
		var b bytes.Buffer
		if err := templates.ExecuteTemplate(&b, s.tmpl, v); err != nil {
			return nil, fmt.Errorf("render section %s: %w", s.name, err)
		}
		out[s.name] = normalize(b.Bytes())
	}
	return out, nil
}

// normalize drops the blank lines template actions leave and ends a
// non-empty text with one newline. (Sized up front: the sections of 1000
// VRFs are a megabyte.)
func normalize(text []byte) string {
	var b strings.Builder
	b.Grow(len(text) + 1)
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

var hintRe = regexp.MustCompile(`^[ \t]*#\+\+\{\{\.([A-Za-z0-9_]+)\}\}[ \t]*\r?$`)

// insertSections replaces each hint line of base with its section. A section whose hint is missing is not
// rendered; lost says, per section, what that would lose ("" or absent: nothing), which refuses the config.
func insertSections(base string, sections, lost map[string]string) ([]byte, error) {
	size := len(base)
	for _, text := range sections {
		size += len(text)
	}
	out := bytes.NewBuffer(make([]byte, 0, size)) // the whole config: no growing, no copy at the end
	used := map[string]int{}
	lineNo := 0
	for rest := base; rest != ""; {
		line, tail, found := strings.Cut(rest, "\n")
		rest = tail
		lineNo++
		m := hintRe.FindStringSubmatch(line)
		if m == nil {
			out.WriteString(line)
			if found {
				out.WriteByte('\n')
			}
			continue
		}
		name := m[1]
		text, known := sections[name]
		switch {
		case !known:
			return nil, fmt.Errorf("%w: line %d: unknown hint %q", ErrBaseConfig, lineNo, strings.TrimSpace(line))
		case used[name] != 0:
			return nil, fmt.Errorf("%w: line %d: hint %s repeats line %d", ErrBaseConfig, lineNo, hintLine(name), used[name])
		}
		used[name] = lineNo
		out.WriteString(text)
	}
	var missing []string
	for _, s := range sectionOrder {
		if used[s.name] == 0 && appendedWithoutHint(s.name) {
			out.WriteString(sections[s.name])
			continue
		}
		if lost[s.name] != "" && used[s.name] == 0 {
			missing = append(missing, "missing hint "+hintLine(s.name)+": "+lost[s.name])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBaseConfig, strings.Join(missing, "; "))
	}
	return out.Bytes(), nil
}

// view is NodeConfig resolved for the templates: names derived, sequences
// assigned, everything sorted so rendering is deterministic.
type view struct {
	frr     Version // the release rendered for
	Globals []string
	// GracefulRestart holds the lines of every BGP instance (the node is a graceful-restart speaker).
	GracefulRestart []string
	// CoalesceTime is the underlay instance's coalesce-time in milliseconds (underlayCoalesceTime).
	CoalesceTime int64
	ASN          uint32
	RouterID     string
	// VTEP4 and VTEP6 are the VTEP's "network" prefix in its family ("" in the other).
	VTEP4, VTEP6 string
	PeerGroups   []peerGroupView
	Neighbors    []neighborView
	// Activate4, Activate6 and ActivateEVPN list the underlay peer groups and group-less neighbours activated in
	// ipv4 unicast, ipv6 unicast and l2vpn evpn.
	Activate4, Activate6, ActivateEVPN []string
	// HasIPv4 and HasIPv6 render the default instance's "address-family ipv4|ipv6 unicast": the underlay carries
	// the family, or the cluster VRF has something in it.
	HasIPv4, HasIPv6 bool
	L2VNIs           []l2vniView
	VRFs             []vrfView
	Tables           []tableView
	Cluster          instanceView
	PrefixLists      []prefixListView
	RouteMaps        []routeMapView
	// BFDProfiles are the profiles the sessions name, sorted by name.
	BFDProfiles []bfdProfileView
}

type sessionView struct {
	Who          string
	Password     string
	Multihop     uint8
	UpdateSource string
	Timers       string
	BFD          bool
	// BFDProfile names the session's bfdd profile; "" for bfdd's defaults.
	BFDProfile string
	// ExtendedNextHop: an underlay session's "capability extended-nexthop" (RFC 8950).
	ExtendedNextHop bool
}

// bfdProfileView is one bfdd profile: its name and lines.
type bfdProfileView struct {
	Name  string
	Lines []string
}

type peerGroupView struct {
	Name         string
	RemoteAS     string
	ListenRanges []string
	Session      sessionView
}

type neighborView struct {
	Key string
	// Interface: an unnumbered neighbour ("neighbor eth0 interface ..."); OnInterface: the interface of a
	// link-local one ("neighbor fe80::1 interface eth0").
	Interface   bool
	OnInterface string
	PeerGroup   string
	RemoteAS    string
	Session     sessionView
}

type l2vniView struct {
	VNI       uint32
	RD        string
	ImportRTs []string
	ExportRTs []string
}

type peeringView struct {
	Name            string
	RemoteASN       uint32
	ListenRanges    []string
	Neighbors       []string
	MaximumPrefixes uint32
	PrefixListIn    string
	PrefixListOut   string
	Session         sessionView
}

// afView is one "address-family ipv4|ipv6 unicast" of a BGP instance.
type afView struct {
	Family         string
	Redistribute   []string
	Aggregates     []string
	Peerings       []peeringView
	ImportRouteMap string
	ImportVRFs     []string
	// ImplicitActivate leaves out "neighbor X activate": a brownfield base's default instance without "no bgp
	// default ipv4-unicast" activates ipv4 unicast itself, and FRR never shows the line.
	ImplicitActivate bool
}

func (a afView) empty() bool {
	return len(a.Redistribute)+len(a.Aggregates)+len(a.Peerings)+len(a.ImportVRFs) == 0 && a.ImportRouteMap == ""
}

type instanceView struct {
	Peerings []peeringView
	V4, V6   afView
}

type vrfView struct {
	Name      string
	VNI       uint32
	RD        string
	ImportRTs []string
	ExportRTs []string
	Peerings  []peeringView
	AFs       []afView
}

// tableView is a routing table's BGP instance: no L3VNI, its kernel routes redistributed.
type tableView struct {
	Name string
	AFs  []afView
}

type prefixListView struct {
	Family  string // "ip" or "ipv6"
	Name    string
	Entries []prefixEntryView
}

type prefixEntryView struct {
	Seq    uint32
	Action Action
	Prefix string
	GE, LE uint8
}

type routeMapView struct {
	Name    string
	Entries []routeMapEntryView
}

type routeMapEntryView struct {
	Action            Action
	Seq               uint32
	MatchFamily       string // "ip" or "ipv6"
	MatchPrefixList   string
	MatchSourceVRF    string
	Call              string
	SetCommunity      string
	SetLargeCommunity string
	Additive          bool
}

func buildView(cfg *NodeConfig) *view {
	u := &cfg.Underlay
	v := &view{frr: cfg.FRR.OrShipped(), ASN: u.ASN, RouterID: u.RouterID.String(), GracefulRestart: gracefulRestartLines(u.GracefulRestart),
		CoalesceTime: underlayCoalesceTime.Milliseconds()}
	v.Cluster.V4.Family, v.Cluster.V6.Family = "ipv4", "ipv6"
	v.underlay(cfg)
	for _, l2 := range sortedBy(cfg.L2VNIs, func(a, b L2VNI) int { return cmpU32(a.VNI, b.VNI) }) {
		if l2.Isolated {
			rt := []string{IsolatedRouteTarget(u.RouterID)}
			v.L2VNIs = append(v.L2VNIs, l2vniView{VNI: l2.VNI, ImportRTs: rt, ExportRTs: rt})
			continue
		}
		auto := autoRT(u.ASN, l2.VNI)
		v.L2VNIs = append(v.L2VNIs, l2vniView{
			VNI: l2.VNI, RD: l2.RD,
			ImportRTs: explicitRTs(merge(l2.RouteTargets, l2.ImportRouteTargets), auto),
			ExportRTs: explicitRTs(merge(l2.RouteTargets, l2.ExportRouteTargets), auto),
		})
	}

	peerings := sortedBy(cfg.Peerings, func(a, b Peering) int { return strings.Compare(a.Name, b.Name) })
	// One import route-map per address family of the cluster VRF: its entry for a VRF calls the VRF's own map.
	clusterImport := [2]routeMapView{{Name: "rm_cluster_import"}, {Name: "rm6_cluster_import"}}
	for i, vrf := range sortedBy(cfg.VRFs, func(a, b VRF) int { return strings.Compare(a.Name, b.Name) }) {
		v.VRFs = append(v.VRFs, v.vrf(uint32(i+1), &vrf, peerings, &clusterImport))
	}
	// The routing tables' entries follow the tenant VRFs', in table order.
	for i, rt := range sortedBy(cfg.RoutingTables, func(a, b RoutingTable) int { return cmpU32(a.TableID, b.TableID) }) {
		v.Tables = append(v.Tables, v.routingTable(uint32(len(cfg.VRFs)+i+1), &rt, &clusterImport))
	}
	for fi, rm := range clusterImport {
		if len(rm.Entries) == 0 {
			continue
		}
		rm.Entries = append(rm.Entries, routeMapEntryView{Action: Deny, Seq: bounds.DefaultDenyRouteMapSeq})
		v.RouteMaps = append(v.RouteMaps, rm)
		clusterAF(&v.Cluster, []int{4, 6}[fi]).ImportRouteMap = rm.Name
	}
	for _, p := range peerings {
		if p.VRF != "" && p.VRF != "default" {
			continue
		}
		pv, fam := v.peering(&p)
		v.Cluster.Peerings = append(v.Cluster.Peerings, pv)
		af := clusterAF(&v.Cluster, fam)
		af.Peerings = append(af.Peerings, pv)
	}
	fams := underlayFamilies(&cfg.Underlay)
	v.HasIPv4 = slices.Contains(fams, FamilyIPv4) || !v.Cluster.V4.empty()
	v.HasIPv6 = slices.Contains(fams, FamilyIPv6) || !v.Cluster.V6.empty()
	slices.SortFunc(v.PrefixLists, func(a, b prefixListView) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(v.RouteMaps, func(a, b routeMapView) int { return strings.Compare(a.Name, b.Name) })
	return v
}

// underlay resolves the global lines, the VTEP network and the underlay's peer groups and neighbours.
func (v *view) underlay(cfg *NodeConfig) {
	u := &cfg.Underlay
	if cfg.DisableIPForwarding {
		v.Globals = append(v.Globals, "no ip forwarding")
	}
	if cfg.DisableIPv6Forwarding {
		v.Globals = append(v.Globals, "no ipv6 forwarding")
	}
	if a := u.VTEPSource; a.IsValid() {
		if p := netip.PrefixFrom(a, a.BitLen()).String(); familyOfAddr(a) == FamilyIPv6 {
			v.VTEP6 = p
		} else {
			v.VTEP4 = p
		}
	}
	fams := underlayFamilies(u)
	activate := func(who string, in []Family) {
		for _, f := range in {
			if f == FamilyIPv6 {
				v.Activate6 = append(v.Activate6, who)
			} else {
				v.Activate4 = append(v.Activate4, who)
			}
		}
		v.ActivateEVPN = append(v.ActivateEVPN, who)
	}
	// A peer group is activated in the families of its members (validation makes them agree); one without
	// members in those of its listen ranges, else in every family of the underlay.
	groupFams := map[string][]Family{}
	for _, n := range u.Neighbors {
		if _, ok := groupFams[n.PeerGroup]; n.PeerGroup != "" && !ok {
			groupFams[n.PeerGroup] = neighborFamilies(&n, fams, u.extendedNextHop(&n))
		}
	}
	for _, pg := range u.PeerGroups {
		pv := peerGroupView{Name: pg.Name, RemoteAS: pg.RemoteAS, Session: v.session(pg.Name, &pg.SessionOptions)}
		pv.Session.ExtendedNextHop = pg.ExtendedNextHop
		for _, r := range pg.ListenRanges {
			pv.ListenRanges = append(pv.ListenRanges, r.String())
		}
		v.PeerGroups = append(v.PeerGroups, pv)
		in, ok := groupFams[pg.Name]
		if !ok && len(pg.ListenRanges) > 0 {
			// A range's dynamic neighbours are numbered: activated like a numbered member.
			for _, f := range fams {
				if slices.ContainsFunc(pg.ListenRanges, func(r netip.Prefix) bool {
					return slices.Contains(neighborFamilies(&Neighbor{Address: r.Addr()}, fams, pg.ExtendedNextHop), f)
				}) {
					in = append(in, f)
				}
			}
		} else if !ok {
			in = fams
		}
		activate(pg.Name, in)
	}
	for _, n := range u.Neighbors {
		key := neighborKey(&n)
		nv := neighborView{Key: key, Interface: n.Interface != "", PeerGroup: n.PeerGroup, RemoteAS: n.RemoteAS,
			Session: v.session(key, &n.SessionOptions)}
		nv.Session.ExtendedNextHop = n.ExtendedNextHop
		if n.Address.IsValid() {
			nv.Interface, nv.OnInterface = false, n.Interface
		}
		v.Neighbors = append(v.Neighbors, nv)
		if n.PeerGroup == "" {
			activate(key, neighborFamilies(&n, fams, n.ExtendedNextHop))
		}
	}
}

// vrf resolves one tenant VRF: its L3VNI, its address families (redistribution, aggregates, leaking, the
// peerings in it) and its prefix-lists and route-maps. clusterSeq is its entry in the cluster's import maps.
func (v *view) vrf(clusterSeq uint32, vrf *VRF, peerings []Peering, clusterImport *[2]routeMapView) vrfView {
	auto := autoRT(v.ASN, vrf.VNI)
	vv := vrfView{
		Name: vrf.Name, VNI: vrf.VNI, RD: vrf.RD,
		ImportRTs: explicitRTs(merge(vrf.RouteTargets, vrf.ImportRouteTargets), auto),
		ExportRTs: explicitRTs(merge(vrf.RouteTargets, vrf.ExportRouteTargets), auto),
	}
	afs := [2]afView{{Family: "ipv4"}, {Family: "ipv6"}}
	for fi, fam := range [2]int{4, 6} {
		af := &afs[fi]
		if vrf.RedistributeConnected {
			af.Redistribute = append(af.Redistribute, "connected")
		}
		if vrf.RedistributeStatic {
			af.Redistribute = append(af.Redistribute, "static")
		}
		af.Aggregates = aggregates(vrf, fam)
		if imp := v.leaking(fam, vrf, af); imp != "" {
			clusterImport[fi].Entries = append(clusterImport[fi].Entries, routeMapEntryView{
				Action: Permit, Seq: clusterSeq, MatchSourceVRF: vrf.Name, Call: imp,
			})
			cluster := clusterAF(&v.Cluster, fam)
			cluster.ImportVRFs = append(cluster.ImportVRFs, vrf.Name)
		}
	}
	for _, p := range peerings {
		if p.VRF != vrf.Name {
			continue
		}
		pv, fam := v.peering(&p)
		vv.Peerings = append(vv.Peerings, pv)
		afs[familyIndex(fam)].Peerings = append(afs[familyIndex(fam)].Peerings, pv)
	}
	for _, af := range afs {
		if !af.empty() {
			vv.AFs = append(vv.AFs, af)
		}
	}
	return vv
}

// routingTable resolves a routing table's BGP instance, which redistributes the table's kernel routes (as
// das-schiff did), and imports all of them into the cluster VRF: its entry clusterSeq in the cluster's import
// maps permits what comes from the table's VRF.
func (v *view) routingTable(clusterSeq uint32, rt *RoutingTable, clusterImport *[2]routeMapView) tableView {
	tv := tableView{Name: rt.Name}
	for fi, fam := range [2]int{4, 6} {
		tv.AFs = append(tv.AFs, afView{Family: []string{"ipv4", "ipv6"}[fi], Redistribute: []string{"kernel"}})
		clusterImport[fi].Entries = append(clusterImport[fi].Entries, routeMapEntryView{
			Action: Permit, Seq: clusterSeq, MatchSourceVRF: rt.Name,
		})
		cluster := clusterAF(&v.Cluster, fam)
		cluster.ImportVRFs = append(cluster.ImportVRFs, rt.Name)
	}
	return tv
}

// leaking adds the prefix-lists and route-maps of a VRF's route configs in one family. The export map (cluster
// VRF -> this VRF) is imported by the VRF's af; the name of the import map (this VRF -> cluster VRF) is
// returned for the cluster's import map to call, "" when no route config has a prefix of the family.
func (v *view) leaking(fam int, vrf *VRF, af *afView) (importMap string) {
	imp := routeMapView{Name: rmName(fam, vrf.Name, "import")}
	exp := routeMapView{Name: rmName(fam, vrf.Name, "export")}
	for _, rc := range sortedBy(vrf.RouteConfigs, func(a, b RouteConfig) int { return cmpU32(uint32(a.Seq), uint32(b.Seq)) }) {
		if pl, ok := prefixList(fam, plName(fam, vrf.Name, "import", rc.Seq), rc.Import, false); ok {
			v.PrefixLists = append(v.PrefixLists, pl)
			imp.Entries = append(imp.Entries, routeMapEntryView{
				Action: Permit, Seq: uint32(rc.Seq), MatchFamily: pl.Family, MatchPrefixList: pl.Name,
			})
		}
		if pl, ok := prefixList(fam, plName(fam, vrf.Name, "export", rc.Seq), rc.Export, false); ok {
			v.PrefixLists = append(v.PrefixLists, pl)
			std, large := splitCommunities(rc.Communities, v.frr)
			exp.Entries = append(exp.Entries, routeMapEntryView{
				Action: Permit, Seq: uint32(rc.Seq), MatchFamily: pl.Family, MatchPrefixList: pl.Name,
				SetCommunity: std, SetLargeCommunity: large, Additive: rc.Additive,
			})
		}
	}
	if len(imp.Entries) > 0 {
		imp.Entries = append(imp.Entries, routeMapEntryView{Action: Deny, Seq: bounds.DefaultDenyRouteMapSeq})
		v.RouteMaps = append(v.RouteMaps, imp)
		importMap = imp.Name
	}
	if len(exp.Entries) > 0 {
		exp.Entries = append(exp.Entries, routeMapEntryView{Action: Deny, Seq: bounds.DefaultDenyRouteMapSeq})
		v.RouteMaps = append(v.RouteMaps, exp)
		af.ImportRouteMap = exp.Name
		af.ImportVRFs = []string{"default"}
	}
	return importMap
}

// aggregates lists a VRF's aggregate-address arguments of one family, sorted and without repeats.
func aggregates(vrf *VRF, fam int) []string {
	var out []string
	for _, a := range vrf.Aggregates {
		if familyOf(a.Addr()) != fam {
			continue
		}
		s := a.String()
		if vrf.SummaryOnly {
			s += " summary-only"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// peering resolves one workload peering and adds its prefix-lists.
func (v *view) peering(p *Peering) (peeringView, int) {
	pv := peeringView{
		Name: p.Name, RemoteASN: p.RemoteASN, MaximumPrefixes: p.MaximumPrefixes,
		Session: v.session(p.Name, &p.SessionOptions),
	}
	var fam int
	if len(p.ListenRanges) > 0 {
		fam = familyOf(p.ListenRanges[0].Addr())
		for _, r := range slices.SortedFunc(slices.Values(p.ListenRanges), comparePrefix) {
			pv.ListenRanges = append(pv.ListenRanges, r.String())
		}
	} else {
		fam = familyOf(p.Neighbors[0])
		for _, n := range slices.SortedFunc(slices.Values(p.Neighbors), func(a, b netip.Addr) int { return a.Compare(b) }) {
			pv.Neighbors = append(pv.Neighbors, n.String())
		}
	}
	in, _ := prefixList(fam, plPrefix(fam)+"peer_"+p.Name+"_in", p.Import, true)
	out, _ := prefixList(fam, plPrefix(fam)+"peer_"+p.Name+"_out", p.Export, true)
	v.PrefixLists = append(v.PrefixLists, in, out)
	pv.PrefixListIn, pv.PrefixListOut = in.Name, out.Name
	return pv, fam
}

// prefixList builds the prefix-list for the items of one family. With
// denyIfEmpty an empty list still exists and denies everything (a peering
// without filter items gets nothing); otherwise ok reports whether any item
// has the family.
func prefixList(fam int, name string, items []PrefixItem, denyIfEmpty bool) (prefixListView, bool) {
	pl := prefixListView{Family: "ip", Name: name}
	if fam == 6 {
		pl.Family = "ipv6"
	}
	for i, it := range items {
		if familyOf(it.CIDR.Addr()) != fam {
			continue
		}
		pl.Entries = append(pl.Entries, prefixEntryView{
			Seq: itemSeq(&it, i), Action: it.Action, Prefix: it.CIDR.String(), GE: it.GE, LE: it.LE,
		})
	}
	if len(pl.Entries) == 0 {
		if !denyIfEmpty {
			return pl, false
		}
		pl.Entries = []prefixEntryView{{Seq: 10, Action: Deny, Prefix: "any"}}
	}
	slices.SortFunc(pl.Entries, func(a, b prefixEntryView) int { return cmpU32(a.Seq, b.Seq) })
	return pl, true
}

// session resolves a session's knobs and records the bfdd profile it names.
func (v *view) session(who string, s *SessionOptions) sessionView {
	sv := sessionView{
		Who: who, Password: s.Password.Value(), Multihop: s.EBGPMultihop,
		UpdateSource: s.UpdateSource, BFD: s.BFD != nil,
	}
	if s.BFD != nil && !s.BFD.IsDefault() {
		sv.BFDProfile = s.BFD.Name()
		i, found := slices.BinarySearchFunc(v.BFDProfiles, sv.BFDProfile, func(p bfdProfileView, name string) int {
			return strings.Compare(p.Name, name)
		})
		if !found {
			v.BFDProfiles = slices.Insert(v.BFDProfiles, i, bfdProfileView{Name: sv.BFDProfile, Lines: s.BFD.Lines()})
		}
	}
	if s.HoldTime != 0 {
		sv.Timers = strconv.Itoa(int(s.KeepaliveTime/time.Second)) + " " + strconv.Itoa(int(s.HoldTime/time.Second))
	}
	return sv
}

func clusterAF(c *instanceView, fam int) *afView {
	if fam == 6 {
		return &c.V6
	}
	return &c.V4
}

func familyIndex(fam int) int {
	if fam == 6 {
		return 1
	}
	return 0
}

func plPrefix(fam int) string {
	if fam == 6 {
		return "pl6_"
	}
	return "pl_"
}

func plName(fam int, vrf, dir string, seq uint16) string {
	return plPrefix(fam) + vrf + "_" + dir + "_" + strconv.Itoa(int(seq))
}

func rmName(fam int, vrf, dir string) string {
	if fam == 6 {
		return "rm6_" + vrf + "_" + dir
	}
	return "rm_" + vrf + "_" + dir
}

// autoRT is the route target FRR derives for a VNI: the low 16 bits of the
// AS number, then the VNI.
// IsolatedRouteTarget is the route target of an isolated L2VNI: the node's router id with local administrator 0.
// It is the node's own (no other node has its router id) and of the IPv4-address type, which FRR's automatic
// route targets (AS:VNI) never are.
func IsolatedRouteTarget(routerID netip.Addr) string { return routerID.String() + ":0" }

func autoRT(asn, vni uint32) string {
	return strconv.FormatUint(uint64(asn&0xffff), 10) + ":" + strconv.FormatUint(uint64(vni), 10)
}

// explicitRTs orders route targets for FRR 8.4, which treats a configured
// RT equal to the automatic one as "stay automatic" while the list is still
// automatic: alone it is left out (FRR keeps it automatic and does not show
// it), with others it goes last, after the first explicit RT has replaced
// the automatic list.
func explicitRTs(rts []string, auto string) []string {
	if len(rts) == 1 && rts[0] == auto {
		return nil
	}
	out := make([]string, 0, len(rts))
	hasAuto := false
	for _, rt := range rts {
		if rt == auto {
			hasAuto = true
			continue
		}
		out = append(out, rt)
	}
	if hasAuto {
		out = append(out, auto)
	}
	return out
}

// merge appends extra to both, dropping repeats, keeping first occurrence order.
func merge(both, extra []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range slices.Concat(both, extra) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// underlayCoalesceTime is how long the node's bgpd gathers the updates for a session that comes up before it sends
// them. FRR's default (1 s, plus 50 ms per peer) is added to every restart of the node's bgpd before its peers have
// its routes again - EVPN routes among them, which a route reflector running FRR withdraws as soon as the session
// goes (its graceful-restart helper keeps only IPv4/IPv6 unicast and VPN routes). A node has a handful of fabric
// peers, so gathering longer saves nothing.
const underlayCoalesceTime = 100 * time.Millisecond

// FRR's graceful-restart defaults (bgpd.h BGP_DEFAULT_RESTART_TIME, BGP_DEFAULT_STALEPATH_TIME).
const (
	frrDefaultRestartTime   = 120 * time.Second
	frrDefaultStalePathTime = 360 * time.Second
)

// gracefulRestartLines are a BGP instance's graceful-restart lines in the order FRR shows them (nil: none).
func gracefulRestartLines(gr *GracefulRestart) []string {
	if gr == nil {
		return nil
	}
	// FRR does not show a time equal to its default: rendering one would never converge.
	var out []string
	if gr.StalePathTime > 0 && gr.StalePathTime != frrDefaultStalePathTime {
		out = append(out, fmt.Sprintf("bgp graceful-restart stalepath-time %d", int(gr.StalePathTime.Seconds())))
	}
	if gr.RestartTime > 0 && gr.RestartTime != frrDefaultRestartTime {
		out = append(out, fmt.Sprintf("bgp graceful-restart restart-time %d", int(gr.RestartTime.Seconds())))
	}
	return append(out, "bgp graceful-restart", "bgp graceful-restart preserve-fw-state")
}

// splitCommunities separates large communities (A:B:C) from the others (standard and well-known), each
// space-joined in FRR's canonical order (bgp.CanonicalCommunities: what release v shows, so a reload converges).
func splitCommunities(all []string, v Version) (std, large string) {
	var s, l []string
	for _, c := range bgp.CanonicalCommunities(all, v.internetByName()) {
		if kind, _ := bgp.ParseCommunity(c); kind == bgp.LargeCommunity {
			l = append(l, c)
		} else {
			s = append(s, c)
		}
	}
	return strings.Join(s, " "), strings.Join(l, " ")
}

func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

func sortedBy[T any](in []T, cmp func(a, b T) int) []T {
	out := slices.Clone(in)
	slices.SortStableFunc(out, cmp)
	return out
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
