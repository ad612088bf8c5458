package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Topology describes what Build creates, in this order: namespaces, veth pairs and stand-in devices, MACs,
// sysctls, offloads, addresses, links up, routes, neighbours. Names of links are per namespace (each namespace
// has its own) and must be at most 15 bytes; namespace names are logical (at most 6 bytes) and get the lab's
// unique prefix.
type Topology struct {
	Namespaces []Namespace
	Veths      []Veth
	Devices    []Device
	Routes     []Route
	Neighbours []Neighbour
}

// Namespace is one network namespace, its sysctls (applied after every link exists, so per-device keys work)
// and addresses on its loopback device (e.g. a service address reachable over several links).
type Namespace struct {
	Name     string
	Sysctls  []Sysctl
	Loopback []string
}

// Sysctl is one key=value, key in dotted form.
type Sysctl struct{ Key, Value string }

// Port is one end of a veth pair, or a stand-in device.
type Port struct {
	NS    string   // logical namespace name
	Name  string   // interface name
	Addrs []string // CIDRs, v4 and v6 ("10.0.1.1/24", "fd00:1::1/64"); v6 ones skip DAD
	// NoPrefixRoute adds the addresses without their connected route in the main table, for routers whose routes
	// must live only in a numbered table.
	NoPrefixRoute bool
	MAC           string // optional; by default the lab assigns a unique 02:6c:... address
	MTU           int    // optional
	// Offloads are ethtool -K features, e.g. {"tx": false, "tso": false}.
	Offloads map[string]bool
}

// Veth is a veth pair; A and B may be in different namespaces.
type Veth struct{ A, B Port }

// DeviceKind names the kind of a stand-in device.
type DeviceKind string

// Device kinds. KindStandIn is a device that carries no traffic and exists for its per-device sysctls (e.g. the
// forwarding flag bpf_fib_lookup checks): a dummy when the kernel has one, otherwise an empty bridge.
const (
	KindStandIn DeviceKind = ""
	KindDummy   DeviceKind = "dummy"
	KindBridge  DeviceKind = "bridge"
)

// Device is a device that is not a veth (dummy or stand-in).
type Device struct {
	Port
	Kind DeviceKind
}

// RouteType is a kernel route type.
type RouteType string

// Route types.
const (
	Unicast     RouteType = ""
	Local       RouteType = "local"
	Blackhole   RouteType = "blackhole"
	Unreachable RouteType = "unreachable"
)

// Route is one route. Table 0 means main. A Local route for the router's own address in a numbered table lets
// a table lookup report "local" for traffic to the router itself, as kernel VRF tables do.
type Route struct {
	NS    string
	Table int
	Dst   string // CIDR, or "default" (v4) / "default6"
	Via   string // next hop; empty for on-link
	Dev   string // egress device; required for unicast and local routes
	Src   string // preferred source, optional
	Type  RouteType
}

// Neighbour is a permanent neighbour entry. MAC gives the address directly; MACOf names a "ns/ifname" whose
// address is used (typically the peer veth end).
type Neighbour struct {
	NS    string
	Dev   string
	IP    string
	MAC   string
	MACOf string
}

// Build creates the topology. On error the partly built objects are still removed at cleanup.
func (l *Lab) Build(ctx context.Context, t Topology) error {
	if err := t.validate(); err != nil {
		return err
	}
	for _, n := range t.Namespaces {
		if _, err := l.AddNamespace(n.Name); err != nil {
			return err
		}
	}
	for _, v := range t.Veths {
		if err := l.addVeth(v); err != nil {
			return err
		}
	}
	for _, d := range t.Devices {
		if err := l.addDevice(d); err != nil {
			return err
		}
	}
	ports := t.ports()
	for _, n := range t.Namespaces {
		ns := l.namespaces[n.Name]
		for _, s := range n.Sysctls {
			if err := ns.Sysctl(s.Key, s.Value); err != nil {
				return err
			}
		}
	}
	for _, p := range ports {
		if len(p.Offloads) > 0 {
			if err := l.namespaces[p.NS].SetOffloads(ctx, p.Name, p.Offloads); err != nil {
				return err
			}
		}
	}
	for _, p := range ports {
		ns := l.namespaces[p.NS]
		for _, a := range p.Addrs {
			if err := ns.AddAddr(p.Name, a, p.NoPrefixRoute); err != nil {
				return err
			}
		}
	}
	for _, n := range t.Namespaces {
		for _, a := range n.Loopback {
			if err := l.namespaces[n.Name].AddAddr("lo", a, false); err != nil {
				return err
			}
		}
	}
	for _, p := range ports {
		if err := l.namespaces[p.NS].setUp(p.Name); err != nil {
			return err
		}
	}
	for _, r := range t.Routes {
		if err := l.namespaces[r.NS].AddRoute(r); err != nil {
			return err
		}
	}
	for _, nb := range t.Neighbours {
		if err := l.addNeighbour(nb); err != nil {
			return err
		}
	}
	return nil
}

