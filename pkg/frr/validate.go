package frr

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidConfig marks every problem found in a NodeConfig (errors.Is).
var ErrInvalidConfig = errors.New("invalid FRR node config")

// FieldError names the offending field and value of a NodeConfig.
type FieldError struct {
	Field  string
	Value  any
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %v: %s", e.Field, quoteValue(e.Value), e.Reason)
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidConfig }

func quoteValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case fmt.Stringer:
		return strconv.Quote(x.String())
	default:
		return fmt.Sprint(v)
	}
}

// Limits FRR and the kernel put on names and numbers.
const (
	maxVNI        = 1<<24 - 1
	maxIfName     = 15 // IFNAMSIZ - 1
	maxNameLen    = 40 // peer-group names end up inside prefix-list names
	maxPasswordLn = 80 // TCP MD5 key length limit
	defaultDeny   = 65535
)

var (
	nameRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	vrfNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
	ifNameRe  = regexp.MustCompile(`^[A-Za-z0-9_.@-]+$`)
	// Well-known communities FRR accepts by name in "set community".
	wellKnownCommunities = map[string]bool{
		"internet": true, "no-export": true, "no-advertise": true, "local-AS": true,
		"graceful-shutdown": true, "accept-own": true, "blackhole": true, "no-peer": true,
		"no-llgr": true, "llgr-stale": true,
	}
)

type validator struct{ errs []error }

func (v *validator) add(field string, value any, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)})
}

// Validate checks a NodeConfig for greenfield rendering. Every problem is
// reported (errors.Join) as a *FieldError naming the field and value.
func (c *NodeConfig) Validate() error { return c.validate(false) }

func (c *NodeConfig) validate(brownfield bool) error {
	v := &validator{}
	v.underlay(&c.Underlay, brownfield)

	vnis := map[uint32]string{}
	claimVNI := func(field string, vni uint32) {
		if vni == 0 || vni > maxVNI {
			v.add(field, vni, "must be 1..%d", maxVNI)
			return
		}
		if prev, ok := vnis[vni]; ok {
			v.add(field, vni, "already used by %s", prev)
			return
		}
		vnis[vni] = field
	}
	for i := range c.L2VNIs {
		l2 := &c.L2VNIs[i]
		f := fmt.Sprintf("l2vnis[%d]", i)
		claimVNI(f+".vni", l2.VNI)
		v.rd(f+".rd", l2.RD)
		v.routeTargets(f, l2.RouteTargets, l2.ImportRouteTargets, l2.ExportRouteTargets)
	}

	vrfNames := map[string]bool{}
	for i := range c.VRFs {
		vrf := &c.VRFs[i]
		f := fmt.Sprintf("vrfs[%d]", i)
		switch {
		case vrf.Name == "" || len(vrf.Name) > maxIfName || !vrfNameRe.MatchString(vrf.Name):
			v.add(f+".name", vrf.Name, "must be 1..%d characters of letters, digits, '_', '-', '.', starting with a letter", maxIfName)
		case vrf.Name == "default":
			v.add(f+".name", vrf.Name, "is the cluster VRF; tenant VRFs need another name")
		case vrfNames[vrf.Name]:
			v.add(f+".name", vrf.Name, "duplicate VRF")
		}
		vrfNames[vrf.Name] = true
		claimVNI(f+".vni", vrf.VNI)
		v.rd(f+".rd", vrf.RD)
		v.routeTargets(f, vrf.RouteTargets, vrf.ImportRouteTargets, vrf.ExportRouteTargets)
		seqs := map[uint16]bool{}
		for j := range vrf.RouteConfigs {
			rc := &vrf.RouteConfigs[j]
			rf := fmt.Sprintf("%s.routeConfigs[%d]", f, j)
			if rc.Seq == 0 || rc.Seq >= defaultDeny {
				v.add(rf+".seq", rc.Seq, "must be 1..%d (%d is the default deny)", defaultDeny-1, defaultDeny)
			} else if seqs[rc.Seq] {
				v.add(rf+".seq", rc.Seq, "duplicate route-map sequence in VRF %q", vrf.Name)
			}
			seqs[rc.Seq] = true
			v.prefixItems(rf+".import", rc.Import, 0)
			v.prefixItems(rf+".export", rc.Export, 0)
			for k, com := range rc.Communities {
				if !validCommunity(com) && !validLargeCommunity(com) {
					v.add(fmt.Sprintf("%s.communities[%d]", rf, k), com, "must be AA:NN (each 0..65535), a well-known community name or a large community A:B:C")
				}
			}
		}
		for k, p := range vrf.Aggregates {
			v.prefix(fmt.Sprintf("%s.aggregates[%d]", f, k), p)
		}
	}

	peerNames := map[string]bool{}
	for _, pg := range c.Underlay.PeerGroups {
		peerNames[pg.Name] = true
	}
	for i := range c.Peerings {
		p := &c.Peerings[i]
		f := fmt.Sprintf("peerings[%d]", i)
		v.name(f+".name", p.Name)
		if peerNames[p.Name] {
			v.add(f+".name", p.Name, "duplicate peer-group name")
		}
		peerNames[p.Name] = true
		if p.VRF != "" && p.VRF != "default" && !vrfNames[p.VRF] {
			v.add(f+".vrf", p.VRF, "no such VRF in vrfs")
		}
		if p.RemoteASN == 0 {
			v.add(f+".remoteASN", p.RemoteASN, "must be 1..4294967295")
		}
		v.session(f, &p.SessionOptions)
		family := v.peeringFamily(f, p)
		v.prefixItems(f+".import", p.Import, family)
		v.prefixItems(f+".export", p.Export, family)
	}
	return errors.Join(v.errs...)
}

