package frr

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
)

// PasswordFunc returns the value of a Secret key (the agent reads Secrets;
// NodeNetworkConfig only carries references).
type PasswordFunc func(ref v1alpha1.SecretKeyReference) (string, error)

// FromNodeNetworkConfig turns a node's NodeNetworkConfig into the FRR input
// model and validates it. Tenant VRFs are named after their kernel device
// ("vr." + name); the VRFs "default" and "cluster" are FRR's default VRF.
// Tenant VRFs redistribute their connected routes (anycast gateway subnets
// and loopbacks become type-5 routes). Uplink interfaces without a neighbour
// entry become unnumbered eBGP neighbours ("remote-as external").
func FromNodeNetworkConfig(spec *v1alpha1.NodeNetworkConfigSpec, passwords PasswordFunc) (NodeConfig, error) {
	c := &converter{}
	sp := field.NewPath("spec")
	cfg := NodeConfig{Underlay: c.underlay(sp.Child("underlay"), &spec.Underlay)}
	for i := range spec.Layer2s {
		l2 := &spec.Layer2s[i]
		cfg.L2VNIs = append(cfg.L2VNIs, L2VNI{VNI: c.u32(sp.Child("layer2s").Index(i).Child("vni"), int64(l2.VNI), v1alpha1.MinVNI, maxVNI)})
	}
	for i := range spec.VRFs {
		if vrf, ok := c.vrf(sp.Child("vrfs").Index(i), &spec.VRFs[i]); ok {
			cfg.VRFs = append(cfg.VRFs, vrf)
		}
	}
	for i := range spec.BGPPeers {
		cfg.Peerings = append(cfg.Peerings, c.peering(sp.Child("bgpPeers").Index(i), &spec.BGPPeers[i], passwords))
	}
	if err := validation.Join(c.errs); err != nil {
		return NodeConfig{}, fmt.Errorf("convert NodeNetworkConfig: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return NodeConfig{}, fmt.Errorf("convert NodeNetworkConfig: %w", err)
	}
	return cfg, nil
}

type converter struct{ errs field.ErrorList }

func (c *converter) add(path *field.Path, value any, format string, args ...any) {
	c.errs = append(c.errs, field.Invalid(path, value, fmt.Sprintf(format, args...)))
}

func (c *converter) u32(path *field.Path, v, lo, hi int64) uint32 {
	if v < lo || v > hi {
		c.add(path, v, "must be %d..%d", lo, hi)
		return 0
	}
	return uint32(v)
}

// asn checks an AS number by the shared rule (validation.ValidateASN); 0 when it is not one.
func (c *converter) asn(path *field.Path, v int64) uint32 {
	if errs := validation.ValidateASN(path, v); len(errs) > 0 {
		c.errs = append(c.errs, errs...)
		return 0
	}
	return uint32(v)
}

func (c *converter) addr(path *field.Path, s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil {
		c.add(path, s, "must be an IP address")
	}
	return a
}

func (c *converter) prefix(path *field.Path, s string) netip.Prefix {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		c.add(path, s, "must be a CIDR")
	}
	return p
}

func isClusterVRF(name string) bool {
	return name == "" || name == v1alpha1.DefaultVRFName || name == v1alpha1.ClusterVRFName
}

func (c *converter) underlay(path *field.Path, u *v1alpha1.UnderlaySpec) Underlay {
	out := Underlay{
		ASN:        c.asn(path.Child("asn"), u.ASN),
		RouterID:   c.addr(path.Child("routerID"), u.RouterID),
		VTEPSource: c.addr(path.Child("vtepAddress"), u.VTEPAddress),
	}
	listed := map[string]bool{}
	for i, n := range u.Neighbors {
		f := path.Child("neighbors").Index(i)
		nb := Neighbor{Interface: n.Interface, RemoteAS: n.RemoteASN}
		if n.Address != "" {
			nb.Address = c.addr(f.Child("address"), n.Address)
		}
		listed[n.Interface] = n.Interface != ""
		out.Neighbors = append(out.Neighbors, nb)
	}
	for _, ifname := range u.Interfaces {
		if !listed[ifname] {
			out.Neighbors = append(out.Neighbors, Neighbor{Interface: ifname, RemoteAS: RemoteASExternal})
			listed[ifname] = true
		}
	}
	return out
}

