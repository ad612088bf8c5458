package frr

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/pkg/bgp"
	"github.com/network-operator/network-operator/pkg/bounds"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// Limits FRR puts on names and numbers. The protocol's own bounds (VNI, interface names, route-map sequence
// numbers, hold times) are pkg/bounds', which the API states for its users too.
const (
	// minHoldTime and maxHoldTime bound SessionOptions.HoldTime.
	minHoldTime = bounds.MinHoldTimeSeconds * time.Second
	maxHoldTime = bounds.MaxHoldTimeSeconds * time.Second
	// MaxGracefulRestartTime bounds GracefulRestart's times (FRR's range; the capability's restart time has 12 bits).
	MaxGracefulRestartTime = 4095 * time.Second

	maxNameLen    = 40 // peer-group names end up inside prefix-list names
	maxPasswordLn = 80 // TCP MD5 key length limit
)

var (
	nameRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	vrfNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
	ifNameRe  = regexp.MustCompile(`^[A-Za-z0-9_.@-]+$`)
)

type validator struct{ errs field.ErrorList }

func (v *validator) add(path *field.Path, value any, format string, args ...any) {
	v.errs = append(v.errs, field.Invalid(path, value, fmt.Sprintf(format, args...)))
}

// Validate checks a NodeConfig for greenfield rendering. Every problem is reported, each a *field.Error naming
// the field and value; together they match fielderr.ErrInvalid.
func (c *NodeConfig) Validate() error { return c.validate(false) }

func (c *NodeConfig) validate(brownfield bool) error {
	v := &validator{}
	v.underlay(&c.Underlay, brownfield)
	v.evpnIPv6VTEP(c)

	vnis := map[uint32]string{}
	v.l2vnis(c.L2VNIs, vnis)
	vrfNames := v.tenantVRFs(c.VRFs, vnis)
	v.routingTables(c.RoutingTables, vrfNames)
	v.peerings(c.Underlay.PeerGroups, c.Peerings, vrfNames)
	return fielderr.Join(v.errs)
}

// claimVNI checks vni at path and claims it in vnis (VNI -> path of its first user): L2VNIs and VRFs share
// one VNI space.
func (v *validator) claimVNI(vnis map[uint32]string, path *field.Path, vni uint32) {
	if errs := bounds.VNI(path, int64(vni)); len(errs) > 0 {
		v.errs = append(v.errs, errs...)
		return
	}
	if prev, ok := vnis[vni]; ok {
		v.add(path, vni, "already used by %s", prev)
		return
	}
	vnis[vni] = path.String()
}

// l2vnis checks the L2VNIs: VNI (claimed in vnis), isolation, RD and route targets.
func (v *validator) l2vnis(l2vnis []L2VNI, vnis map[uint32]string) {
	for i := range l2vnis {
		l2 := &l2vnis[i]
		f := field.NewPath("l2vnis").Index(i)
		v.claimVNI(vnis, f.Child("vni"), l2.VNI)
		if l2.Isolated && (l2.RD != "" || len(l2.RouteTargets)+len(l2.ImportRouteTargets)+len(l2.ExportRouteTargets) > 0) {
			v.add(f.Child("isolated"), l2.VNI, "an isolated L2VNI takes no RD or route targets (its route target is the node's own)")
		}
		v.rd(f.Child("rd"), l2.RD)
		v.routeTargets(f, l2.RouteTargets, l2.ImportRouteTargets, l2.ExportRouteTargets)
	}
}

