package nodenet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/nlwatch"
	"github.com/network-operator/network-operator/api/v1alpha1"
)

// Manager plans and applies node network configuration in one network namespace.
type Manager struct {
	h *netlink.Handle
	s Settings

	mu       sync.Mutex
	features *Features

	// observed is the last read of the namespace, reused while no change is notified (WatchChanges).
	observed nlwatch.Memo[*Observed]
	// memo is the last plan, reused for the same spec on an unchanged node.
	pmu  sync.Mutex
	memo *planMemo
}

// planMemo is a plan with what it was computed from: Desired is a pure function of the spec (settings and
// features do not change), ComputePlan of Desired and the observation.
type planMemo struct {
	specHash string
	desired  *Desired
	observed *Observed
	plan     *Plan
}

// New returns a Manager working through h (a handle of the target namespace; nil: a new handle in the calling
// thread's namespace). Settings are checked and defaulted here.
func New(h *netlink.Handle, s Settings) (*Manager, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	if h == nil {
		if h, err = netlink.NewHandle(); err != nil {
			return nil, fmt.Errorf("netlink handle: %w", err)
		}
	}
	return &Manager{h: h, s: s}, nil
}

// Settings returns the defaulted settings.
func (m *Manager) Settings() Settings { return m.s }

// Features probes the kernel once and caches the answer.
func (m *Manager) Features(ctx context.Context) (Features, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.features != nil {
		return *m.features, nil
	}
	f, err := Probe(ctx, m.h)
	if err != nil {
		return f, err
	}
	m.features = &f
	return f, nil
}

// Desired builds the desired state of a spec with the manager's settings and the kernel's features.
func (m *Manager) Desired(ctx context.Context, spec *v1alpha1.NodeNetworkConfigSpec) (*Desired, error) {
	f, err := m.Features(ctx)
	if err != nil {
		return nil, err
	}
	return BuildDesired(spec, m.s, f)
}

// WatchChanges subscribes to the namespace's change notifications: from then on Observe reads the namespace
// only when it changed since the last read, and hands out that read otherwise (the agent's periodic resync of
// a quiet node). stop ends the subscription; Observe then reads every time again.
func (m *Manager) WatchChanges() (stop func(), err error) {
	return m.observed.Start(m.s.NetNS, nlwatch.DefaultBuffer, func(msg *syscall.NetlinkMessage) bool {
		return concernsObserve(msg, m.s.RouteProtocol)
	}, observeGroups()...)
}

// Observe reads the namespace's current state, with the segmentation offload state of the owned bridges. With
// WatchChanges it returns the last read when no change was notified since it began (reused: true); the
// Observed returned is shared then and must not be modified.
func (m *Manager) Observe(ctx context.Context) (o *Observed, reused bool, err error) {
	return m.observed.Read(func() (*Observed, error) { return m.observe(ctx) }, nil)
}

func (m *Manager) observe(ctx context.Context) (*Observed, error) {
	o, err := ObserveIn(ctx, m.h, m.s.NetNS, m.s.RouteProtocol)
	if err != nil {
		return nil, err
	}
	var e *ethtool
	for i := range o.Links {
		l := &o.Links[i]
		if l.Kind != KindBridge || !OwnedAlias(l.Alias) {
			continue
		}
		if e == nil {
			if e, err = openEthtool(m.s.NetNS); err != nil {
				return nil, fmt.Errorf("observe: %w", err)
			}
			defer e.Close()
		}
		if l.Segmentation, err = e.segmentation(l.Name, l.Index); err != nil {
			l.SegmentationErr = err.Error()
		}
	}
	return o, nil
}

