package frr

import (
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

	"github.com/network-operator/network-operator/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	cfg := NodeConfig{Underlay: c.underlay(&spec.Underlay)}
	for i := range spec.Layer2s {
		l2 := &spec.Layer2s[i]
		cfg.L2VNIs = append(cfg.L2VNIs, L2VNI{VNI: c.u32(fmt.Sprintf("spec.layer2s[%d].vni", i), int64(l2.VNI), 1, maxVNI)})
	}
	for i := range spec.VRFs {
		if vrf, ok := c.vrf(fmt.Sprintf("spec.vrfs[%d]", i), &spec.VRFs[i]); ok {
			cfg.VRFs = append(cfg.VRFs, vrf)
		}
	}
	for i := range spec.BGPPeers {
		cfg.Peerings = append(cfg.Peerings, c.peering(fmt.Sprintf("spec.bgpPeers[%d]", i), &spec.BGPPeers[i], passwords))
	}
	if len(c.errs) > 0 {
		return NodeConfig{}, fmt.Errorf("convert NodeNetworkConfig: %w", errors.Join(c.errs...))
	}
	if err := cfg.Validate(); err != nil {
		return NodeConfig{}, fmt.Errorf("convert NodeNetworkConfig: %w", err)
	}
	return cfg, nil
}

type converter struct{ errs []error }

func (c *converter) add(field string, value any, format string, args ...any) {
	c.errs = append(c.errs, &FieldError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)})
}

func (c *converter) u32(field string, v, lo, hi int64) uint32 {
	if v < lo || v > hi {
		c.add(field, v, "must be %d..%d", lo, hi)
		return 0
	}
	return uint32(v)
}

func (c *converter) addr(field, s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil {
		c.add(field, s, "must be an IP address")
	}
	return a
}

func (c *converter) prefix(field, s string) netip.Prefix {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		c.add(field, s, "must be a CIDR")
	}
	return p
}

func isClusterVRF(name string) bool {
	return name == "" || name == v1alpha1.DefaultVRFName || name == v1alpha1.ClusterVRFName
}

func (c *converter) underlay(u *v1alpha1.UnderlaySpec) Underlay {
	out := Underlay{
		ASN:        c.u32("spec.underlay.asn", u.ASN, 1, math.MaxUint32),
		RouterID:   c.addr("spec.underlay.routerID", u.RouterID),
		VTEPSource: c.addr("spec.underlay.vtepAddress", u.VTEPAddress),
	}
	listed := map[string]bool{}
	for i, n := range u.Neighbors {
		f := fmt.Sprintf("spec.underlay.neighbors[%d]", i)
		nb := Neighbor{Interface: n.Interface, RemoteAS: n.RemoteASN}
		if n.Address != "" {
			nb.Address = c.addr(f+".address", n.Address)
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

func (c *converter) vrf(field string, v *v1alpha1.NodeVRF) (VRF, bool) {
	if isClusterVRF(v.Name) {
		return VRF{}, false // FRR's default VRF: the underlay instance
	}
	out := VRF{
		Name:                  v1alpha1.VRFDevicePrefix + v.Name,
		VNI:                   c.u32(field+".vni", int64(v.VNI), 1, maxVNI),
		RouteTargets:          slices.Clone(v.RouteTargets),
		RedistributeConnected: true,
	}
	for j, leak := range v.Leaks {
		lf := fmt.Sprintf("%s.leaks[%d]", field, j)
		out.RouteConfigs = append(out.RouteConfigs, RouteConfig{
			Seq:         uint16(c.u32(lf+".seq", int64(leak.Seq), 1, defaultDeny-1)),
			Import:      c.items(lf+".import", leak.Import),
			Export:      c.items(lf+".export", leak.Export),
			Communities: slices.Clone(leak.Communities),
		})
	}
	for j, a := range v.Aggregates {
		out.Aggregates = append(out.Aggregates, c.prefix(fmt.Sprintf("%s.aggregates[%d]", field, j), a))
	}
	return out, true
}

func (c *converter) items(field string, in []v1alpha1.NodePrefixItem) []PrefixItem {
	var out []PrefixItem
	for i, it := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		pi := PrefixItem{
			CIDR:   c.prefix(f+".cidr", it.CIDR),
			Seq:    c.u32(f+".seq", it.Seq, 0, math.MaxUint32),
			Action: Action(it.Action),
		}
		if it.GE != nil {
			pi.GE = uint8(c.u32(f+".ge", int64(*it.GE), 0, 128))
		}
		if it.LE != nil {
			pi.LE = uint8(c.u32(f+".le", int64(*it.LE), 0, 128))
		}
		out = append(out, pi)
	}
	return out
}

func (c *converter) peering(field string, p *v1alpha1.NodeBGPPeer, passwords PasswordFunc) Peering {
	out := Peering{
		Name:      peerGroupName(p.Name),
		RemoteASN: c.u32(field+".remoteASN", p.RemoteASN, 1, math.MaxUint32-1),
		Import:    c.items(field+".import", p.Import),
		Export:    c.items(field+".export", p.Export),
	}
	if !isClusterVRF(p.VRF) {
		out.VRF = v1alpha1.VRFDevicePrefix + p.VRF
	}
	for i, r := range p.ListenRanges {
		out.ListenRanges = append(out.ListenRanges, c.prefix(fmt.Sprintf("%s.listenRanges[%d]", field, i), r))
	}
	for i, a := range p.Addresses {
		out.Neighbors = append(out.Neighbors, c.addr(fmt.Sprintf("%s.addresses[%d]", field, i), a))
	}
	out.HoldTime = duration(p.HoldTime)
	out.KeepaliveTime = duration(p.KeepaliveTime)
	if p.MaximumPrefixes != nil {
		out.MaximumPrefixes = c.u32(field+".maximumPrefixes", *p.MaximumPrefixes, 1, math.MaxUint32)
	}
	out.BFD = p.EnableBFD
	if ref := p.PasswordSecretRef; ref != nil {
		refText := ref.Namespace + "/" + ref.Name + "[" + ref.Key + "]"
		switch {
		case passwords == nil:
			c.add(field+".passwordSecretRef", refText, "no Secret reader given")
		default:
			pw, err := passwords(*ref)
			if err != nil {
				c.add(field+".passwordSecretRef", refText, "read: %v", err)
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