// tenantVRFs checks the tenant VRFs (VNIs claimed in vnis) and returns their names, for the checks that refer
// to them.
func (v *validator) tenantVRFs(vrfs []VRF, vnis map[uint32]string) map[string]bool {
	vrfNames := map[string]bool{}
	for i := range vrfs {
		vrf := &vrfs[i]
		f := field.NewPath("vrfs").Index(i)
		switch {
		case vrf.Name == "" || len(vrf.Name) > bounds.MaxInterfaceNameLen || !vrfNameRe.MatchString(vrf.Name):
			v.add(f.Child("name"), vrf.Name, "must be 1..%d characters of letters, digits, '_', '-', '.', starting with a letter", bounds.MaxInterfaceNameLen)
		case vrf.Name == "default":
			v.add(f.Child("name"), vrf.Name, "is the cluster VRF; tenant VRFs need another name")
		case vrfNames[vrf.Name]:
			v.add(f.Child("name"), vrf.Name, "duplicate VRF")
		}
		vrfNames[vrf.Name] = true
		v.claimVNI(vnis, f.Child("vni"), vrf.VNI)
		v.rd(f.Child("rd"), vrf.RD)
		v.routeTargets(f, vrf.RouteTargets, vrf.ImportRouteTargets, vrf.ExportRouteTargets)
		v.routeConfigs(f, vrf)
		for k, p := range vrf.Aggregates {
			v.prefix(f.Child("aggregates").Index(k), p)
		}
	}
	return vrfNames
}

// routeConfigs checks the route configs of vrf (at f): sequences in range and unique within the VRF, prefix
// items and communities.
func (v *validator) routeConfigs(f *field.Path, vrf *VRF) {
	seqs := map[uint16]bool{}
	for j := range vrf.RouteConfigs {
		rc := &vrf.RouteConfigs[j]
		rf := f.Child("routeConfigs").Index(j)
		if rc.Seq < bounds.MinRouteMapSeq || rc.Seq > bounds.MaxRouteMapSeq {
			v.add(rf.Child("seq"), rc.Seq, "must be %d..%d (%d is the default deny)", bounds.MinRouteMapSeq, bounds.MaxRouteMapSeq, bounds.DefaultDenyRouteMapSeq)
		} else if seqs[rc.Seq] {
			v.add(rf.Child("seq"), rc.Seq, "duplicate route-map sequence in VRF %q", vrf.Name)
		}
		seqs[rc.Seq] = true
		v.prefixItems(rf.Child("import"), rc.Import, 0)
		v.prefixItems(rf.Child("export"), rc.Export, 0)
		for k, com := range rc.Communities {
			v.errs = append(v.errs, bgp.ValidateCommunity(rf.Child("communities").Index(k), com)...)
		}
	}
}

// peerings checks the peerings: names unique among them and the underlay's peer groups (they share the
// peer-group namespace), VRF one of vrfNames or the cluster's, ASN, session and prefix items.
func (v *validator) peerings(groups []PeerGroup, peerings []Peering, vrfNames map[string]bool) {
	peerNames := map[string]bool{}
	for _, pg := range groups {
		peerNames[pg.Name] = true
	}
	for i := range peerings {
		p := &peerings[i]
		f := field.NewPath("peerings").Index(i)
		v.name(f.Child("name"), p.Name)
		if peerNames[p.Name] {
			v.add(f.Child("name"), p.Name, "duplicate peer-group name")
		}
		peerNames[p.Name] = true
		if p.VRF != "" && p.VRF != "default" && !vrfNames[p.VRF] {
			v.add(f.Child("vrf"), p.VRF, "no such VRF in vrfs")
		}
		v.errs = append(v.errs, bgp.ValidateASN(f.Child("remoteASN"), int64(p.RemoteASN))...)
		v.session(f, &p.SessionOptions)
		family := v.peeringFamily(f, p)
		v.prefixItems(f.Child("import"), p.Import, family)
		v.prefixItems(f.Child("export"), p.Export, family)
	}
}

// kernelTables are the kernel's reserved routing tables; none of them can be a routing table's VRF table.
var kernelTables = map[uint32]string{253: "default", 254: "main", 255: "local"}