// MustBuild is Build failing the test on error.
func (l *Lab) MustBuild(ctx context.Context, t Topology) {
	if err := l.Build(ctx, t); err != nil {
		l.fatalf("build topology: %v", err)
	}
}

func (t Topology) ports() []Port {
	var ps []Port
	for _, v := range t.Veths {
		ps = append(ps, v.A, v.B)
	}
	for _, d := range t.Devices {
		ps = append(ps, d.Port)
	}
	return ps
}

// validate checks names before anything is created, so a typo does not leave a half-built topology behind.
func (t Topology) validate() error {
	nss := map[string]bool{}
	for _, n := range t.Namespaces {
		if nss[n.Name] {
			return fmt.Errorf("namespace %q: listed twice", n.Name)
		}
		nss[n.Name] = true
		for _, a := range n.Loopback {
			if _, err := netip.ParsePrefix(a); err != nil {
				return fmt.Errorf("loopback address %q of %s: %w", a, n.Name, err)
			}
		}
	}
	ifs := map[string]bool{}
	for _, p := range t.ports() {
		if !nss[p.NS] {
			return fmt.Errorf("port %s: unknown namespace %q", p.Name, p.NS)
		}
		if p.Name == "" || len(p.Name) > maxIfName || strings.ContainsAny(p.Name, "/ \t") {
			return fmt.Errorf("interface name %q in %s: want 1-%d bytes without '/' or spaces", p.Name, p.NS, maxIfName)
		}
		k := p.NS + "/" + p.Name
		if ifs[k] {
			return fmt.Errorf("interface %s: listed twice", k)
		}
		ifs[k] = true
		for _, a := range p.Addrs {
			if _, err := netip.ParsePrefix(a); err != nil {
				return fmt.Errorf("address %q of %s: %w", a, k, err)
			}
		}
		if p.MAC != "" {
			if _, err := net.ParseMAC(p.MAC); err != nil {
				return fmt.Errorf("mac %q of %s: %w", p.MAC, k, err)
			}
		}
	}
	for _, r := range t.Routes {
		if !nss[r.NS] {
			return fmt.Errorf("route %s: unknown namespace %q", r.Dst, r.NS)
		}
		if r.Dev != "" && !ifs[r.NS+"/"+r.Dev] && r.Dev != "lo" {
			return fmt.Errorf("route %s: unknown device %s/%s", r.Dst, r.NS, r.Dev)
		}
	}
	for _, nb := range t.Neighbours {
		if !ifs[nb.NS+"/"+nb.Dev] {
			return fmt.Errorf("neighbour %s: unknown device %s/%s", nb.IP, nb.NS, nb.Dev)
		}
		if (nb.MAC == "") == (nb.MACOf == "") {
			return fmt.Errorf("neighbour %s on %s/%s: set exactly one of MAC and MACOf", nb.IP, nb.NS, nb.Dev)
		}
		if nb.MACOf != "" && !ifs[nb.MACOf] {
			return fmt.Errorf("neighbour %s: MACOf names unknown interface %q (want ns/ifname)", nb.IP, nb.MACOf)
		}
	}
	return nil
}

func (l *Lab) portMAC(p Port) (net.HardwareAddr, error) {
	if p.MAC != "" {
		return net.ParseMAC(p.MAC)
	}
	return net.HardwareAddr(l.nextMAC()), nil
}

