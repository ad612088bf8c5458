// Package mirror applies a NodeNetworkConfig's mirrors (MirrorSelector + MirrorTarget, das-schiff's meaning):
// the traffic a selector picks is copied, by tc filters on the selected interfaces, into the GRE tunnel of its
// target. Like nodenet it computes what it wants (Tunnels, Rules), observes what it owns, plans the difference
// and applies it.
//
// The classifier is u32 (this project's kernels need not have flower or matchall), one filter node per
// (mirror, interface, direction, IP family[, IPv4 header length]), with a single mirred "egress mirror" action
// whose control is "continue": a copy goes to the target and the packet goes on to the next filter (the eBPF
// router's, a foreign one) exactly as without the mirror. Every action carries a cookie starting with
// CookieMagic; only such filters are ever deleted. Tunnels are links with the alias prefix AliasPrefix.
//
// Sources: a layer-2 network is mirrored on its 802.1Q trunk port when it has one (the workload-facing port,
// das-schiff's vlan.<id>), else on its VXLAN port; a VRF on its L3VNI VXLAN (das-schiff's vx.<vrf>). Direction
// is das-schiff's: ingress is traffic toward the node's workloads (arriving from the fabric on a VXLAN, leaving
// to the workloads on a trunk port), egress the other way.
package mirror

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// ErrNotSupported says the kernel lacks what a mirror needs (GRE, GRE TAP); the mirror is left out, the rest of
// the node's configuration is applied.
var ErrNotSupported = errors.New("not supported by this kernel")

// AliasPrefix marks the tunnels this package owns ("<AliasPrefix><target>:<hash of the tunnel's attributes>").
// It differs from nodenet.AliasPrefix, so nodenet never takes them for its own.
const AliasPrefix = "netop-mirror:"

// CookieMagic starts the tc action cookie of every filter this package owns; the rest of the 16-byte cookie is
// a hash of the rule.
var CookieMagic = [4]byte{'n', 'o', 'm', 'r'}

// Tunnel is the GRE device of a MirrorTarget on this node.
type Tunnel struct {
	Target string // MirrorTarget name
	Device string // link name
	Kind   string // "gretap" (l2gre) or "gre" (l3gre); ip6gretap/ip6gre for IPv6 collectors
	Remote netip.Addr
	Local  netip.Addr // invalid: chosen by routing (the source loopback has no address yet)
	Key    *uint32
	// VRF is the VRF device the tunnel is enslaved to and routes its packets in ("" default VRF).
	VRF string
	// Loopback is the source loopback's interface (in a VRF the tunnel's underlay device when it exists).
	Loopback string
}

func (t Tunnel) String() string {
	s := fmt.Sprintf("%s %s (target %s): remote %s", t.Kind, t.Device, t.Target, t.Remote)
	if t.Local.IsValid() {
		s += ", local " + t.Local.String()
	}
	if t.Key != nil {
		s += fmt.Sprintf(", key %d", *t.Key)
	}
	if t.VRF != "" {
		s += ", vrf " + t.VRF
	}
	return s
}

// alias is the tunnel's ownership mark; a changed attribute changes it (the tunnel is then re-created).
func (t Tunnel) alias() string {
	h := sha256.Sum256([]byte(t.String() + "|" + t.underlay()))
	return fmt.Sprintf("%s%s:%x", AliasPrefix, t.Target, h[:4])
}

// Key is one u32 key: the 32-bit word at Off bytes from the network header, masked, equals Val.
type Key struct {
	Off       int
	Val, Mask uint32
}

// Rule is one filter node: packets of Family on Interface in one direction, matching every key, are copied to
// TargetDevice.
type Rule struct {
	Mirror       string
	Interface    string
	Ingress      bool
	Family       int // 4 or 6
	Keys         []Key
	TargetDevice string
}

func (r Rule) direction() string {
	if r.Ingress {
		return "ingress"
	}
	return "egress"
}

func (r Rule) String() string {
	keys := make([]string, len(r.Keys))
	for i, k := range r.Keys {
		keys[i] = fmt.Sprintf("%08x/%08x@%d", k.Val, k.Mask, k.Off)
	}
	match := strings.Join(keys, " ")
	if match == "" {
		match = "all"
	}
	return fmt.Sprintf("mirror %s: %s %s ipv%d [%s] -> %s", r.Mirror, r.Interface, r.direction(), r.Family, match, r.TargetDevice)
}

// cookie identifies the rule (and marks it as ours).
func (r Rule) cookie() []byte {
	h := sha256.Sum256([]byte(r.String()))
	c := append([]byte{}, CookieMagic[:]...)
	return append(c, h[:12]...)
}