func (c *converter) vrf(path *field.Path, v *v1alpha1.NodeVRF) (VRF, bool) {
	if isClusterVRF(v.Name) {
		return VRF{}, false // FRR's default VRF: the underlay instance
	}
	out := VRF{
		Name:                  v1alpha1.VRFDevicePrefix + v.Name,
		VNI:                   c.u32(path.Child("vni"), int64(v.VNI), v1alpha1.MinVNI, maxVNI),
		RouteTargets:          slices.Clone(v.RouteTargets),
		RedistributeConnected: true,
	}
	for j, leak := range v.Leaks {
		lf := path.Child("leaks").Index(j)
		out.RouteConfigs = append(out.RouteConfigs, RouteConfig{
			Seq:         uint16(c.u32(lf.Child("seq"), int64(leak.Seq), v1alpha1.MinRouteMapSeq, v1alpha1.MaxRouteMapSeq)),
			Import:      c.items(lf.Child("import"), leak.Import),
			Export:      c.items(lf.Child("export"), leak.Export),
			Communities: slices.Clone(leak.Communities),
		})
	}
	for j, a := range v.Aggregates {
		out.Aggregates = append(out.Aggregates, c.prefix(path.Child("aggregates").Index(j), a))
	}
	return out, true
}

func (c *converter) items(path *field.Path, in []v1alpha1.NodePrefixItem) []PrefixItem {
	var out []PrefixItem
	for i, it := range in {
		f := path.Index(i)
		pi := PrefixItem{CIDR: c.prefix(f.Child("cidr"), it.CIDR), Action: Action(it.Action)}
		if errs := validation.ValidatePrefixSeq(f.Child("seq"), it.Seq); len(errs) > 0 {
			c.errs = append(c.errs, errs...)
		} else {
			pi.Seq = uint32(it.Seq)
		}
		if it.GE != nil {
			pi.GE = uint8(c.u32(f.Child("ge"), int64(*it.GE), 0, v1alpha1.MaxPrefixLen))
		}
		if it.LE != nil {
			pi.LE = uint8(c.u32(f.Child("le"), int64(*it.LE), 0, v1alpha1.MaxPrefixLen))
		}
		out = append(out, pi)
	}
	return out
}

func (c *converter) peering(path *field.Path, p *v1alpha1.NodeBGPPeer, passwords PasswordFunc) Peering {
	out := Peering{
		Name:      peerGroupName(p.Name),
		RemoteASN: c.asn(path.Child("remoteASN"), p.RemoteASN),
		Import:    c.items(path.Child("import"), p.Import),
		Export:    c.items(path.Child("export"), p.Export),
	}
	if !isClusterVRF(p.VRF) {
		out.VRF = v1alpha1.VRFDevicePrefix + p.VRF
	}
	for i, r := range p.ListenRanges {
		out.ListenRanges = append(out.ListenRanges, c.prefix(path.Child("listenRanges").Index(i), r))
	}
	for i, a := range p.Addresses {
		out.Neighbors = append(out.Neighbors, c.addr(path.Child("addresses").Index(i), a))
	}
	out.HoldTime = duration(p.HoldTime)
	out.KeepaliveTime = duration(p.KeepaliveTime)
	if p.MaximumPrefixes != nil {
		out.MaximumPrefixes = c.u32(path.Child("maximumPrefixes"), *p.MaximumPrefixes, v1alpha1.MinMaximumPrefixes, v1alpha1.MaxMaximumPrefixes)
	}
	out.BFD = p.EnableBFD
	if ref := p.PasswordSecretRef; ref != nil {
		refText := ref.Namespace + "/" + ref.Name + "[" + ref.Key + "]"
		switch {
		case passwords == nil:
			c.add(path.Child("passwordSecretRef"), refText, "no Secret reader given")
		default:
			pw, err := passwords(*ref)
			if err != nil {
				c.add(path.Child("passwordSecretRef"), refText, "read: %v", err)
			}
			out.Password = Secret(pw)
		}
	}
	return out
}

func duration(d *metav1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}

var peerNameBadRe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// peerGroupName makes an FRR peer-group name from a Kubernetes name: dots
// and other characters become '_', a leading non-letter gets "p_", and names
// longer than the limit keep a hash of the full name.
func peerGroupName(name string) string {
	n := peerNameBadRe.ReplaceAllString(name, "_")
	if n == "" || !(n[0] >= 'a' && n[0] <= 'z' || n[0] >= 'A' && n[0] <= 'Z') {
		n = "p_" + n
	}
	if len(n) > maxNameLen {
		sum := sha256.Sum256([]byte(name))
		n = strings.TrimRight(n[:maxNameLen-9], "_-") + "_" + hex.EncodeToString(sum[:4])
	}
	return n
}