// routingTables checks the routing tables' VRF names (valid, not the cluster VRF, unique among them and the
// tenant VRFs) and kernel tables (set, not reserved, unique).
func (v *validator) routingTables(tables []RoutingTable, vrfNames map[string]bool) {
	names := map[string]string{}
	ids := map[uint32]string{}
	for i := range tables {
		rt := &tables[i]
		f := field.NewPath("routingTables").Index(i)
		switch {
		case rt.Name == "" || len(rt.Name) > bounds.MaxInterfaceNameLen || !vrfNameRe.MatchString(rt.Name):
			v.add(f.Child("name"), rt.Name, "must be 1..%d characters of letters, digits, '_', '-', '.', starting with a letter", bounds.MaxInterfaceNameLen)
		case rt.Name == "default":
			v.add(f.Child("name"), rt.Name, "is the cluster VRF; a routing table needs a VRF of its own")
		case vrfNames[rt.Name]:
			v.add(f.Child("name"), rt.Name, "already a VRF in vrfs")
		case names[rt.Name] != "":
			v.add(f.Child("name"), rt.Name, "already used by %s", names[rt.Name])
		default:
			names[rt.Name] = f.String()
		}
		switch kernel, reserved := kernelTables[rt.TableID]; {
		case rt.TableID == 0:
			v.add(f.Child("tableID"), rt.TableID, "must be 1..%d", uint32(1<<32-1))
		case reserved:
			v.add(f.Child("tableID"), rt.TableID, "is the kernel's %s table", kernel)
		case ids[rt.TableID] != "":
			v.add(f.Child("tableID"), rt.TableID, "already used by %s", ids[rt.TableID])
		default:
			ids[rt.TableID] = f.String()
		}
	}
}

func (v *validator) underlay(u *Underlay, brownfield bool) {
	up := field.NewPath("underlay")
	v.errs = append(v.errs, bgp.ValidateASN(up.Child("asn"), int64(u.ASN))...)
	if !u.RouterID.Is4() {
		v.add(up.Child("routerID"), u.RouterID.String(), "must be an IPv4 address")
	}
	v.gracefulRestart(up.Child("gracefulRestart"), u.GracefulRestart)
	if brownfield {
		if len(u.PeerGroups) > 0 || len(u.Neighbors) > 0 || u.VTEPSource.IsValid() {
			v.add(up, "peerGroups/neighbors/vtepSource", "must be empty in brownfield mode: the base config owns the underlay")
		}
		return
	}
	fams := v.families(up.Child("families"), u)
	v.vtepSource(up.Child("vtepSource"), u.VTEPSource, fams)
	groups := v.peerGroups(up.Child("peerGroups"), u.PeerGroups, fams)
	v.neighbors(up.Child("neighbors"), u, fams, groups)
}

// gracefulRestart checks the times FRR takes: whole seconds up to what the capability carries.
func (v *validator) gracefulRestart(gp *field.Path, gr *GracefulRestart) {
	if gr == nil {
		return
	}
	for _, d := range []struct {
		name string
		val  time.Duration
	}{{"restartTime", gr.RestartTime}, {"stalePathTime", gr.StalePathTime}} {
		if d.val != 0 && (d.val%time.Second != 0 || d.val < time.Second || d.val > MaxGracefulRestartTime) {
			v.add(gp.Child(d.name), d.val.String(), "must be whole seconds, 1s..%ds (0: FRR's default)",
				MaxGracefulRestartTime/time.Second)
		}
	}
}

// vtepSource checks the VTEP address: one the fabric routes, of a family the underlay announces.
func (v *validator) vtepSource(f *field.Path, a netip.Addr, fams []Family) {
	if !a.IsValid() {
		return
	}
	switch {
	case a.Zone() != "" || a.Is4In6():
		v.add(f, a.String(), "must be an IPv4 or IPv6 address without zone, not IPv4-mapped")
	case a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast():
		v.add(f, a.String(), "must be an address the fabric routes (not unspecified, loopback, multicast or link-local)")
	case !slices.Contains(fams, familyOfAddr(a)):
		v.add(f, a.String(), "is not announced: the underlay carries %s only (families)", familyList(fams))
	}
}

