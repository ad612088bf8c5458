package nodenet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ObserveIn reads every link of the namespace ns (0: the caller's own) through h, which must be a handle of ns,
// the global addresses and port flags of the owned ones, and the routes and rules tagged with routeProtocol. The
// port flags of every bridge port come from one dump instead of one query per port: the kernel answers netlink's
// per-port query (LinkGetProtinfo) with a dump of every port, so per port it was O(ports^2) - 2000 ports took
// seconds.
func ObserveIn(ctx context.Context, h *netlink.Handle, ns netns.NsHandle, routeProtocol uint8) (*Observed, error) {
	return observeRetrying(ctx, h, routeProtocol, func() (map[int]PortFlags, error) { return bridgePortFlags(ns) })
}

// dumper is what an observation reads through (*netlink.Handle).
type dumper interface {
	LinkList() ([]netlink.Link, error)
	AddrList(link netlink.Link, family int) ([]netlink.Addr, error)
	LinkGetProtinfo(link netlink.Link) (netlink.Protinfo, error)
	RouteListFiltered(family int, filter *netlink.Route, filterMask uint64) ([]netlink.Route, error)
	RuleList(family int) ([]netlink.Rule, error)
	NeighList(linkIndex, family int) ([]netlink.Neigh, error)
}

// dumpAttempts is how often an observation is read when the kernel interrupts a dump: it does when the table
// changes under the dump (NLM_F_DUMP_INTR; netlink returns the partial result with ErrDumpInterrupted), and a
// partial read must never be planned against. After the last attempt the error goes to the caller, which
// retries later (a transient error, not a fault of the spec).
const dumpAttempts = 4

func observeRetrying(ctx context.Context, h dumper, routeProtocol uint8, ports func() (map[int]PortFlags, error)) (*Observed, error) {
	for attempt := 1; ; attempt++ {
		o, err := observe(ctx, h, routeProtocol, ports)
		if err == nil || !errors.Is(err, netlink.ErrDumpInterrupted) || attempt == dumpAttempts {
			return o, err
		}
	}
}

func observe(ctx context.Context, h dumper, routeProtocol uint8, ports func() (map[int]PortFlags, error)) (*Observed, error) {
	if routeProtocol == 0 {
		routeProtocol = DefaultRouteProtocol
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	links, err := h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("observe: list links: %w", err)
	}
	names := make(map[int]string, len(links))
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	addrs, err := h.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("observe: list addresses: %w", err)
	}
	o := &Observed{}
	if o.Links, err = observeLinks(h, links, names, globalAddrs(addrs), ports); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.Routes, err = observeRoutes(h, routeProtocol, names); err != nil {
		return nil, err
	}
	if o.Rules, err = observeRules(h, routeProtocol); err != nil {
		return nil, err
	}
	return o, nil
}

// globalAddrs groups the global addresses by link index, in the order listed; link-local and host addresses
// are left out.
func globalAddrs(addrs []netlink.Addr) map[int][]Address {
	byLink := map[int][]Address{}
	for _, a := range addrs {
		if a.Scope != unix.RT_SCOPE_UNIVERSE || a.IPNet == nil {
			continue // link-local and host addresses belong to the kernel
		}
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		bits, _ := a.Mask.Size()
		byLink[a.LinkIndex] = append(byLink[a.LinkIndex], Address{
			Prefix:        netip.PrefixFrom(ip.Unmap(), bits),
			NoPrefixRoute: a.Flags&unix.IFA_F_NOPREFIXROUTE != 0,
		})
	}
	return byLink
}

