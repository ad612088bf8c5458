// Package frrconfig translates a NodeNetworkConfigSpec into pkg/frr's input model (frr.NodeConfig). It is pure:
// BGP passwords come from a lookup function the caller supplies (the agent reads Secrets), and go only into the
// returned frr.Secret values.
package frrconfig

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
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
// validation.ErrInvalid. Tenant VRFs (those with a VNI) become FRR VRFs named like their kernel device
// (VRFDeviceName); "default" and "cluster" are FRR's default VRF, their leaks are ignored (a VRF cannot leak
// into itself). Each NodeBGPPeer becomes one peer group for its listen ranges and one for its fixed addresses,
// per address family (suffixes -r4, -r6, -n4, -n6 when there is more than one).
func NodeConfig(ctx context.Context, spec *v1.NodeNetworkConfigSpec, passwords PasswordFunc) (*frr.NodeConfig, error) {
	if spec.Underlay.ASN == 0 {
		return nil, ErrNoUnderlay
	}
	var errs field.ErrorList
	var other []error // not about a spec field (reading a password)
	cfg := &frr.NodeConfig{}

	u := &spec.Underlay
	up := field.NewPath("underlay")
	errs = append(errs, validation.ValidateASN(up.Child("asn"), u.ASN)...)
	cfg.Underlay.ASN = uint32(u.ASN)
	if a, err := netip.ParseAddr(u.RouterID); err != nil || !a.Is4() {
		errs = append(errs, field.Invalid(up.Child("routerID"), u.RouterID, "not an IPv4 address"))
	} else {
		cfg.Underlay.RouterID = a
	}
	if u.VTEPAddress != "" {
		if a, err := netip.ParseAddr(u.VTEPAddress); err != nil {
			errs = append(errs, field.Invalid(up.Child("vtepAddress"), u.VTEPAddress, "not an IP address"))
		} else {
			cfg.Underlay.VTEPSource = a
		}
	}
	neighbor := map[string]bool{}
	for i, n := range u.Neighbors {
		f := up.Child("neighbors").Index(i)
		errs = append(errs, validation.ValidateRemoteAS(f.Child("remoteASN"), n.RemoteASN)...)
		nb := frr.Neighbor{Interface: n.Interface, RemoteAS: n.RemoteASN}
		key := n.Interface
		if n.Address != "" {
			a, err := netip.ParseAddr(n.Address)
			if err != nil {
				errs = append(errs, field.Invalid(f.Child("address"), n.Address, "not an IP address"))
				continue
			}
			nb.Address, key = a, a.String()
		}
		neighbor[key] = true
		cfg.Underlay.Neighbors = append(cfg.Underlay.Neighbors, nb)
	}
	// Uplinks without an explicit neighbour get an unnumbered session to whatever AS answers.
	for _, ifname := range u.Interfaces {
		if !neighbor[ifname] {
			neighbor[ifname] = true
			cfg.Underlay.Neighbors = append(cfg.Underlay.Neighbors, frr.Neighbor{Interface: ifname, RemoteAS: frr.RemoteASExternal})
		}
	}

	for _, l2 := range spec.Layer2s {
		if l2.VNI != 0 {
			cfg.L2VNIs = append(cfg.L2VNIs, frr.L2VNI{VNI: uint32(l2.VNI)})
		}
	}

	vrfNames := map[string]string{} // spec name -> FRR name
	for i, vrf := range spec.VRFs {
		f := field.NewPath("vrfs").Index(i)
		if IsClusterVRF(vrf.Name) || vrf.VNI == 0 {
			continue // lives in the default VRF (main table): nothing to declare
		}
		out := frr.VRF{Name: VRFDeviceName(vrf.Name), VNI: uint32(vrf.VNI), RouteTargets: slices.Clone(vrf.RouteTargets),
			RedistributeConnected: true}
		vrfNames[vrf.Name] = out.Name
		for j, l := range vrf.Leaks {
			lf := f.Child("leaks").Index(j)
			if l.Seq < v1.MinRouteMapSeq || l.Seq > v1.MaxRouteMapSeq {
				errs = append(errs, field.Invalid(lf.Child("seq"), l.Seq, fmt.Sprintf("route-map sequence must be within %d..%d",
					v1.MinRouteMapSeq, v1.MaxRouteMapSeq)))
				continue
			}
			for k, c := range l.Communities {
				errs = append(errs, validation.ValidateCommunity(lf.Child("communities").Index(k), c)...)
			}
			rc := frr.RouteConfig{Seq: uint16(l.Seq), Communities: slices.Clone(l.Communities)}
			var itemErrs field.ErrorList
			rc.Import, itemErrs = prefixItems(lf.Child("import"), l.Import)
			errs = append(errs, itemErrs...)
			rc.Export, itemErrs = prefixItems(lf.Child("export"), l.Export)
			errs = append(errs, itemErrs...)
			out.RouteConfigs = append(out.RouteConfigs, rc)
		}
		for j, a := range vrf.Aggregates {
			p, err := netip.ParsePrefix(a)
			if err != nil {
				errs = append(errs, field.Invalid(f.Child("aggregates").Index(j), a, "not a CIDR"))
				continue
			}
			out.Aggregates = append(out.Aggregates, p.Masked())
		}
		cfg.VRFs = append(cfg.VRFs, out)
	}

	for i := range spec.BGPPeers {
		p := &spec.BGPPeers[i]
		peerings, ferrs, err := peerings(ctx, field.NewPath("bgpPeers").Index(i), p, vrfNames, passwords)
		errs = append(errs, ferrs...)
		if err != nil {
			other = append(other, err)
		}
		if len(ferrs) > 0 || err != nil {
			continue
		}
		cfg.Peerings = append(cfg.Peerings, peerings...)
	}
	if err := errors.Join(validation.Join(errs), errors.Join(other...)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// peerings returns the peer groups of one peer; a problem of the spec is a field error, err is anything else.
func peerings(ctx context.Context, f *field.Path, p *v1.NodeBGPPeer, vrfNames map[string]string, passwords PasswordFunc) ([]frr.Peering, field.ErrorList, error) {
	var errs field.ErrorList
	var base frr.Peering
	if !IsClusterVRF(p.VRF) {
		name, ok := vrfNames[p.VRF]
		if !ok {
			errs = append(errs, field.Invalid(f.Child("vrf"), p.VRF, "not a VRF with a VNI in vrfs"))
		}
		base.VRF = name
	}
	errs = append(errs, validation.ValidateASN(f.Child("remoteASN"), p.RemoteASN)...)
	base.RemoteASN = uint32(p.RemoteASN)
	if p.MaximumPrefixes != nil {
		if *p.MaximumPrefixes < v1.MinMaximumPrefixes || *p.MaximumPrefixes > v1.MaxMaximumPrefixes {
			errs = append(errs, field.Invalid(f.Child("maximumPrefixes"), *p.MaximumPrefixes, fmt.Sprintf(
				"maximum prefixes must be within %d..%d", v1.MinMaximumPrefixes, v1.MaxMaximumPrefixes)))
		} else {
			base.MaximumPrefixes = uint32(*p.MaximumPrefixes)
		}
	}
	base.BFD = p.EnableBFD
	hold, ka := duration(p.HoldTime), duration(p.KeepaliveTime)
	switch {
	case hold != 0 && ka == 0:
		ka = (hold / 3).Truncate(time.Second) // RFC 4271's suggested ratio
	case hold == 0 && ka != 0:
		hold = 3 * ka
	}
	base.HoldTime, base.KeepaliveTime = hold, ka
	var itemErrs field.ErrorList
	base.Import, itemErrs = prefixItems(f.Child("import"), p.Import)
	errs = append(errs, itemErrs...)
	base.Export, itemErrs = prefixItems(f.Child("export"), p.Export)
	errs = append(errs, itemErrs...)
	var readErr error
	if p.PasswordSecretRef != nil {
		if passwords == nil {
			errs = append(errs, field.Invalid(f.Child("passwordSecretRef"), p.PasswordSecretRef.Namespace+"/"+p.PasswordSecretRef.Name,
				"cannot be read: no Secret access in this mode"))
		} else if pw, err := passwords(ctx, *p.PasswordSecretRef); err != nil {
			readErr = fmt.Errorf("%s: %w", f.Child("passwordSecretRef"), err)
		} else {
			base.Password = frr.Secret(pw)
		}
	}

	// pkg/frr wants each peer group to have either listen ranges or neighbours, of one address family, with
	// filters of that family: a peering is split into up to four groups (ranges / addresses x v4 / v6).
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
		pe := base
		pe.ListenRanges, pe.Neighbors = g.pe.ListenRanges, g.pe.Neighbors
		pe.Import, pe.Export = ofFamily(base.Import, fam), ofFamily(base.Export, fam)
		out = append(out, pe)
		suffixes = append(suffixes, g.suffix)
	}
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
		if it.GE != nil {
			pi.GE = uint8(clampLen(*it.GE))
		}
		if it.LE != nil {
			pi.LE = uint8(clampLen(*it.LE))
		}
		out = append(out, pi)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, errs
}

func clampLen(v int32) int32 { return min(max(v, 0), v1.MaxPrefixLen) }

// Describe is a one-line summary of a translated config for plans and logs (never secrets).
func Describe(c *frr.NodeConfig) string {
	var vrfs []string
	for _, v := range c.VRFs {
		vrfs = append(vrfs, fmt.Sprintf("%s(vni %d)", v.Name, v.VNI))
	}
	return fmt.Sprintf("asn %d, %d underlay neighbours, %d L2VNIs, VRFs [%s], %d peer groups", c.Underlay.ASN,
		len(c.Underlay.Neighbors), len(c.L2VNIs), strings.Join(vrfs, " "), len(c.Peerings))
}