// peerGroups checks the underlay's peer groups and returns their names.
func (v *validator) peerGroups(fp *field.Path, pgs []PeerGroup, fams []Family) map[string]bool {
	groups := map[string]bool{}
	for i := range pgs {
		pg := &pgs[i]
		f := fp.Index(i)
		v.name(f.Child("name"), pg.Name)
		if groups[pg.Name] {
			v.add(f.Child("name"), pg.Name, "duplicate peer group")
		}
		groups[pg.Name] = true
		v.errs = append(v.errs, bgp.ValidateRemoteAS(f.Child("remoteAS"), pg.RemoteAS)...)
		for j, r := range pg.ListenRanges {
			v.prefix(f.Child("listenRanges").Index(j), r)
			switch {
			case !r.IsValid():
			case pg.ExtendedNextHop && familyOfAddr(r.Addr()) == FamilyIPv4:
				v.add(f.Child("listenRanges").Index(j), r.String(), "is ipv4, but the group has extendedNextHop, which is for IPv6 sessions")
			case !pg.ExtendedNextHop && !slices.Contains(fams, familyOfAddr(r.Addr())):
				v.add(f.Child("listenRanges").Index(j), r.String(), "is %s, but the underlay carries %s only (families)",
					familyOfAddr(r.Addr()), familyList(fams))
			}
		}
		v.session(f, &pg.SessionOptions)
	}
	return groups
}

// neighbors checks the underlay's neighbours: how each is addressed, its family against the underlay's and its
// peer group's other members, and its remote AS.
func (v *validator) neighbors(fp *field.Path, u *Underlay, fams []Family, groups map[string]bool) {
	seen := map[string]bool{}
	type member struct {
		fams []Family
		who  string
	}
	groupFams := map[string]member{} // the families of a peer group's first member, which the others must share
	for i := range u.Neighbors {
		n := &u.Neighbors[i]
		f := fp.Index(i)
		key := neighborKey(n)
		linkLocal := n.Address.Is6() && n.Address.IsLinkLocalUnicast()
		enhe := u.extendedNextHop(n)
		switch {
		case n.ExtendedNextHop && !n.Address.IsValid():
			v.add(f.Child("extendedNextHop"), true, "an unnumbered session always has extended next hops; leave it unset")
		case n.ExtendedNextHop && n.Address.IsValid() && familyOfAddr(n.Address) == FamilyIPv4:
			v.add(f.Child("extendedNextHop"), true, "is for IPv6 sessions; %s is ipv4", key)
		case enhe && n.Address.IsValid() && familyOfAddr(n.Address) == FamilyIPv4:
			v.add(f.Child("peerGroup"), n.PeerGroup, "has extendedNextHop, which is for IPv6 sessions; %s is ipv4", key)
		}
		switch {
		case !n.Address.IsValid() && n.Interface == "":
			v.add(f, key, "needs an address, an interface, or an IPv6 link-local address and its interface")
		case n.Interface != "" && (len(n.Interface) > bounds.MaxInterfaceNameLen || !ifNameRe.MatchString(n.Interface)):
			v.add(f.Child("interface"), n.Interface, "must be an interface name of at most %d characters", bounds.MaxInterfaceNameLen)
		case n.Address.IsValid() && n.Address.Zone() != "":
			v.add(f.Child("address"), n.Address.String(), "zoned addresses are not supported; put the zone into interface")
		case n.Address.IsValid() && n.Interface != "" && !linkLocal:
			v.add(f.Child("interface"), n.Interface, "goes with an IPv6 link-local address only (or alone: unnumbered); %s is routed", key)
		case linkLocal && n.Interface == "":
			v.add(f.Child("interface"), n.Interface, "IPv6 link-local neighbour %s needs the interface it is on", n.Address)
		case n.Address.IsValid() && !slices.Contains(fams, familyOfAddr(n.Address)) && !(enhe && familyOfAddr(n.Address) == FamilyIPv6):
			v.add(f.Child("address"), n.Address.String(), "is an %s session, but the underlay carries %s only (families): "+
				"a numbered session carries its own family", familyOfAddr(n.Address), familyList(fams))
		}
		if seen[key] {
			v.add(f, key, "duplicate neighbor")
		}
		seen[key] = true
		if n.PeerGroup != "" {
			nf := neighborFamilies(n, fams, enhe)
			if g, ok := groupFams[n.PeerGroup]; !ok {
				groupFams[n.PeerGroup] = member{nf, key}
			} else if !slices.Equal(g.fams, nf) {
				v.add(f.Child("peerGroup"), n.PeerGroup, "is activated in %s for its member %s; %s needs %s: "+
					"put numbered neighbours of each family (and unnumbered ones) into peer groups of their own",
					familyList(g.fams), g.who, key, familyList(nf))
			}
		}
		switch {
		case n.PeerGroup != "" && !groups[n.PeerGroup]:
			v.add(f.Child("peerGroup"), n.PeerGroup, "no such peer group in underlay.peerGroups")
		case n.PeerGroup == "" && n.RemoteAS == "":
			v.add(f.Child("remoteAS"), n.RemoteAS, "needed when the neighbor has no peer group")
		case n.RemoteAS != "":
			v.errs = append(v.errs, bgp.ValidateRemoteAS(f.Child("remoteAS"), n.RemoteAS)...)
		}
		v.session(f, &n.SessionOptions)
	}
}