// Plan computes the actions that bring the namespace to spec; it changes nothing. For the spec of the last
// plan on a node that notified no change since (WatchChanges), that plan is the answer again (shared: not to
// be modified).
func (m *Manager) Plan(ctx context.Context, spec *v1alpha1.NodeNetworkConfigSpec) (*Plan, error) {
	key := lastapplied.SpecHash(spec)
	d, err := m.DesiredFor(ctx, key, spec)
	if err != nil {
		return nil, err
	}
	return m.PlanDesired(ctx, key, d)
}

// DesiredFor is Desired for the spec whose lastapplied.SpecHash is key: the objects of the last plan's spec when
// it is the same (a quiet node's resync translates nothing again).
func (m *Manager) DesiredFor(ctx context.Context, key string, spec *v1alpha1.NodeNetworkConfigSpec) (*Desired, error) {
	m.pmu.Lock()
	memo := m.memo
	m.pmu.Unlock()
	if memo != nil && memo.specHash == key {
		return memo.desired, nil
	}
	return m.Desired(ctx, spec)
}

// PlanDesired computes the actions that bring the namespace to d, the objects of the spec whose
// lastapplied.SpecHash is key (DesiredFor); it changes nothing. Like Plan, it hands out the last plan again for
// the same spec on a node that notified no change since.
func (m *Manager) PlanDesired(ctx context.Context, key string, d *Desired) (*Plan, error) {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	o, reused, err := m.Observe(ctx)
	if err != nil {
		return nil, err
	}
	if memo := m.memo; reused && memo != nil && memo.specHash == key && memo.observed == o {
		return memo.plan, nil
	}
	p := ComputePlan(d, o)
	p.Observed, p.Ifindexes, p.Links, p.ObservedReused = o.Counts(), o.Ifindexes(), o.Links, reused
	// The memo's plan says it reused the observation: it is only handed out again for a reused one.
	memoPlan := *p
	memoPlan.ObservedReused = true
	m.memo = &planMemo{specHash: key, desired: d, observed: o, plan: &memoPlan}
	return p, nil
}

// Result says what one Apply call did.
type Result struct {
	Phase Phase
	// Done are the actions that succeeded, in order.
	Done []Action
	// Failed is the action that failed (nil on success); the actions after it were not attempted.
	Failed Action
}

// Apply executes the plan's actions of one phase, in order, and stops at the first failure, returning an
// *ActionError that names the object. A plan with conflicts is refused before anything is changed. To recover
// from a failure, plan the last good spec again and apply every phase.
func (m *Manager) Apply(ctx context.Context, p *Plan, ph Phase) (*Result, error) {
	res := &Result{Phase: ph}
	if err := p.Err(); err != nil {
		return res, fmt.Errorf("apply phase %s: plan has conflicts, nothing applied: %w", ph, err)
	}
	a := &applier{h: m.h, proto: p.Desired.RouteProtocol, ns: m.s.NetNS}
	if a.proto == 0 {
		a.proto = m.s.RouteProtocol
	}
	for _, act := range p.PhaseActions(ph) {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("apply phase %s: %w", ph, err)
		}
		if err := act.apply(a); err != nil {
			res.Failed = act
			return res, &ActionError{Action: act, Err: err}
		}
		res.Done = append(res.Done, act)
	}
	return res, nil
}

// applier runs actions against one namespace.
type applier struct {
	h     *netlink.Handle
	proto uint8
	ns    netns.NsHandle // for ethtool ioctls
}

func (a *applier) link(name string) (netlink.Link, error) {
	l, err := a.h.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	return l, nil
}

func (a *applier) index(name string) (int, error) {
	if name == "" {
		return 0, nil
	}
	l, err := a.link(name)
	if err != nil {
		return 0, err
	}
	return l.Attrs().Index, nil
}

