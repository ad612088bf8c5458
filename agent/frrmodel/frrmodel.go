// Package frrmodel translates a NodeNetworkConfigSpec into pkg/frr's input model (frr.NodeConfig). It is pure:
// BGP passwords come from a lookup function the caller supplies (the agent reads Secrets), and go only into the
// returned frr.Secret values.
package frrmodel

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/pkg/bgp"
	"github.com/network-operator/network-operator/pkg/bounds"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/frr"
)

// PasswordFunc returns the value of the Secret key a peering names. It is called once per peer that has a
// passwordSecretRef.
type PasswordFunc func(ctx context.Context, ref v1.SecretKeyReference) (string, error)

// ErrNoUnderlay is returned when the spec has no underlay (ASN 0): there is nothing FRR could run, e.g. a node
// provisioned from the legacy file format. Callers skip FRR then.
var ErrNoUnderlay = errors.New("no underlay ASN in the spec")

// VRFDeviceName is the kernel VRF device (and so FRR VRF) name of a tenant VRF.
func VRFDeviceName(vrf string) string { return v1.VRFDevicePrefix + vrf }

// IsClusterVRF reports whether a VRF name means FRR's default VRF: the VRFs without VNI that live in the main
// table ("default", "cluster") and the empty name.
func IsClusterVRF(name string) bool {
	return name == "" || name == v1.DefaultVRFName || name == v1.ClusterVRFName
}