// observeLinks builds every link's state: its sorted addresses (from byLink), and for owned links the bridge port
// flags (ports is dumped lazily, on the first owned bridge port) and a learning VXLAN's flood entries.
func observeLinks(h dumper, links []netlink.Link, names map[int]string, byLink map[int][]Address,
	ports func() (map[int]PortFlags, error)) ([]LinkState, error) {
	kinds := map[int]LinkKind{}
	for _, l := range links {
		kinds[l.Attrs().Index] = LinkKind(l.Type())
	}
	var out []LinkState
	var portFlags map[int]PortFlags
	var err error
	for _, l := range links {
		st := linkState(l, names)
		st.Addrs = byLink[st.Index]
		slices.SortFunc(st.Addrs, func(a, b Address) int { return strings.Compare(a.Prefix.String(), b.Prefix.String()) })
		if OwnedAlias(st.Alias) && st.Master != "" && kinds[l.Attrs().MasterIndex] == KindBridge {
			if portFlags == nil {
				if portFlags, err = ports(); err != nil {
					return nil, fmt.Errorf("observe: bridge port flags: %w", err)
				}
			}
			pf, ok := portFlags[st.Index]
			if !ok { // no dump, or a port that joined after it
				pi, err := h.LinkGetProtinfo(l)
				if err != nil {
					return nil, fmt.Errorf("observe: bridge port flags of %s: %w", st.Name, err)
				}
				pf = PortFlags{Learning: pi.Learning, NeighSuppress: pi.NeighSuppress}
			}
			st.Port = &pf
		}
		if OwnedAlias(st.Alias) && st.VXLAN != nil && st.VXLAN.Learning {
			if st.Flood, err = floodEntries(h, st.Index); err != nil {
				return nil, fmt.Errorf("observe: flood entries of %s: %w", st.Name, err)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// observeRoutes reads the routes of every table tagged with routeProtocol, in the kernel's order.
func observeRoutes(h dumper, routeProtocol uint8, names map[int]string) ([]RouteSpec, error) {
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL,
		&netlink.Route{Table: unix.RT_TABLE_UNSPEC, Protocol: netlink.RouteProtocol(routeProtocol)},
		netlink.RT_FILTER_TABLE|netlink.RT_FILTER_PROTOCOL)
	if err != nil {
		return nil, fmt.Errorf("observe: list routes of protocol %d: %w", routeProtocol, err)
	}
	var out []RouteSpec
	for _, r := range routes {
		rs, ok := routeSpec(r, names)
		if ok {
			out = append(out, rs)
		}
	}
	return out, nil
}

// observeRules reads the rules tagged with routeProtocol, in the kernel's order.
func observeRules(h dumper, routeProtocol uint8) ([]RuleSpec, error) {
	rules, err := h.RuleList(netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("observe: list rules: %w", err)
	}
	var out []RuleSpec
	for _, r := range rules {
		if r.Protocol != routeProtocol {
			continue
		}
		rs := RuleSpec{Priority: r.Priority, Family: r.Family, Iif: r.IifName, Oif: r.OifName, Table: uint32(r.Table)}
		if r.Src != nil {
			if addr, ok := netip.AddrFromSlice(r.Src.IP); ok {
				ones, _ := r.Src.Mask.Size()
				rs.Src = netip.PrefixFrom(addr.Unmap(), ones)
			}
		}
		out = append(out, rs)
	}
	return out, nil
}

func linkState(l netlink.Link, names map[int]string) LinkState {
	a := l.Attrs()
	st := LinkState{
		LinkSpec: LinkSpec{Name: a.Name, Kind: LinkKind(l.Type()), Alias: a.Alias, MTU: a.MTU, Master: names[a.MasterIndex]},
		Index:    a.Index,
		Up:       a.Flags&net.FlagUp != 0,
	}
	if len(a.HardwareAddr) > 0 {
		st.MAC = slices.Clone(a.HardwareAddr)
	}
	switch v := l.(type) {
	case *netlink.Vrf:
		st.Table = v.Table
	case *netlink.Vxlan:
		local, _ := netip.AddrFromSlice(v.SrcAddr)
		st.VXLAN = &VXLANSpec{VNI: uint32(v.VxlanId), Local: local.Unmap(), Port: v.Port, Dev: names[v.VtepDevIndex], Learning: v.Learning}
	case *netlink.Veth:
		// IFLA_LINK of a veth is its peer; only trust it when the peer is in this namespace.
		if a.NetNsID < 0 {
			st.PeerIndex = a.ParentIndex
		} else {
			st.PeerElsewhere = true
		}
	case *netlink.Vlan:
		st.VLAN = &VLANSpec{Parent: names[a.ParentIndex], ID: v.VlanId}
	}
	return st
}

func routeSpec(r netlink.Route, names map[int]string) (RouteSpec, bool) {
	if r.Dst == nil {
		// The default route: netlink leaves Dst nil.
		if r.Family == unix.AF_INET6 {
			r.Dst = &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}
		} else {
			r.Dst = &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}
		}
	}
	ip, ok := netip.AddrFromSlice(r.Dst.IP)
	if !ok {
		return RouteSpec{}, false
	}
	bits, _ := r.Dst.Mask.Size()
	rs := RouteSpec{Table: uint32(r.Table), Dst: netip.PrefixFrom(ip.Unmap(), bits), Dev: names[r.LinkIndex], Metric: uint32(r.Priority)}
	switch r.Type {
	case unix.RTN_UNICAST:
		rs.Type = RouteUnicast
	case unix.RTN_LOCAL:
		rs.Type = RouteLocal
	case unix.RTN_UNREACHABLE:
		rs.Type = RouteUnreachable
		rs.Dev = "" // the kernel reports lo for IPv6 unreachable routes
	default:
		rs.Type = RouteType(fmt.Sprintf("type-%d", r.Type))
	}
	if src, ok := netip.AddrFromSlice(r.Src); ok && rs.Dst.Addr().Is4() {
		rs.Src = src.Unmap()
	}
	return rs, true
}

// bridgePortFlags reads the flags of every bridge port of namespace ns (0: the caller's) with one AF_BRIDGE dump,
// by ifindex.
func bridgePortFlags(ns netns.NsHandle) (map[int]PortFlags, error) {
	if ns == 0 {
		ns = netns.None()
	}
	sock, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	defer sock.Close()
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: sock}}
	req.AddData(nl.NewIfInfomsg(unix.AF_BRIDGE))
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
	if err != nil {
		return nil, fmt.Errorf("dump bridge ports: %w", err) // an interrupted dump too: the plan is retried
	}
	out := make(map[int]PortFlags, len(msgs))
	for _, m := range msgs {
		l, err := netlink.LinkDeserialize(&unix.NlMsghdr{Type: unix.RTM_NEWLINK}, m)
		if err != nil {
			return nil, fmt.Errorf("bridge port: %w", err)
		}
		if pi := l.Attrs().Protinfo; pi != nil {
			out[l.Attrs().Index] = PortFlags{Learning: pi.Learning, NeighSuppress: pi.NeighSuppress}
		}
	}
	return out, nil
}

// floodEntries reads the peer VTEPs of a VXLAN's all-zero-MAC FDB entries (its own, "self"), sorted. Called for
// nodenet's VXLANs that learn only: static flooding is the only reason nodenet has for those entries there, so
// they are its own (an EVPN VXLAN's are zebra's and never read).
func floodEntries(h dumper, index int) ([]netip.Addr, error) {
	neighs, err := h.NeighList(index, unix.AF_BRIDGE)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, n := range neighs {
		if n.LinkIndex != index || n.Flags&unix.NTF_SELF == 0 || !bytes.Equal(n.HardwareAddr, zeroMAC) {
			continue
		}
		if a, ok := netip.AddrFromSlice(n.IP); ok && !slices.Contains(out, a.Unmap()) {
			out = append(out, a.Unmap())
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out, nil
}