// families checks the underlay's families and returns them in effect (underlayFamilies).
func (v *validator) families(path *field.Path, u *Underlay) []Family {
	seen := map[Family]bool{}
	for i, f := range u.Families {
		switch {
		case f != FamilyIPv4 && f != FamilyIPv6:
			v.add(path.Index(i), int(f), "must be 4 or 6")
		case seen[f]:
			v.add(path.Index(i), f.String(), "duplicate family")
		}
		seen[f] = true
	}
	return underlayFamilies(u)
}

// underlayFamilies are the unicast families the underlay carries, IPv4 first: Families, else the VTEP's family,
// else IPv4.
func underlayFamilies(u *Underlay) []Family {
	var out []Family
	for _, f := range []Family{FamilyIPv4, FamilyIPv6} {
		if slices.Contains(u.Families, f) {
			out = append(out, f)
		}
	}
	switch {
	case len(out) > 0:
		return out
	case u.VTEPSource.IsValid():
		return []Family{familyOfAddr(u.VTEPSource)}
	}
	return []Family{FamilyIPv4}
}

// neighborFamilies are the unicast families a neighbour is activated in: every family of the underlay for an
// unnumbered one and for a numbered IPv6 one with extended next hops (enhe: Underlay.extendedNextHop), its
// address's for another numbered one (none when the underlay does not carry it: refused).
func neighborFamilies(n *Neighbor, fams []Family, enhe bool) []Family {
	if !n.Address.IsValid() || enhe && familyOfAddr(n.Address) == FamilyIPv6 {
		return fams
	}
	if f := familyOfAddr(n.Address); slices.Contains(fams, f) {
		return []Family{f}
	}
	return nil
}

func familyOfAddr(a netip.Addr) Family { return Family(familyOf(a)) }