// NodeConfig translates spec. A spec field FRR cannot express is a *field.Error; together they match
// fielderr.ErrInvalid. Tenant VRFs (those with a VNI) become FRR VRFs named like their kernel device
// (VRFDeviceName); "default" and "cluster" are FRR's default VRF, their leaks are ignored (a VRF cannot leak
// into itself). Each NodeBGPPeer becomes one peer group for its listen ranges and one for its fixed addresses,
// per address family (suffixes -r4, -r6, -n4, -n6 when there is more than one).
func NodeConfig(ctx context.Context, spec *v1.NodeNetworkConfigSpec, passwords PasswordFunc) (*frr.NodeConfig, error) {
	if spec.Underlay.ASN == 0 {
		return nil, ErrNoUnderlay
	}
	cfg := &frr.NodeConfig{}
	var errs field.ErrorList
	var other []error // not about a spec field (reading a password)
	cfg.Underlay, errs = underlay(field.NewPath("underlay"), &spec.Underlay)

	l2s, ferrs := l2VNIs(field.NewPath("layer2s"), spec.Layer2s)
	cfg.L2VNIs, errs = l2s, append(errs, ferrs...)
	links, ferrs := linkVNIs(field.NewPath("links"), spec.Links)
	cfg.L2VNIs, errs = append(cfg.L2VNIs, links...), append(errs, ferrs...)

	vrfNames := map[string]string{} // spec name -> FRR name
	for i := range spec.VRFs {
		vrf, ok, ferrs := tenantVRF(field.NewPath("vrfs").Index(i), &spec.VRFs[i])
		errs = append(errs, ferrs...)
		if ok {
			vrfNames[spec.VRFs[i].Name] = vrf.Name
			cfg.VRFs = append(cfg.VRFs, vrf)
		}
	}

	for i := range spec.RoutingTables {
		rt, ferrs := routingTable(field.NewPath("routingTables").Index(i), &spec.RoutingTables[i])
		errs = append(errs, ferrs...)
		if len(ferrs) == 0 {
			cfg.RoutingTables = append(cfg.RoutingTables, rt)
		}
	}

	for i := range spec.BGPPeers {
		peerings, ferrs, err := peerings(ctx, field.NewPath("bgpPeers").Index(i), &spec.BGPPeers[i], vrfNames, passwords)
		errs = append(errs, ferrs...)
		if err != nil {
			other = append(other, err)
		}
		if len(ferrs) > 0 || err != nil {
			continue
		}
		cfg.Peerings = append(cfg.Peerings, peerings...)
	}
	if err := errors.Join(fielderr.Join(errs), errors.Join(other...)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// underlay translates the default VRF's BGP instance: router id, VTEP source, the unicast families the underlay
// carries, the listed neighbours (numbered IPv4 or IPv6, unnumbered, or IPv6 link-local on an interface), and an
// unnumbered session to whatever AS answers on every uplink without a neighbour of its own. The families and
// addresses are checked as everywhere else (validation.ValidateUnderlay).
func underlay(up *field.Path, u *v1.UnderlaySpec) (frr.Underlay, field.ErrorList) {
	errs := bgp.ValidateASN(up.Child("asn"), u.ASN)
	out := frr.Underlay{ASN: uint32(u.ASN)}
	if a, err := netip.ParseAddr(u.RouterID); err != nil || !a.Is4() {
		errs = append(errs, field.Invalid(up.Child("routerID"), u.RouterID, "not an IPv4 address"))
	} else {
		out.RouterID = a
	}
	errs = append(errs, validation.ValidateUnderlay(up, u)...)
	if a, err := netip.ParseAddr(u.VTEPAddress); err == nil {
		out.VTEPSource = a
	}
	for _, f := range validation.UnderlayFamilies(u) {
		if f == v1.IPv6 {
			out.Families = append(out.Families, frr.FamilyIPv6)
		} else {
			out.Families = append(out.Families, frr.FamilyIPv4)
		}
	}
	neighbor := map[string]bool{} // addresses and interfaces that have a session
	for i, n := range u.Neighbors {
		f := up.Child("neighbors").Index(i)
		errs = append(errs, bgp.ValidateRemoteAS(f.Child("remoteASN"), n.RemoteASN)...)
		nb := frr.Neighbor{Interface: n.Interface, RemoteAS: n.RemoteASN}
		if n.Address != "" {
			a, err := netip.ParseAddr(n.Address)
			if err != nil {
				continue // ValidateUnderlay names it
			}
			nb.Address = a
			neighbor[a.String()] = true
		}
		// An interface with a neighbour of its own (unnumbered, or link-local on it) gets no second session.
		neighbor[n.Interface] = true
		out.Neighbors = append(out.Neighbors, nb)
	}
	for _, ifname := range u.Interfaces {
		if !neighbor[ifname] {
			neighbor[ifname] = true
			out.Neighbors = append(out.Neighbors, frr.Neighbor{Interface: ifname, RemoteAS: frr.RemoteASExternal})
		}
	}
	if u.BFD != nil {
		profile := u.BFD.Profile()
		if pErrs := profile.Validate(up.Child("bfd")); len(pErrs) > 0 {
			errs = append(errs, pErrs...)
		} else {
			for i := range out.Neighbors {
				out.Neighbors[i].BFD = &profile
			}
		}
	}
	return out, errs
}

// l2VNIs declares every Layer2 network's VNI (each one has a VNI: nodenet builds its VXLAN device from it). A
// network with static flooding takes no part in EVPN: zebra sees its VXLAN all the same (advertise-all-vni takes
// every VXLAN in a bridge), so it is declared isolated (frr.L2VNI.Isolated): no node imports its routes and it
// imports none, and its flood entries and MACs stay nodenet's and the kernel's.
func l2VNIs(path *field.Path, layer2s []v1.NodeLayer2) ([]frr.L2VNI, field.ErrorList) {
	var out []frr.L2VNI
	var errs field.ErrorList
	for i, l2 := range layer2s {
		if ferrs := vniRange(path.Index(i).Child("vni"), l2.VNI); len(ferrs) > 0 {
			errs = append(errs, ferrs...)
			continue
		}
		static := l2.Flooding != nil && l2.Flooding.Mode == v1.FloodingStatic
		out = append(out, frr.L2VNI{VNI: uint32(l2.VNI), Isolated: static})
	}
	return out, errs
}

// linkVNIs declares the VNI of every Link's VXLAN in a bridge (a master): zebra takes those, as it takes a layer-2
// network's, and they are one concept: EVPN, or isolated with static flooding. zebra ignores a VXLAN without a
// bridge, so those need nothing.
func linkVNIs(path *field.Path, links []v1.NodeLink) ([]frr.L2VNI, field.ErrorList) {
	var out []frr.L2VNI
	var errs field.ErrorList
	for i, l := range links {
		if l.VXLAN == nil || l.VXLAN.Master == "" {
			continue
		}
		if ferrs := vniRange(path.Index(i).Child("vxlan", "vni"), l.VXLAN.VNI); len(ferrs) > 0 {
			errs = append(errs, ferrs...)
			continue
		}
		static := l.VXLAN.Flooding != nil && l.VXLAN.Flooding.Mode == v1.FloodingStatic
		out = append(out, frr.L2VNI{VNI: uint32(l.VXLAN.VNI), Isolated: static})
	}
	return out, errs
}

func vniRange(path *field.Path, vni int32) field.ErrorList {
	if errs := bounds.VNI(path, int64(vni)); len(errs) > 0 {
		return errs
	}
	return nil
}

// tenantVRF translates a VRF with a VNI; ok is false for the ones that live in the default VRF (main table):
// "default", "cluster" and VRFs without VNI have nothing to declare.
func tenantVRF(f *field.Path, vrf *v1.NodeVRF) (out frr.VRF, ok bool, errs field.ErrorList) {
	if IsClusterVRF(vrf.Name) || vrf.VNI == 0 {
		return frr.VRF{}, false, nil
	}
	if errs := vniRange(f.Child("vni"), vrf.VNI); len(errs) > 0 {
		return frr.VRF{}, false, errs
	}
	out = frr.VRF{Name: VRFDeviceName(vrf.Name), VNI: uint32(vrf.VNI), RouteTargets: slices.Clone(vrf.RouteTargets),
		RedistributeConnected: true}
	for j := range vrf.Leaks {
		rc, ferrs := leak(f.Child("leaks").Index(j), &vrf.Leaks[j])
		errs = append(errs, ferrs...)
		if rc != nil {
			out.RouteConfigs = append(out.RouteConfigs, *rc)
		}
	}
	for j, a := range vrf.Aggregates {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			errs = append(errs, field.Invalid(f.Child("aggregates").Index(j), a, "not a CIDR"))
			continue
		}
		out.Aggregates = append(out.Aggregates, p.Masked())
	}
	return out, true, errs
}

// routingTable translates a host routing table (RoutingTable): its VRF "taas.<tableID>", whose kernel routes FRR
// redistributes and imports into the cluster VRF. The table must be a kernel table but none of the kernel's own,
// and the name the one nodenet gives the table's VRF device (pkg/frr checks that tables and names are unique).
func routingTable(f *field.Path, rt *v1.NodeRoutingTable) (frr.RoutingTable, field.ErrorList) {
	switch {
	case rt.TableID < 1 || rt.TableID > math.MaxUint32:
		return frr.RoutingTable{}, field.ErrorList{field.Invalid(f.Child("tableID"), rt.TableID,
			fmt.Sprintf("table id must be within 1..%d", uint32(math.MaxUint32)))}
	case rt.TableID >= v1.DefaultTableID && rt.TableID <= v1.LocalTableID:
		return frr.RoutingTable{}, field.ErrorList{field.Invalid(f.Child("tableID"), rt.TableID,
			"is a table of the kernel (253 default, 254 main, 255 local)")}
	}
	if want := (v1.RoutingTableSpec{TableID: rt.TableID}).VRFName(); rt.Name != want {
		return frr.RoutingTable{}, field.ErrorList{field.Invalid(f.Child("name"), rt.Name,
			fmt.Sprintf("must be %s (the VRF of table %d)", want, rt.TableID))}
	}
	return frr.RoutingTable{Name: rt.Name, TableID: uint32(rt.TableID)}, nil
}

// leak translates one VRFRouteConfiguration's route-map entry; nil when its sequence is out of range.
func leak(lf *field.Path, l *v1.VRFLeak) (*frr.RouteConfig, field.ErrorList) {
	if l.Seq < v1.MinRouteMapSeq || l.Seq > v1.MaxRouteMapSeq {
		return nil, field.ErrorList{field.Invalid(lf.Child("seq"), l.Seq, fmt.Sprintf("route-map sequence must be within %d..%d",
			v1.MinRouteMapSeq, v1.MaxRouteMapSeq))}
	}
	var errs field.ErrorList
	for k, c := range l.Communities {
		errs = append(errs, bgp.ValidateCommunity(lf.Child("communities").Index(k), c)...)
	}
	rc := &frr.RouteConfig{Seq: uint16(l.Seq), Communities: slices.Clone(l.Communities), Additive: l.AdditiveCommunities}
	var itemErrs field.ErrorList
	rc.Import, itemErrs = prefixItems(lf.Child("import"), l.Import)
	errs = append(errs, itemErrs...)
	rc.Export, itemErrs = prefixItems(lf.Child("export"), l.Export)
	errs = append(errs, itemErrs...)
	return rc, errs
}

// peerings returns the peer groups of one peer; a problem of the spec is a field error, err is anything else.
func peerings(ctx context.Context, f *field.Path, p *v1.NodeBGPPeer, vrfNames map[string]string, passwords PasswordFunc) ([]frr.Peering, field.ErrorList, error) {
	base, errs := peerSession(f, p, vrfNames)
	pwErrs, readErr := readPassword(ctx, f, p.PasswordSecretRef, passwords, &base)
	errs = append(errs, pwErrs...)
	out, suffixes, ferrs := splitByFamily(f, p, &base)
	errs = append(errs, ferrs...)
	if len(out) == 0 && len(errs) == 0 && readErr == nil {
		errs = append(errs, field.Required(f, fmt.Sprintf("peer %q has neither listenRanges nor addresses", p.Name)))
	}
	if len(errs) > 0 || readErr != nil {
		return nil, errs, readErr
	}
	for j := range out {
		suffix := ""
		if len(out) > 1 {
			suffix = suffixes[j]
		}
		out[j].Name = PeerGroupName(p.Name, suffix)
	}
	return out, nil, nil
}

// peerSession is what all peer groups of a peer share: VRF, remote AS, limits, timers and filters.
func peerSession(f *field.Path, p *v1.NodeBGPPeer, vrfNames map[string]string) (frr.Peering, field.ErrorList) {
	var errs field.ErrorList
	var base frr.Peering
	if !IsClusterVRF(p.VRF) {
		name, ok := vrfNames[p.VRF]
		if !ok {
			errs = append(errs, field.Invalid(f.Child("vrf"), p.VRF, "not a VRF with a VNI in vrfs"))
		}
		base.VRF = name
	}
	errs = append(errs, bgp.ValidateASN(f.Child("remoteASN"), p.RemoteASN)...)
	base.RemoteASN = uint32(p.RemoteASN)
	if p.MaximumPrefixes != nil {
		if *p.MaximumPrefixes < v1.MinMaximumPrefixes || *p.MaximumPrefixes > v1.MaxMaximumPrefixes {
			errs = append(errs, field.Invalid(f.Child("maximumPrefixes"), *p.MaximumPrefixes, fmt.Sprintf(
				"maximum prefixes must be within %d..%d", v1.MinMaximumPrefixes, v1.MaxMaximumPrefixes)))
		} else {
			base.MaximumPrefixes = uint32(*p.MaximumPrefixes)
		}
	}
	if p.EnableBFD || p.BFD != nil {
		profile := p.BFD.Profile()
		base.BFD = &profile
	}
	base.HoldTime, base.KeepaliveTime = timers(duration(p.HoldTime), duration(p.KeepaliveTime))
	var itemErrs field.ErrorList
	base.Import, itemErrs = prefixItems(f.Child("import"), p.Import)
	errs = append(errs, itemErrs...)
	base.Export, itemErrs = prefixItems(f.Child("export"), p.Export)
	errs = append(errs, itemErrs...)
	return base, errs
}

// timers completes hold time and keepalive when only one is given (pkg/frr renders them together).
func timers(hold, ka time.Duration) (time.Duration, time.Duration) {
	switch {
	case hold != 0 && ka == 0:
		ka = (hold / 3).Truncate(time.Second) // RFC 4271's suggested ratio
	case hold == 0 && ka != 0:
		hold = 3 * ka
	}
	return hold, ka
}

// ErrSecretUnavailable wraps a failed read of a peering's password Secret: not a fault of the spec (the Secret
// may appear later, the API server may be back in a moment), so the agent retries instead of failing the revision.
var ErrSecretUnavailable = errors.New("password Secret unavailable")

// readPassword sets base's password from the peer's Secret reference. Without Secret access that is a field
// error; a failed read is returned as err (the Secret may appear later).
func readPassword(ctx context.Context, f *field.Path, ref *v1.SecretKeyReference, passwords PasswordFunc, base *frr.Peering) (field.ErrorList, error) {
	switch {
	case ref == nil:
		return nil, nil
	case passwords == nil:
		return field.ErrorList{field.Invalid(f.Child("passwordSecretRef"), ref.Namespace+"/"+ref.Name,
			"cannot be read: no Secret access in this mode")}, nil
	}
	pw, err := passwords(ctx, *ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", f.Child("passwordSecretRef"), ErrSecretUnavailable, err)
	}
	base.Password = frr.Secret(pw)
	return nil, nil
}

// splitByFamily makes the peer groups of a peer: pkg/frr wants each to have either listen ranges or neighbours,
// of one address family, with filters of that family, so a peering becomes up to four groups (ranges / addresses
// x v4 / v6), returned with their name suffixes.
func splitByFamily(f *field.Path, p *v1.NodeBGPPeer, base *frr.Peering) ([]frr.Peering, []string, field.ErrorList) {
	var errs field.ErrorList
	type group struct {
		suffix string
		pe     frr.Peering
	}
	groups := []group{{suffix: "r4"}, {suffix: "r6"}, {suffix: "n4"}, {suffix: "n6"}}
	for j, r := range p.ListenRanges {
		pfx, err := netip.ParsePrefix(r)
		if err != nil {
			errs = append(errs, field.Invalid(f.Child("listenRanges").Index(j), r, "not a CIDR"))
			continue
		}
		g := &groups[family(pfx.Addr())].pe
		g.ListenRanges = append(g.ListenRanges, pfx.Masked())
	}
	for j, a := range p.Addresses {
		addr, err := netip.ParseAddr(a)
		if err != nil {
			errs = append(errs, field.Invalid(f.Child("addresses").Index(j), a, "not an IP address"))
			continue
		}
		g := &groups[2+family(addr)].pe
		g.Neighbors = append(g.Neighbors, addr.Unmap())
	}
	var out []frr.Peering
	var suffixes []string
	for i, g := range groups {
		if len(g.pe.ListenRanges) == 0 && len(g.pe.Neighbors) == 0 {
			continue
		}
		fam := i % 2
		pe := *base
		pe.ListenRanges, pe.Neighbors = g.pe.ListenRanges, g.pe.Neighbors
		pe.Import, pe.Export = ofFamily(base.Import, fam), ofFamily(base.Export, fam)
		out = append(out, pe)
		suffixes = append(suffixes, g.suffix)
	}
	return out, suffixes, errs
}

// ofFamily keeps the prefix items of one family (0 v4, 1 v6); none left means "deny all" in pkg/frr, which is
// what a filter without entries of the peering's family means.
func ofFamily(items []frr.PrefixItem, fam int) []frr.PrefixItem {
	var out []frr.PrefixItem
	for _, it := range items {
		if family(it.CIDR.Addr()) == fam {
			out = append(out, it)
		}
	}
	return out
}

// family is 0 for IPv4 (also v4-mapped), 1 for IPv6.
func family(a netip.Addr) int {
	if a.Is6() && !a.Is4In6() {
		return 1
	}
	return 0
}

func duration(d *metav1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}

// maxPeerGroupName keeps peer-group names within what pkg/frr accepts (they become part of prefix-list names).
const maxPeerGroupName = 40

var notNameChar = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// PeerGroupName turns a BGPPeering name (a DNS subdomain: may hold dots, start with a digit) into an FRR peer-group
// name: dots become '_', a leading digit gets "p" before it, the suffix follows after '-', and names longer than
// FRR's limit are cut and end in a short hash of the full name, so distinct peerings stay distinct.
func PeerGroupName(name, suffix string) string {
	n := notNameChar.ReplaceAllString(name, "_")
	if n == "" || !(n[0] >= 'a' && n[0] <= 'z' || n[0] >= 'A' && n[0] <= 'Z') {
		n = "p" + n
	}
	if suffix != "" {
		n += "-" + suffix
	}
	if len(n) > maxPeerGroupName {
		sum := sha256.Sum256([]byte(name + "/" + suffix))
		n = n[:maxPeerGroupName-9] + "-" + hex.EncodeToString(sum[:4])
	}
	return n
}

func prefixItems(path *field.Path, items []v1.NodePrefixItem) ([]frr.PrefixItem, field.ErrorList) {
	var errs field.ErrorList
	out := make([]frr.PrefixItem, 0, len(items))
	for i, it := range items {
		f := path.Index(i)
		p, err := netip.ParsePrefix(it.CIDR)
		if err != nil {
			errs = append(errs, field.Invalid(f.Child("cidr"), it.CIDR, "not a CIDR"))
			continue
		}
		pi := frr.PrefixItem{CIDR: p.Masked(), Action: frr.Action(cmp.Or(string(it.Action), string(frr.Permit)))}
		if pi.Action != frr.Permit && pi.Action != frr.Deny {
			errs = append(errs, field.NotSupported(f.Child("action"), it.Action, []v1.PrefixAction{v1.PrefixActionPermit, v1.PrefixActionDeny}))
		}
		errs = append(errs, validation.ValidatePrefixSeq(f.Child("seq"), it.Seq)...)
		pi.Seq = uint32(it.Seq)
		var lenErrs field.ErrorList
		pi.GE, lenErrs = prefixLen(f.Child("ge"), it.GE, p)
		errs = append(errs, lenErrs...)
		pi.LE, lenErrs = prefixLen(f.Child("le"), it.LE, p)
		errs = append(errs, lenErrs...)
		out = append(out, pi)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, errs
}

// prefixLen is a ge/le bound (nil: unset, 0) that must fit the CIDR's family; pkg/frr checks it against the
// CIDR's own length.
func prefixLen(path *field.Path, v *int32, p netip.Prefix) (uint8, field.ErrorList) {
	if v == nil {
		return 0, nil
	}
	if bits := int32(p.Addr().BitLen()); *v < 0 || *v > bits {
		return 0, field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("prefix length must be within 0..%d for %s", bits, p))}
	}
	return uint8(*v), nil
}

// Describe is a one-line summary of a translated config for plans and logs (never secrets).
func Describe(c *frr.NodeConfig) string {
	var vrfs []string
	for _, v := range c.VRFs {
		vrfs = append(vrfs, fmt.Sprintf("%s(vni %d)", v.Name, v.VNI))
	}
	for _, rt := range c.RoutingTables {
		vrfs = append(vrfs, fmt.Sprintf("%s(table %d)", rt.Name, rt.TableID))
	}
	return fmt.Sprintf("asn %d, %d underlay neighbours, %d L2VNIs, VRFs [%s], %d peer groups", c.Underlay.ASN,
		len(c.Underlay.Neighbors), len(c.L2VNIs), strings.Join(vrfs, " "), len(c.Peerings))
}