func (l *Lab) addVeth(v Veth) error {
	a, b := l.namespaces[v.A.NS], l.namespaces[v.B.NS]
	macA, err := l.portMAC(v.A)
	if err != nil {
		return err
	}
	macB, err := l.portMAC(v.B)
	if err != nil {
		return err
	}
	// The handle lives in A's namespace, so the pair is created there and B's end is created directly in B's
	// namespace: nothing ever appears in the caller's namespace, so names cannot clash with it.
	link := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: v.A.Name, HardwareAddr: macA, MTU: v.A.MTU},
		PeerName:         v.B.Name,
		PeerHardwareAddr: macB,
		PeerNamespace:    netlink.NsFd(int(b.handle)),
	}
	if err := a.nl.LinkAdd(link); err != nil {
		return fmt.Errorf("add veth %s/%s <-> %s/%s: %w", v.A.NS, v.A.Name, v.B.NS, v.B.Name, err)
	}
	if v.B.MTU != 0 {
		pl, err := b.Link(v.B.Name)
		if err != nil {
			return err
		}
		if err := b.nl.LinkSetMTU(pl, v.B.MTU); err != nil {
			return fmt.Errorf("set mtu of %s/%s: %w", v.B.NS, v.B.Name, err)
		}
	}
	return nil
}

func (l *Lab) addDevice(d Device) error {
	ns := l.namespaces[d.NS]
	mac, err := l.portMAC(d.Port)
	if err != nil {
		return err
	}
	attrs := netlink.LinkAttrs{Name: d.Name, HardwareAddr: mac, MTU: d.MTU}
	kind := d.Kind
	if kind == KindStandIn || kind == KindDummy {
		err := ns.nl.LinkAdd(&netlink.Dummy{LinkAttrs: attrs})
		if err == nil {
			return nil
		}
		if kind == KindDummy || !errors.Is(err, unix.EOPNOTSUPP) {
			return fmt.Errorf("add dummy %s/%s: %w", d.NS, d.Name, err)
		}
		kind = KindBridge // this kernel has no dummy driver
	}
	if kind != KindBridge {
		return fmt.Errorf("device %s/%s: unknown kind %q", d.NS, d.Name, d.Kind)
	}
	if err := ns.nl.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err != nil {
		return fmt.Errorf("add bridge %s/%s: %w", d.NS, d.Name, err)
	}
	return nil
}

// AddAddr adds an address (CIDR) to a link; IPv6 addresses skip duplicate address detection so they are usable
// at once.
func (n *Netns) AddAddr(dev, cidr string, noPrefixRoute bool) error {
	link, err := n.Link(dev)
	if err != nil {
		return err
	}
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		return fmt.Errorf("address %q: %w", cidr, err)
	}
	addr := &netlink.Addr{IPNet: prefixToIPNet(pfx)}
	if pfx.Addr().Is6() {
		addr.Flags |= unix.IFA_F_NODAD
	}
	if noPrefixRoute {
		addr.Flags |= unix.IFA_F_NOPREFIXROUTE
	}
	if err := n.nl.AddrAdd(link, addr); err != nil {
		return fmt.Errorf("add address %s to %s/%s: %w", cidr, n.Logical, dev, err)
	}
	return nil
}

// prefixToIPNet keeps the host bits (an interface address, not a network).
func prefixToIPNet(p netip.Prefix) *net.IPNet {
	a := p.Addr()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}

func parseDst(dst string) (*net.IPNet, int, error) {
	switch dst {
	case "default":
		return &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}, unix.AF_INET, nil
	case "default6":
		return &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}, unix.AF_INET6, nil
	}
	p, err := netip.ParsePrefix(dst)
	if err != nil {
		return nil, 0, fmt.Errorf("route destination %q: %w", dst, err)
	}
	p = p.Masked()
	fam := unix.AF_INET
	if p.Addr().Is6() {
		fam = unix.AF_INET6
	}
	return prefixToIPNet(p), fam, nil
}

// AddRoute adds one route to the namespace.
func (n *Netns) AddRoute(r Route) error {
	nr, err := n.netlinkRoute(r)
	if err != nil {
		return err
	}
	if err := n.nl.RouteAdd(nr); err != nil {
		return fmt.Errorf("add route %s in %s table %d: %w", r.String(), n.Logical, r.Table, err)
	}
	return nil
}

// DelRoute deletes one route from the namespace.
func (n *Netns) DelRoute(r Route) error {
	nr, err := n.netlinkRoute(r)
	if err != nil {
		return err
	}
	if err := n.nl.RouteDel(nr); err != nil {
		return fmt.Errorf("delete route %s in %s table %d: %w", r.String(), n.Logical, r.Table, err)
	}
	return nil
}