// Problem is a mirror left out, and why.
type Problem struct {
	Mirror string
	Err    error
}

func (p Problem) String() string { return fmt.Sprintf("mirror %s: %v", p.Mirror, p.Err) }

// DeviceName is the tunnel device of a MirrorTarget: "gm." + the name when it fits, else a hash.
func DeviceName(target string) string {
	if n := v1.MirrorTunnelPrefix + target; len(n) <= 15 && !strings.ContainsAny(target, "/: \t\n") {
		return n
	}
	h := sha256.Sum256([]byte(target))
	return fmt.Sprintf("gm.%x", h[:6])
}

// Tunnels are the GRE devices the spec's mirrors need, one per MirrorTarget; nd are nodenet's objects of the
// same spec (the VRF devices).
func Tunnels(spec *v1.NodeNetworkConfigSpec, nd *nodenet.Desired) ([]Tunnel, []Problem) {
	var out []Tunnel
	var probs []Problem
	seen := map[string]bool{}
	for _, m := range spec.Mirrors {
		t := m.Target
		if seen[t.Name] {
			continue
		}
		tun, err := tunnel(spec, nd, t)
		if err != nil {
			probs = append(probs, Problem{Mirror: m.Name, Err: fmt.Errorf("target %s: %w", t.Name, err)})
			continue
		}
		seen[t.Name] = true
		out = append(out, tun)
	}
	return out, probs
}