func (v *validator) underlay(u *Underlay, brownfield bool) {
	if u.ASN == 0 {
		v.add("underlay.asn", u.ASN, "must be 1..4294967295")
	}
	if !u.RouterID.Is4() {
		v.add("underlay.routerID", u.RouterID, "must be an IPv4 address")
	}
	if brownfield {
		if len(u.PeerGroups) > 0 || len(u.Neighbors) > 0 || u.VTEPSource.IsValid() {
			v.add("underlay", "peerGroups/neighbors/vtepSource", "must be empty in brownfield mode: the base config owns the underlay")
		}
		return
	}
	if u.VTEPSource.IsValid() && !u.VTEPSource.Is4() {
		v.add("underlay.vtepSource", u.VTEPSource, "must be an IPv4 address (FRR 8.4 EVPN VTEPs are IPv4)")
	}
	groups := map[string]bool{}
	for i := range u.PeerGroups {
		pg := &u.PeerGroups[i]
		f := fmt.Sprintf("underlay.peerGroups[%d]", i)
		v.name(f+".name", pg.Name)
		if groups[pg.Name] {
			v.add(f+".name", pg.Name, "duplicate peer group")
		}
		groups[pg.Name] = true
		v.remoteAS(f+".remoteAS", pg.RemoteAS)
		for j, r := range pg.ListenRanges {
			v.prefix(fmt.Sprintf("%s.listenRanges[%d]", f, j), r)
		}
		v.session(f, &pg.SessionOptions)
	}
	seen := map[string]bool{}
	for i := range u.Neighbors {
		n := &u.Neighbors[i]
		f := fmt.Sprintf("underlay.neighbors[%d]", i)
		key := n.Interface
		switch {
		case n.Address.IsValid() == (n.Interface != ""):
			v.add(f, neighborKey(n), "needs exactly one of address or interface")
		case n.Interface != "" && (len(n.Interface) > maxIfName || !ifNameRe.MatchString(n.Interface)):
			v.add(f+".interface", n.Interface, "must be an interface name of at most %d characters", maxIfName)
		case n.Address.IsValid():
			key = n.Address.String()
			if n.Address.Zone() != "" {
				v.add(f+".address", n.Address, "zoned addresses are not supported; use interface")
			}
		}
		if seen[key] {
			v.add(f, key, "duplicate neighbor")
		}
		seen[key] = true
		switch {
		case n.PeerGroup != "" && !groups[n.PeerGroup]:
			v.add(f+".peerGroup", n.PeerGroup, "no such peer group in underlay.peerGroups")
		case n.PeerGroup == "" && n.RemoteAS == "":
			v.add(f+".remoteAS", n.RemoteAS, "needed when the neighbor has no peer group")
		case n.RemoteAS != "":
			v.remoteAS(f+".remoteAS", n.RemoteAS)
		}
		v.session(f, &n.SessionOptions)
	}
}

func neighborKey(n *Neighbor) string {
	if n.Interface != "" {
		return n.Interface
	}
	if n.Address.IsValid() {
		return n.Address.String()
	}
	return ""
}

func (v *validator) name(field, name string) {
	if len(name) == 0 || len(name) > maxNameLen || !nameRe.MatchString(name) {
		v.add(field, name, "must be 1..%d letters, digits, '_' or '-', starting with a letter", maxNameLen)
	}
}

func (v *validator) remoteAS(field, as string) {
	if as == RemoteASInternal || as == RemoteASExternal {
		return
	}
	n, err := strconv.ParseUint(as, 10, 32)
	if err != nil || n == 0 {
		v.add(field, as, `must be "internal", "external" or an AS number 1..4294967295`)
	}
}

func (v *validator) session(field string, s *SessionOptions) {
	if (s.HoldTime == 0) != (s.KeepaliveTime == 0) {
		v.add(field+".holdTime", s.HoldTime.String(), "holdTime and keepaliveTime must be set together")
	} else if s.HoldTime != 0 {
		hold, ka := s.HoldTime, s.KeepaliveTime
		switch {
		case hold%time.Second != 0 || ka%time.Second != 0:
			v.add(field+".holdTime", hold.String()+"/"+ka.String(), "timers must be whole seconds")
		case hold < 3*time.Second || hold > 65535*time.Second:
			v.add(field+".holdTime", hold.String(), "must be 3s..65535s")
		case ka >= hold:
			v.add(field+".keepaliveTime", ka.String(), "must be below holdTime %s", hold)
		}
	}
	if p := s.Password.Value(); p != "" {
		if len(p) > maxPasswordLn || strings.ContainsAny(p, " \t\r\n!#") {
			// Never echo the value.
			v.add(field+".password", s.Password, "must be at most %d characters without whitespace, '!' or '#'", maxPasswordLn)
		}
	}
	if s.UpdateSource != "" {
		if _, err := netip.ParseAddr(s.UpdateSource); err != nil && (len(s.UpdateSource) > maxIfName || !ifNameRe.MatchString(s.UpdateSource)) {
			v.add(field+".updateSource", s.UpdateSource, "must be an address or an interface name")
		}
	}
}