func (r Route) String() string {
	s := string(r.Type)
	if s == "" {
		s = "unicast"
	}
	s += " " + r.Dst
	if r.Via != "" {
		s += " via " + r.Via
	}
	if r.Dev != "" {
		s += " dev " + r.Dev
	}
	return s
}

func (n *Netns) netlinkRoute(r Route) (*netlink.Route, error) {
	dst, fam, err := parseDst(r.Dst)
	if err != nil {
		return nil, err
	}
	nr := &netlink.Route{Dst: dst, Family: fam, Table: r.Table, Scope: netlink.SCOPE_UNIVERSE}
	if r.Table == 0 {
		nr.Table = unix.RT_TABLE_MAIN
	}
	if r.Dev != "" {
		idx, err := n.Ifindex(r.Dev)
		if err != nil {
			return nil, err
		}
		nr.LinkIndex = idx
	}
	switch r.Type {
	case Unicast:
		nr.Type = unix.RTN_UNICAST
		if r.Via == "" {
			nr.Scope = netlink.SCOPE_LINK
		}
	case Local:
		nr.Type = unix.RTN_LOCAL
		nr.Scope = netlink.SCOPE_HOST
	case Blackhole:
		nr.Type = unix.RTN_BLACKHOLE
	case Unreachable:
		nr.Type = unix.RTN_UNREACHABLE
	default:
		return nil, fmt.Errorf("route %s: unknown type %q", r.Dst, r.Type)
	}
	if (r.Type == Unicast || r.Type == Local) && r.Dev == "" {
		return nil, fmt.Errorf("route %s: %s routes need Dev", r.Dst, r.String())
	}
	if r.Via != "" {
		gw, err := netip.ParseAddr(r.Via)
		if err != nil {
			return nil, fmt.Errorf("route %s: next hop %q: %w", r.Dst, r.Via, err)
		}
		nr.Gw = net.IP(gw.AsSlice())
	}
	if r.Src != "" {
		src, err := netip.ParseAddr(r.Src)
		if err != nil {
			return nil, fmt.Errorf("route %s: src %q: %w", r.Dst, r.Src, err)
		}
		nr.Src = net.IP(src.AsSlice())
	}
	return nr, nil
}

func (l *Lab) addNeighbour(nb Neighbour) error {
	var mac net.HardwareAddr
	var err error
	if nb.MAC != "" {
		mac, err = net.ParseMAC(nb.MAC)
	} else {
		nsName, dev, _ := strings.Cut(nb.MACOf, "/")
		mac, err = l.namespaces[nsName].MAC(dev)
	}
	if err != nil {
		return fmt.Errorf("neighbour %s: %w", nb.IP, err)
	}
	return l.namespaces[nb.NS].AddNeighbour(nb.Dev, nb.IP, mac)
}

// AddNeighbour adds (or replaces) a permanent neighbour entry.
func (n *Netns) AddNeighbour(dev, ip string, mac net.HardwareAddr) error {
	idx, err := n.Ifindex(dev)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return fmt.Errorf("neighbour address %q: %w", ip, err)
	}
	fam := unix.AF_INET
	if a.Is6() {
		fam = unix.AF_INET6
	}
	nb := &netlink.Neigh{
		LinkIndex:    idx,
		Family:       fam,
		State:        netlink.NUD_PERMANENT,
		IP:           net.IP(a.AsSlice()),
		HardwareAddr: mac,
	}
	if err := n.nl.NeighSet(nb); err != nil {
		return fmt.Errorf("add neighbour %s lladdr %s dev %s in %s: %w", ip, mac, dev, n.Logical, err)
	}
	return nil
}

// SetOffloads switches ethtool features (ethtool -K) on a link, in a deterministic order.
func (n *Netns) SetOffloads(ctx context.Context, dev string, features map[string]bool) error {
	keys := make([]string, 0, len(features))
	for k := range features {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	args := []string{"-K", dev}
	for _, k := range keys {
		v := "off"
		if features[k] {
			v = "on"
		}
		args = append(args, k, v)
	}
	if _, err := n.Output(ctx, "ethtool", args...); err != nil {
		return fmt.Errorf("set offloads of %s/%s: %w", n.Logical, dev, err)
	}
	return nil
}