// ownedLink returns the named link after checking nodenet still owns it.
func (a *applier) ownedLink(name string) (netlink.Link, error) {
	l, err := a.link(name)
	if err != nil {
		return nil, err
	}
	if OwnedAlias(l.Attrs().Alias) {
		return l, nil
	}
	if v, ok := l.(*netlink.Veth); ok && v.Attrs().ParentIndex != 0 {
		if peer, err := a.h.LinkByIndex(v.Attrs().ParentIndex); err == nil && OwnedAlias(peer.Attrs().Alias) {
			return l, nil
		}
	}
	return nil, fmt.Errorf("%w: %s has alias %q", ErrNotOwned, name, l.Attrs().Alias)
}

func (c *createLink) apply(a *applier) error {
	s := c.Link
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.Alias, attrs.MTU = s.Name, s.Alias, s.MTU
	if s.MAC != nil {
		attrs.HardwareAddr = s.MAC
	}
	var err error
	if attrs.MasterIndex, err = a.index(s.Master); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	var l netlink.Link
	switch s.Kind {
	case KindVRF:
		l = &netlink.Vrf{LinkAttrs: attrs, Table: s.Table}
	case KindBridge:
		l = &netlink.Bridge{LinkAttrs: attrs}
	case KindDummy:
		l = &netlink.Dummy{LinkAttrs: attrs}
	case KindVXLAN:
		v := s.VXLAN
		if v == nil {
			return fmt.Errorf("vxlan %s: no vxlan attributes", s.Name)
		}
		dev, err := a.index(v.Dev)
		if err != nil {
			return fmt.Errorf("vtep device: %w", err)
		}
		l = &netlink.Vxlan{LinkAttrs: attrs, VxlanId: int(v.VNI), SrcAddr: net.IP(v.Local.AsSlice()), Port: v.Port,
			Learning: v.Learning, VtepDevIndex: dev}
	case KindVeth:
		l = &netlink.Veth{LinkAttrs: attrs, PeerName: s.Peer, PeerMTU: uint32(s.MTU)}
	case KindVLAN:
		if s.VLAN == nil {
			return fmt.Errorf("vlan %s: no vlan attributes", s.Name)
		}
		if attrs.ParentIndex, err = a.index(s.VLAN.Parent); err != nil {
			return fmt.Errorf("parent: %w", err)
		}
		l = &netlink.Vlan{LinkAttrs: attrs, VlanId: s.VLAN.ID}
	default:
		return fmt.Errorf("link %s: unknown kind %q", s.Name, s.Kind)
	}
	if err := a.h.LinkAdd(l); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			switch s.Kind {
			case KindVRF:
				return fmt.Errorf("%w: %w", ErrVRFNotSupported, err)
			case KindVLAN:
				return fmt.Errorf("%w: %w", ErrVLANNotSupported, err)
			case KindDummy:
				return fmt.Errorf("%w: %w", ErrDummyNotSupported, err)
			}
		}
		return err
	}
	// The kernel ignores IFLA_IFALIAS when creating a link: mark it right away, and take it back if that fails,
	// so no unmarked link with our name stays behind.
	created, err := a.link(s.Name)
	if err != nil {
		return fmt.Errorf("created link: %w", err)
	}
	if err := a.h.LinkSetAlias(created, s.Alias); err != nil {
		if derr := a.h.LinkDel(created); derr != nil {
			return fmt.Errorf("set alias %q: %w (and removing the link again failed: %v)", s.Alias, err, derr)
		}
		return fmt.Errorf("set alias %q: %w", s.Alias, err)
	}
	if s.Kind == KindVeth {
		peer, err := a.link(s.Peer)
		if err != nil {
			return fmt.Errorf("veth peer: %w", err)
		}
		if err := a.h.LinkSetAlias(peer, s.PeerAlias); err != nil {
			return fmt.Errorf("set alias of veth peer %s: %w", s.Peer, err)
		}
	}
	return nil
}

func (d *deleteLink) apply(a *applier) error {
	l, err := a.ownedLink(d.Name)
	if errors.As(err, new(netlink.LinkNotFoundError)) {
		return nil // already gone (e.g. the peer of a deleted veth)
	}
	if err != nil {
		return err
	}
	return a.h.LinkDel(l)
}