func (v *validator) prefix(field string, p netip.Prefix) {
	switch {
	case !p.IsValid():
		v.add(field, p, "must be a valid CIDR")
	case p != p.Masked():
		v.add(field, p, "has host bits set; FRR would store %s", p.Masked())
	}
}

// family: 0 = any, 4 or 6 = required family.
func (v *validator) prefixItems(field string, items []PrefixItem, family int) {
	seqs := map[uint32]bool{}
	for i := range items {
		it := &items[i]
		f := fmt.Sprintf("%s[%d]", field, i)
		v.prefix(f+".cidr", it.CIDR)
		if it.CIDR.IsValid() {
			bits := it.CIDR.Addr().BitLen()
			if family == 4 && !it.CIDR.Addr().Is4() || family == 6 && !it.CIDR.Addr().Is6() {
				v.add(f+".cidr", it.CIDR, "must be IPv%d like the peering's addresses", family)
			}
			l := it.CIDR.Bits()
			if it.GE != 0 && (int(it.GE) < l || int(it.GE) > bits) {
				v.add(f+".ge", it.GE, "must be %d..%d for %s", l, bits, it.CIDR)
			}
			if it.LE != 0 && (int(it.LE) < l || int(it.LE) > bits || it.GE != 0 && it.LE < it.GE) {
				v.add(f+".le", it.LE, "must be max(ge, %d)..%d for %s", l, bits, it.CIDR)
			}
		}
		if it.Action != Permit && it.Action != Deny {
			v.add(f+".action", string(it.Action), `must be "permit" or "deny"`)
		}
		seq := itemSeq(it, i)
		if seqs[seq] {
			v.add(f+".seq", seq, "duplicate prefix-list sequence")
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

func (v *validator) peeringFamily(field string, p *Peering) int {
	hasRange := len(p.ListenRanges) > 0
	if hasRange == (len(p.Neighbors) > 0) {
		v.add(field, p.Name, "needs exactly one of listenRanges or neighbors")
		return 0
	}
	if hasRange {
		fam := 0
		for i, r := range p.ListenRanges {
			f := fmt.Sprintf("%s.listenRanges[%d]", field, i)
			v.prefix(f, r)
			if !r.IsValid() {
				continue
			}
			if fam == 0 {
				fam = familyOf(r.Addr())
			} else if familyOf(r.Addr()) != fam {
				v.add(f, r, "mixes address families; use one peering per family")
			}
		}
		return fam
	}
	fam := familyOf(p.Neighbors[0])
	for i, n := range p.Neighbors {
		if !n.IsValid() || n.Zone() != "" {
			v.add(fmt.Sprintf("%s.neighbors[%d]", field, i), n, "must be an IP address without zone")
			continue
		}
		if familyOf(n) != fam {
			v.add(fmt.Sprintf("%s.neighbors[%d]", field, i), n, "mixes address families; use one peering per family")
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

func (v *validator) rd(field, rd string) {
	if rd != "" && !validRTorRD(rd, false) {
		v.add(field, rd, "must be ASN:NN or IPv4:NN")
	}
}

func (v *validator) routeTargets(field string, both, imp, exp []string) {
	check := func(name string, list []string, wildcard bool) {
		seen := map[string]bool{}
		for i, rt := range list {
			f := fmt.Sprintf("%s.%s[%d]", field, name, i)
			if !validRTorRD(rt, wildcard) {
				v.add(f, rt, "must be ASN:NN or IPv4:NN")
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

// validRTorRD accepts "ASN:NN" (2-byte ASN with 4-byte NN, or 4-byte ASN with
// 2-byte NN) and "IPv4:NN"; import route targets may use "*:NN".
func validRTorRD(s string, wildcard bool) bool {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return false
	}
	admin, local := s[:i], s[i+1:]
	nn, err := strconv.ParseUint(local, 10, 32)
	if err != nil {
		return false
	}
	if admin == "*" {
		return wildcard
	}
	if ip, err := netip.ParseAddr(admin); err == nil {
		return ip.Is4() && nn <= 0xffff
	}
	asn, err := strconv.ParseUint(admin, 10, 32)
	if err != nil {
		return false
	}
	if asn > 0xffff {
		return nn <= 0xffff
	}
	return true
}

func validLargeCommunity(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return false
		}
	}
	return true
}

func validCommunity(s string) bool {
	if wellKnownCommunities[s] {
		return true
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(a, 10, 16)
	_, err2 := strconv.ParseUint(b, 10, 16)
	return err1 == nil && err2 == nil
}