func tunnel(spec *v1.NodeNetworkConfigSpec, nd *nodenet.Desired, t v1.NodeMirrorTarget) (Tunnel, error) {
	remote, err := netip.ParseAddr(t.DestinationIP)
	if err != nil {
		return Tunnel{}, fmt.Errorf("destinationIP: %w", err)
	}
	tun := Tunnel{Target: t.Name, Device: DeviceName(t.Name), Remote: remote.Unmap(), Loopback: t.SourceLoopback}
	switch t.Type {
	case v1.MirrorTargetL2GRE:
		tun.Kind = "gretap"
	case v1.MirrorTargetL3GRE:
		tun.Kind = "gre"
	default:
		return Tunnel{}, fmt.Errorf("type %q: want %s or %s", t.Type, v1.MirrorTargetL2GRE, v1.MirrorTargetL3GRE)
	}
	if tun.Remote.Is6() {
		tun.Kind = "ip6" + tun.Kind
	}
	if t.Key != nil {
		if *t.Key < 0 || *t.Key > v1.MaxGREKey {
			return Tunnel{}, fmt.Errorf("key %d out of range", *t.Key)
		}
		k := uint32(*t.Key)
		tun.Key = &k
	}
	if t.VRF != "" && t.VRF != v1.DefaultVRFName {
		found := false
		for _, v := range nd.VRFs {
			if v.Name == t.VRF {
				tun.VRF, found = v.Device, true
			}
		}
		if !found {
			return Tunnel{}, fmt.Errorf("VRF %s is not on the node", t.VRF)
		}
	}
	for _, v := range spec.VRFs {
		if v.Name != t.VRF {
			continue
		}
		for _, l := range v.Loopbacks {
			if l.Name != t.SourceLoopback || l.Address == "" {
				continue
			}
			p, err := netip.ParsePrefix(l.Address)
			if err != nil {
				a, aerr := netip.ParseAddr(l.Address)
				if aerr != nil {
					return Tunnel{}, fmt.Errorf("loopback %s address %q: %w", l.Name, l.Address, err)
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			if p.Addr().Is4() != tun.Remote.Is4() {
				return Tunnel{}, fmt.Errorf("loopback %s address %s and destination %s are of different families", l.Name, l.Address, remote)
			}
			tun.Local = p.Addr()
		}
	}
	return tun, nil
}

// Rules are the filter nodes of the spec's mirrors; devices maps MirrorTarget names to the device the copies go
// to (normally the Tunnels' devices; a mirror whose target has none is a Problem). nd are nodenet's objects of
// the spec (the source interfaces).
func Rules(spec *v1.NodeNetworkConfigSpec, nd *nodenet.Desired, devices map[string]string) ([]Rule, []Problem) {
	var out []Rule
	var probs []Problem
	for _, m := range spec.Mirrors {
		rs, err := mirrorRules(m, nd, devices)
		if err != nil {
			probs = append(probs, Problem{Mirror: m.Name, Err: err})
			continue
		}
		out = append(out, rs...)
	}
	return out, probs
}

func mirrorRules(m v1.NodeMirror, nd *nodenet.Desired, devices map[string]string) ([]Rule, error) {
	dev, ok := devices[m.Target.Name]
	if !ok {
		return nil, fmt.Errorf("target %s has no device", m.Target.Name)
	}
	iface, workloadFacing, err := source(m, nd)
	if err != nil {
		return nil, err
	}
	var ingress bool
	switch m.Direction {
	case v1.MirrorIngress:
		ingress = !workloadFacing
	case v1.MirrorEgress:
		ingress = workloadFacing
	default:
		return nil, fmt.Errorf("direction %q: want %s or %s", m.Direction, v1.MirrorIngress, v1.MirrorEgress)
	}
	matches, err := Match(m.Match)
	if err != nil {
		return nil, err
	}
	out := make([]Rule, 0, len(matches))
	for _, mt := range matches {
		out = append(out, Rule{Mirror: m.Name, Interface: iface, Ingress: ingress, Family: mt.Family, Keys: mt.Keys, TargetDevice: dev})
	}
	return out, nil
}

// source is the interface a mirror hooks and whether it faces the workloads (then the tc direction is inverted).
func source(m v1.NodeMirror, nd *nodenet.Desired) (string, bool, error) {
	byAlias := map[string]string{}
	for _, l := range nd.Links {
		byAlias[l.Alias] = l.Name
	}
	switch {
	case m.Layer2 != "" && m.VRF != "":
		return "", false, errors.New("both layer2 and vrf are set")
	case m.Layer2 != "":
		if n, ok := byAlias[nodenet.Alias(nodenet.RoleVLAN, m.Layer2)]; ok {
			return n, true, nil
		}
		if n, ok := byAlias[nodenet.Alias(nodenet.RoleL2VXLAN, m.Layer2)]; ok {
			return n, false, nil
		}
		return "", false, fmt.Errorf("layer2 %s is not on the node", m.Layer2)
	case m.VRF != "":
		if n, ok := byAlias[nodenet.Alias(nodenet.RoleL3VXLAN, m.VRF)]; ok {
			return n, false, nil
		}
		return "", false, fmt.Errorf("vrf %s has no L3VNI VXLAN on the node (no VNI, or not on the node)", m.VRF)
	default:
		return "", false, errors.New("neither layer2 nor vrf is set")
	}
}

// FamilyMatch is the u32 match of one IP family: one key set, or one per IPv4 header length when ports are
// matched (the transport header's offset is fixed within each).
type FamilyMatch struct {
	Family int
	Keys   []Key
}

const (
	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
	protoSCTP   = 132
)

// Match translates a TrafficMatch into u32 key sets; a packet is selected when one set matches. IPv4: source
// and destination at 12 and 16, protocol at 9, ports after the header of its length (non-first fragments,
// which carry no ports, never match a port). IPv6: addresses at 8 and 24, the next header at 6 and ports at 40
// (a packet with extension headers before the transport header does not match a protocol or port).
func Match(tm v1.TrafficMatch) ([]FamilyMatch, error) {
	src, dst, err := matchPrefixes(tm)
	if err != nil {
		return nil, err
	}
	proto, fam, err := matchProtocol(tm.Protocol)
	if err != nil {
		return nil, err
	}
	ports := tm.SrcPort != nil || tm.DstPort != nil
	if ports && proto != protoTCP && proto != protoUDP && proto != protoSCTP {
		return nil, errors.New("ports need protocol tcp, udp or sctp")
	}
	if fam, err = prefixFamily(fam, src, dst); err != nil {
		return nil, err
	}
	var portKey Key
	if ports {
		if portKey, err = matchPorts(tm.SrcPort, tm.DstPort); err != nil {
			return nil, err
		}
	}
	var out []FamilyMatch
	if fam == 0 || fam == 4 {
		out = append(out, ipv4Matches(src, dst, proto, ports, portKey)...)
	}
	if fam == 0 || fam == 6 {
		out = append(out, ipv6Match(src, dst, proto, ports, portKey))
	}
	return out, nil
}

// matchPrefixes parses a TrafficMatch's source and destination prefixes; an unset one is the zero (invalid) prefix.
func matchPrefixes(tm v1.TrafficMatch) (src, dst netip.Prefix, err error) {
	if tm.SrcPrefix != nil {
		if src, err = netip.ParsePrefix(*tm.SrcPrefix); err != nil {
			return netip.Prefix{}, netip.Prefix{}, fmt.Errorf("srcPrefix: %w", err)
		}
	}
	if tm.DstPrefix != nil {
		if dst, err = netip.ParsePrefix(*tm.DstPrefix); err != nil {
			return netip.Prefix{}, netip.Prefix{}, fmt.Errorf("dstPrefix: %w", err)
		}
	}
	return src, dst, nil
}

// matchProtocol parses a protocol name or number: proto is -1 when unset, fam the IP family the protocol implies
// (4 or 6; 0: both).
func matchProtocol(protocol *string) (proto, fam int, err error) {
	proto = -1
	if protocol == nil {
		return proto, fam, nil
	}
	switch p := strings.ToLower(*protocol); p {
	case "tcp":
		proto = protoTCP
	case "udp":
		proto = protoUDP
	case "sctp":
		proto = protoSCTP
	case "icmp":
		proto, fam = protoICMP, 4
	case "icmpv6":
		proto, fam = protoICMPv6, 6
	default:
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 {
			return 0, 0, fmt.Errorf("protocol %q: want tcp, udp, sctp, icmp, icmpv6 or 0..255", *protocol)
		}
		proto = n
	}
	return proto, fam, nil
}

// prefixFamily narrows the IP family fam (0: both) to that of the set prefixes, rejecting a prefix of another
// family than fam or the other prefix.
func prefixFamily(fam int, src, dst netip.Prefix) (int, error) {
	for _, p := range []netip.Prefix{src, dst} {
		if !p.IsValid() {
			continue
		}
		pf := 4
		if p.Addr().Is6() {
			pf = 6
		}
		if fam != 0 && fam != pf {
			return 0, fmt.Errorf("prefix %s does not fit the other fields' IP family (IPv%d)", p, fam)
		}
		fam = pf
	}
	return fam, nil
}

// matchPorts is the key value and mask of the transport header's first word for the set ports: source port in
// the high half, destination port in the low half. Unset ports are not matched.
func matchPorts(srcPort, dstPort *int32) (Key, error) {
	var portKey Key
	for _, p := range []*int32{srcPort, dstPort} {
		if p != nil && (*p < 0 || *p > v1.MaxPort) {
			return Key{}, fmt.Errorf("port %d out of range", *p)
		}
	}
	if srcPort != nil {
		portKey.Val |= uint32(*srcPort) << 16
		portKey.Mask |= 0xffff0000
	}
	if dstPort != nil {
		portKey.Val |= uint32(*dstPort)
		portKey.Mask |= 0x0000ffff
	}
	return portKey, nil
}

// ipv4Matches are the IPv4 key sets: one, or with ports one per header length 5..15, each for first fragments
// only, with the ports after the header.
func ipv4Matches(src, dst netip.Prefix, proto int, ports bool, portKey Key) []FamilyMatch {
	var keys []Key
	keys = append(keys, prefixKeys(src, 12)...)
	keys = append(keys, prefixKeys(dst, 16)...)
	if proto >= 0 {
		keys = append(keys, Key{Off: 8, Val: uint32(proto) << 16, Mask: 0x00ff0000})
	}
	if !ports {
		return []FamilyMatch{{Family: 4, Keys: keys}}
	}
	var out []FamilyMatch
	for ihl := 5; ihl <= 15; ihl++ {
		k := append(append([]Key{}, keys...),
			Key{Off: 0, Val: uint32(ihl) << 24, Mask: 0x0f000000}, // header length
			Key{Off: 4, Val: 0, Mask: 0x00001fff},                 // first fragment
			Key{Off: 4 * ihl, Val: portKey.Val, Mask: portKey.Mask})
		out = append(out, FamilyMatch{Family: 4, Keys: k})
	}
	return out
}

// ipv6Match is the IPv6 key set, with the ports right after the fixed header.
func ipv6Match(src, dst netip.Prefix, proto int, ports bool, portKey Key) FamilyMatch {
	var keys []Key
	keys = append(keys, prefixKeys(src, 8)...)
	keys = append(keys, prefixKeys(dst, 24)...)
	if proto >= 0 {
		keys = append(keys, Key{Off: 4, Val: uint32(proto) << 8, Mask: 0x0000ff00})
	}
	if ports {
		keys = append(keys, Key{Off: 40, Val: portKey.Val, Mask: portKey.Mask})
	}
	return FamilyMatch{Family: 6, Keys: keys}
}

// prefixKeys matches prefix p at offset off (a /0 or no prefix matches anything: no key).
func prefixKeys(p netip.Prefix, off int) []Key {
	if !p.IsValid() || p.Bits() == 0 {
		return nil
	}
	b := p.Masked().Addr().AsSlice()
	var out []Key
	for i := 0; i*32 < p.Bits(); i++ {
		bits := min(p.Bits()-i*32, 32)
		mask := ^uint32(0) << (32 - bits)
		out = append(out, Key{Off: off + 4*i, Val: binary.BigEndian.Uint32(b[4*i:]) & mask, Mask: mask})
	}
	return out
}