func (s *setAlias) apply(a *applier) error {
	l, err := a.ownedLink(s.Name)
	if err != nil {
		return err
	}
	return a.h.LinkSetAlias(l, s.To)
}

func (s *setMTU) apply(a *applier) error {
	l, err := a.ownedLink(s.Name)
	if err != nil {
		return err
	}
	return a.h.LinkSetMTU(l, s.To)
}

func (s *setMAC) apply(a *applier) error {
	l, err := a.ownedLink(s.Name)
	if err != nil {
		return err
	}
	return a.h.LinkSetHardwareAddr(l, s.To)
}

func (s *setMaster) apply(a *applier) error {
	l, err := a.ownedLink(s.Name)
	if err != nil {
		return err
	}
	if s.To == "" {
		return a.h.LinkSetNoMaster(l)
	}
	idx, err := a.index(s.To)
	if err != nil {
		return err
	}
	return a.h.LinkSetMasterByIndex(l, idx)
}

func (s *setPortFlags) apply(a *applier) error {
	l, err := a.ownedLink(s.Name)
	if err != nil {
		return err
	}
	if err := a.h.LinkSetLearning(l, s.To.Learning); err != nil {
		return fmt.Errorf("learning %s: %w", onOff(s.To.Learning), err)
	}
	if err := a.h.LinkSetBrNeighSuppress(l, s.To.NeighSuppress); err != nil {
		return fmt.Errorf("neigh_suppress %s: %w", onOff(s.To.NeighSuppress), err)
	}
	return nil
}

func (s *setUp) apply(a *applier) error {
	l, err := a.ownedLink(s.Name)
	if err != nil {
		return err
	}
	return a.h.LinkSetUp(l)
}

func nlAddr(ad Address) *netlink.Addr {
	p := ad.Prefix
	na := &netlink.Addr{IPNet: &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
	if p.Addr().Is6() {
		na.Flags |= unix.IFA_F_NODAD // the gateway address is usable at once (anycast: every node has it)
	}
	if ad.NoPrefixRoute {
		na.Flags |= unix.IFA_F_NOPREFIXROUTE
	}
	return na
}

func (ad *addAddr) apply(a *applier) error {
	l, err := a.ownedLink(ad.Link)
	if err != nil {
		return err
	}
	return a.h.AddrReplace(l, nlAddr(ad.Addr))
}

func (d *delAddr) apply(a *applier) error {
	l, err := a.ownedLink(d.Link)
	if err != nil {
		return err
	}
	return a.h.AddrDel(l, nlAddr(d.Addr))
}

func (a *applier) nlRoute(r RouteSpec) (*netlink.Route, error) {
	p := r.Dst
	nr := &netlink.Route{
		Table:    int(r.Table),
		Dst:      &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())},
		Family:   r.family(),
		Protocol: netlink.RouteProtocol(a.proto),
		Priority: int(r.Metric),
	}
	switch r.Type {
	case RouteUnicast:
		nr.Type, nr.Scope = unix.RTN_UNICAST, netlink.SCOPE_LINK
	case RouteLocal:
		nr.Type, nr.Scope = unix.RTN_LOCAL, netlink.SCOPE_HOST
	case RouteUnreachable:
		nr.Type, nr.Scope = unix.RTN_UNREACHABLE, netlink.SCOPE_UNIVERSE
	default:
		return nil, fmt.Errorf("route type %q", r.Type)
	}
	if r.Dev != "" {
		idx, err := a.index(r.Dev)
		if err != nil {
			return nil, err
		}
		nr.LinkIndex = idx
	}
	if r.Src.IsValid() {
		nr.Src = net.IP(r.Src.AsSlice())
	}
	return nr, nil
}

func (r *replaceRoute) apply(a *applier) error {
	nr, err := a.nlRoute(r.Route)
	if err != nil {
		return err
	}
	return a.h.RouteReplace(nr)
}