func familyList(fs []Family) string {
	if len(fs) == 0 {
		return "no unicast family"
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return strings.Join(out, " and ")
}

// IPv6VTEPs reports whether release v runs EVPN with an IPv6 VTEP address: FRR 10.6 brought IPv6 VTEPs to bgpd
// and zebra. Older releases read only a VXLAN device's IPv4 source (zebra) and announce EVPN routes with an IPv4
// next hop (the router id), so remote VTEPs would tunnel to an address the node's VXLANs do not use.
func (v Version) IPv6VTEPs() bool {
	v = v.OrShipped()
	return v.Major > 10 || v.Major == 10 && v.Minor >= 6
}

// evpnIPv6VTEP refuses EVPN with an IPv6 VTEP for a release without IPv6 VTEPs: an L3VNI or an L2VNI that takes
// part in EVPN (an isolated one does not: nothing imports its routes).
func (v *validator) evpnIPv6VTEP(c *NodeConfig) {
	if !c.Underlay.VTEPSource.Is6() || c.Underlay.VTEPSource.Is4In6() || c.FRR.OrShipped().IPv6VTEPs() {
		return
	}
	what := ""
	for _, l2 := range c.L2VNIs {
		if !l2.Isolated {
			what = fmt.Sprintf("L2VNI %d", l2.VNI)
			break
		}
	}
	if what == "" && len(c.VRFs) > 0 {
		what = fmt.Sprintf("the L3VNI %d of VRF %s", c.VRFs[0].VNI, c.VRFs[0].Name)
	}
	if what != "" {
		v.add(field.NewPath("underlay", "vtepSource"), c.Underlay.VTEPSource.String(),
			"EVPN (%s) with an IPv6 VTEP needs FRR 10.6 or later; FRR %s announces its routes with an IPv4 next hop "+
				"(use an IPv4 VTEP, static flooding, or a newer FRR)", what, c.FRR.OrShipped())
	}
}

// extendedNextHop reports whether a neighbour's session has ExtendedNextHop, its own or its peer group's.
func (u *Underlay) extendedNextHop(n *Neighbor) bool {
	if n.ExtendedNextHop {
		return true
	}
	for i := range u.PeerGroups {
		if n.PeerGroup != "" && u.PeerGroups[i].Name == n.PeerGroup {
			return u.PeerGroups[i].ExtendedNextHop
		}
	}
	return false
}

// neighborKey is the name FRR knows a neighbour by: its address, or the interface of an unnumbered one.
func neighborKey(n *Neighbor) string {
	if n.Address.IsValid() {
		return n.Address.String()
	}
	return n.Interface
}

func (v *validator) name(path *field.Path, name string) {
	if len(name) == 0 || len(name) > maxNameLen || !nameRe.MatchString(name) {
		v.add(path, name, "must be 1..%d letters, digits, '_' or '-', starting with a letter", maxNameLen)
	}
}

func (v *validator) session(path *field.Path, s *SessionOptions) {
	if (s.HoldTime == 0) != (s.KeepaliveTime == 0) {
		v.add(path.Child("holdTime"), s.HoldTime.String(), "holdTime and keepaliveTime must be set together")
	} else if s.HoldTime != 0 {
		hold, ka := s.HoldTime, s.KeepaliveTime
		switch {
		case hold%time.Second != 0 || ka%time.Second != 0:
			v.add(path.Child("holdTime"), hold.String()+"/"+ka.String(), "timers must be whole seconds")
		case hold < minHoldTime || hold > maxHoldTime:
			v.add(path.Child("holdTime"), hold.String(), "must be %ds..%ds", minHoldTime/time.Second, maxHoldTime/time.Second)
		case ka >= hold:
			v.add(path.Child("keepaliveTime"), ka.String(), "must be below holdTime %s", hold)
		}
	}
	if s.BFD != nil {
		v.errs = append(v.errs, s.BFD.Validate(path.Child("bfd"))...)
	}
	if p := s.Password.Value(); p != "" {
		if len(p) > maxPasswordLn || strings.ContainsAny(p, " \t\r\n!#") {
			// Never echo the value.
			v.add(path.Child("password"), s.Password.String(), "must be at most %d characters without whitespace, '!' or '#'", maxPasswordLn)
		}
	}
	if s.UpdateSource != "" {
		if _, err := netip.ParseAddr(s.UpdateSource); err != nil && (len(s.UpdateSource) > bounds.MaxInterfaceNameLen || !ifNameRe.MatchString(s.UpdateSource)) {
			v.add(path.Child("updateSource"), s.UpdateSource, "must be an address or an interface name")
		}
	}
}

func (v *validator) prefix(path *field.Path, p netip.Prefix) {
	switch {
	case !p.IsValid():
		v.add(path, p.String(), "must be a valid CIDR")
	case p != p.Masked():
		v.add(path, p.String(), "has host bits set; FRR would store %s", p.Masked())
	}
}

// family: 0 = any, 4 or 6 = required family.
func (v *validator) prefixItems(path *field.Path, items []PrefixItem, family int) {
	seqs := map[uint32]bool{}
	for i := range items {
		it := &items[i]
		f := path.Index(i)
		v.prefix(f.Child("cidr"), it.CIDR)
		if it.CIDR.IsValid() {
			bits := it.CIDR.Addr().BitLen()
			if family == 4 && !it.CIDR.Addr().Is4() || family == 6 && !it.CIDR.Addr().Is6() {
				v.add(f.Child("cidr"), it.CIDR.String(), "must be IPv%d like the peering's addresses", family)
			}
			l := it.CIDR.Bits()
			if it.GE != 0 && (int(it.GE) < l || int(it.GE) > bits) {
				v.add(f.Child("ge"), it.GE, "must be %d..%d for %s", l, bits, it.CIDR)
			}
			if it.LE != 0 && (int(it.LE) < l || int(it.LE) > bits || it.GE != 0 && it.LE < it.GE) {
				v.add(f.Child("le"), it.LE, "must be max(ge, %d)..%d for %s", l, bits, it.CIDR)
			}
		}
		if it.Action != Permit && it.Action != Deny {
			v.add(f.Child("action"), string(it.Action), `must be "permit" or "deny"`)
		}
		seq := itemSeq(it, i)
		if seqs[seq] {
			v.add(f.Child("seq"), seq, "duplicate prefix-list sequence")
		}
		seqs[seq] = true
	}
}

// itemSeq is an item's prefix-list sequence: Seq, or (index+1)*10 so
// implicit entries keep their order and leave room for explicit ones (the
// API's PrefixItem.EffectiveSeq).
func itemSeq(it *PrefixItem, index int) uint32 {
	if it.Seq != 0 {
		return it.Seq
	}
	return uint32(index+1) * 10
}

func (v *validator) peeringFamily(path *field.Path, p *Peering) int {
	hasRange := len(p.ListenRanges) > 0
	if hasRange == (len(p.Neighbors) > 0) {
		v.add(path, p.Name, "needs exactly one of listenRanges or neighbors")
		return 0
	}
	if hasRange {
		fam := 0
		for i, r := range p.ListenRanges {
			f := path.Child("listenRanges").Index(i)
			v.prefix(f, r)
			if !r.IsValid() {
				continue
			}
			if fam == 0 {
				fam = familyOf(r.Addr())
			} else if familyOf(r.Addr()) != fam {
				v.add(f, r.String(), "mixes address families; use one peering per family")
			}
		}
		return fam
	}
	fam := familyOf(p.Neighbors[0])
	for i, n := range p.Neighbors {
		f := path.Child("neighbors").Index(i)
		if !n.IsValid() || n.Zone() != "" {
			v.add(f, n.String(), "must be an IP address without zone")
			continue
		}
		if familyOf(n) != fam {
			v.add(f, n.String(), "mixes address families; use one peering per family")
		}
	}
	return fam
}

func familyOf(a netip.Addr) int {
	if a.Is4() || a.Is4In6() {
		return 4
	}
	return 6
}

func (v *validator) rd(path *field.Path, rd string) {
	if rd != "" {
		v.errs = append(v.errs, bgp.ValidateRouteTarget(path, rd, false)...)
	}
}

func (v *validator) routeTargets(path *field.Path, both, imp, exp []string) {
	check := func(name string, list []string, wildcard bool) {
		seen := map[string]bool{}
		for i, rt := range list {
			f := path.Child(name).Index(i)
			if errs := bgp.ValidateRouteTarget(f, rt, wildcard); len(errs) > 0 {
				v.errs = append(v.errs, errs...)
			} else if seen[rt] {
				v.add(f, rt, "duplicate route target")
			}
			seen[rt] = true
		}
	}
	check("routeTargets", both, false)
	check("importRouteTargets", imp, true)
	check("exportRouteTargets", exp, false)
}