func (d *delRoute) apply(a *applier) error {
	nr := &netlink.Route{
		Table:    int(d.Route.Table),
		Dst:      &net.IPNet{IP: net.IP(d.Route.Dst.Addr().AsSlice()), Mask: net.CIDRMask(d.Route.Dst.Bits(), d.Route.Dst.Addr().BitLen())},
		Family:   d.Route.family(),
		Protocol: netlink.RouteProtocol(a.proto),
		Priority: int(d.Route.Metric),
	}
	// The kernel matches type and scope when given, and netlink gives unicast and universe by default: a local
	// route is only found with its own type, and any scope with "nowhere" (what ip route del sends).
	nr.Scope = netlink.SCOPE_NOWHERE
	switch d.Route.Type {
	case RouteLocal:
		nr.Type = unix.RTN_LOCAL
	case RouteUnreachable:
		nr.Type = unix.RTN_UNREACHABLE
	}
	err := a.h.RouteDel(nr)
	if errors.Is(err, unix.ESRCH) {
		return nil // already gone with its device
	}
	return err
}

func (a *applier) nlRule(r RuleSpec) *netlink.Rule {
	nr := netlink.NewRule()
	nr.Priority, nr.Family, nr.Table = r.Priority, r.Family, int(r.Table)
	nr.IifName, nr.OifName = r.Iif, r.Oif
	if r.Src.IsValid() {
		nr.Src = &net.IPNet{IP: net.IP(r.Src.Addr().AsSlice()), Mask: net.CIDRMask(r.Src.Bits(), r.Src.Addr().BitLen())}
	}
	nr.Protocol = a.proto
	return nr
}

func (ad *addRule) apply(a *applier) error { return a.h.RuleAdd(a.nlRule(ad.Rule)) }

func (d *delRule) apply(a *applier) error {
	err := a.h.RuleDel(a.nlRule(d.Rule))
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

func (s *setSegmentation) apply(a *applier) error {
	l, err := a.ownedLink(s.Name)
	if err != nil {
		return err
	}
	e, err := openEthtool(a.ns)
	if err != nil {
		return err
	}
	defer e.Close()
	base, marked := splitSegMark(l.Attrs().Alias)
	var mark []string
	if s.Off {
		done, err := e.setSegmentation(s.Name, l.Attrs().Index, s.Features, false)
		if err != nil {
			return err
		}
		// What it turned off now joins what it turned off before (and is still off).
		mark = append(slices.Clone(marked), done...)
	}
	if !s.Off && len(s.Features) > 0 {
		if _, err := e.setSegmentation(s.Name, l.Attrs().Index, s.Features, true); err != nil {
			return err
		}
	}
	if alias := withSegMark(base, mark); alias != l.Attrs().Alias {
		return a.h.LinkSetAlias(l, alias)
	}
	return nil
}

// floodNeigh is the all-zero-MAC FDB entry of the VXLAN with ifindex index towards peer.
func floodNeigh(index int, peer netip.Addr) *netlink.Neigh {
	return &netlink.Neigh{LinkIndex: index, Family: unix.AF_BRIDGE, State: netlink.NUD_PERMANENT, Flags: netlink.NTF_SELF,
		HardwareAddr: zeroMAC, IP: net.IP(peer.AsSlice())}
}

func (f *addFlood) apply(a *applier) error {
	l, err := a.ownedLink(f.Link)
	if err != nil {
		return err
	}
	return a.h.NeighAppend(floodNeigh(l.Attrs().Index, f.Peer))
}

func (f *delFlood) apply(a *applier) error {
	l, err := a.ownedLink(f.Link)
	if err != nil {
		return err
	}
	err = a.h.NeighDel(floodNeigh(l.Attrs().Index, f.Peer))
	if errors.Is(err, unix.ENOENT) {
		return nil // already gone
	}
	return err
}
