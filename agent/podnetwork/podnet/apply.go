package podnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/netnsrun"
)

var (
	// ErrHostNetns: the namespace given as the pod's is the host's own (a hostNetwork pod): the agent never
	// configures it.
	ErrHostNetns = errors.New("the pod's network namespace is the host's")
	// ErrNotOwned: an action found a link it was about to change no longer marked as the agent's.
	ErrNotOwned = errors.New("link is not the agent's")
)

// Options configure an Applier.
type Options struct {
	// Store keeps the per-pod records (required).
	Store *podrecords.Store
	// HostNS is the namespace of the host handle (0: the agent's own), to refuse it as a pod's.
	HostNS netns.NsHandle
	// SysctlDir is the sysctl root written from inside pods' namespaces (default DefaultSysctlDir; a container
	// whose own /proc/sys is read-only mounts the host's elsewhere).
	SysctlDir string
	// RouteProtocol tags the routes in pods (default DefaultRouteProtocol).
	RouteProtocol uint8
}

// Applier plans and applies pods' network configuration from the host's namespace.
type Applier struct {
	host *netlink.Handle
	o    Options

	mu       sync.Mutex
	features *Features
}

// New returns an Applier working through host, a netlink handle of the host's (node's) namespace.
func New(host *netlink.Handle, o Options) (*Applier, error) {
	if host == nil || o.Store == nil {
		return nil, errors.New("podnet: a host handle and a store are required")
	}
	if o.SysctlDir == "" {
		o.SysctlDir = DefaultSysctlDir
	}
	if o.RouteProtocol == 0 {
		o.RouteProtocol = DefaultRouteProtocol
	}
	return &Applier{host: host, o: o}, nil
}

// Features probes the kernel's 802.1Q support once (nodenet's probe: the kernel's answer to an invalid request).
func (a *Applier) Features(ctx context.Context) (Features, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.features != nil {
		return *a.features, nil
	}
	f, err := nodenet.Probe(ctx, a.host)
	if err != nil {
		return Features{}, fmt.Errorf("probe link kinds: %w", err)
	}
	a.features = &Features{VLAN: f.VLAN, VLANReason: f.VLANReason}
	return *a.features, nil
}

// podHandle opens a netlink handle in the pod's namespace (nil without one) after refusing the host's.
func (a *Applier) podHandle(podNS netns.NsHandle) (*netlink.Handle, error) {
	if podNS <= 0 {
		return nil, nil
	}
	host := a.o.HostNS
	if host <= 0 {
		own, err := netns.Get()
		if err != nil {
			return nil, fmt.Errorf("own network namespace: %w", err)
		}
		defer own.Close()
		host = own
	}
	if podNS.Equal(host) {
		return nil, ErrHostNetns
	}
	h, err := netlink.NewHandleAt(podNS)
	if err != nil {
		return nil, fmt.Errorf("netlink handle in the pod's namespace: %w", err)
	}
	return h, nil
}

// Plan builds the pod's desired state (with the kernel's features), observes the pod in podNS (<= 0: its
// namespace is gone: only the host side) and the host, and computes the plan. It changes nothing.
func (a *Applier) Plan(ctx context.Context, in Input, podNS netns.NsHandle) (*Plan, error) {
	f, err := a.Features(ctx)
	if err != nil {
		return nil, err
	}
	in.Features = f
	rec, err := a.o.Store.Load(in.Pod.UID)
	if err != nil {
		return nil, err
	}
	if in.Pod.Name == "" && rec != nil {
		in.Pod.Namespace, in.Pod.Name = rec.Namespace, rec.Name // a pod known only by its UID (collection, cleanup)
	}
	d := BuildDesired(in)
	ph, err := a.podHandle(podNS)
	if err != nil {
		return nil, err
	}
	if ph != nil {
		defer ph.Close()
	}
	o, err := observe(ctx, a.target(ph, podNS), d, rec)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", in.Pod, err)
	}
	return ComputePlan(d, o), nil
}

func (a *Applier) target(ph *netlink.Handle, podNS netns.NsHandle) target {
	return target{host: a.host, pod: ph, podNS: podNS, sysctlDir: a.o.SysctlDir, proto: a.o.RouteProtocol}
}

// Result says what one Apply did.
type Result struct {
	// Done are the actions that succeeded, in order; Failed the one that failed (nil: none), after which
	// nothing more was attempted.
	Done   []Action
	Failed Action
}

// ActionError is the failure of one action, naming it.
type ActionError struct {
	Action Action
	Err    error
}

func (e *ActionError) Error() string { return fmt.Sprintf("%s: %v", e.Action, e.Err) }

func (e *ActionError) Unwrap() error { return e.Err }

// Apply runs the plan's actions in order in podNS (the namespace the plan was made for) and on the host, and
// stops at the first failure with an *ActionError. podrecords holds the old and new record together while it runs,
// and the new one after success, so a crash in between forgets nothing.
func (a *Applier) Apply(ctx context.Context, p *Plan, podNS netns.NsHandle) (*Result, error) {
	res := &Result{}
	uid := p.Desired.Pod.UID
	if !sameRecord(p.Prev, p.Record) {
		merged := podrecords.Merge(p.Prev, p.Record)
		if err := a.o.Store.Save(merged); err != nil {
			return res, fmt.Errorf("pod %s: %w", p.Desired.Pod, err)
		}
	}
	ph, err := a.podHandle(podNS)
	if err != nil {
		return res, err
	}
	if ph != nil {
		defer ph.Close()
	}
	r := &runner{target: a.target(ph, podNS), uid: uid}
	for _, act := range p.Actions {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("pod %s: %w", p.Desired.Pod, err)
		}
		if err := act.apply(r); err != nil {
			res.Failed = act
			return res, &ActionError{Action: act, Err: err}
		}
		res.Done = append(res.Done, act)
	}
	if !sameRecord(p.Prev, p.Record) {
		if err := a.o.Store.Save(p.Record); err != nil {
			return res, fmt.Errorf("pod %s: %w", p.Desired.Pod, err)
		}
	}
	return res, nil
}

// Pods lists the UIDs of the pods the agent has anything of on the host: a record, or a link marked as theirs.
func (a *Applier) Pods(ctx context.Context) ([]string, error) {
	uids, err := a.o.Store.UIDs()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, u := range uids {
		seen[u] = true
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	links, err := a.host.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list host links: %w", err)
	}
	for _, l := range links {
		if uid, _, ok := ParseAlias(l.Attrs().Alias); ok && !seen[uid] {
			seen[uid] = true
			uids = append(uids, uid)
		}
	}
	return uids, nil
}

// runner executes actions.
type runner struct {
	target
	uid string
}

func (r *runner) handle(s side) (*netlink.Handle, error) {
	if s == onHost {
		return r.host, nil
	}
	if r.pod == nil {
		return nil, errors.New("the pod's network namespace is gone")
	}
	return r.pod, nil
}

// owned returns the named link after checking it is the pod's (alias with the pod's UID); allowUnmarked also
// accepts a link without any alias (a veth's pod end being adopted).
func (r *runner) owned(s side, name string, allowUnmarked bool) (netlink.Link, error) {
	h, err := r.handle(s)
	if err != nil {
		return nil, err
	}
	l, err := h.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s link %s: %w", s, name, err)
	}
	alias := l.Attrs().Alias
	if uid, _, ok := ParseAlias(alias); (ok && uid == r.uid) || (allowUnmarked && alias == "") {
		return l, nil
	}
	return nil, fmt.Errorf("%w: %s %s has alias %q", ErrNotOwned, s, name, alias)
}

func (r *runner) index(s side, name string) (int, error) {
	h, err := r.handle(s)
	if err != nil {
		return 0, err
	}
	l, err := h.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("%s link %s: %w", s, name, err)
	}
	return l.Attrs().Index, nil
}

func (c *createLink) apply(r *runner) error {
	l := c.Link
	switch l.Kind {
	case v1.PodInterfaceVeth:
		return c.veth(r)
	case v1.PodInterfaceMACVLAN:
		br, err := r.index(onHost, l.Bridge)
		if err != nil {
			return err
		}
		attrs := netlink.LinkAttrs{Name: l.Name, MTU: l.MTU, HardwareAddr: l.MAC, ParentIndex: br,
			Namespace: netlink.NsFd(r.podNS)}
		// Created from the host (the parent is there) directly inside the pod's namespace.
		if err := r.host.LinkAdd(&netlink.Macvlan{LinkAttrs: attrs, Mode: nlMacvlanMode(l.Mode)}); err != nil {
			return err
		}
	case v1.PodInterfaceVLAN:
		parent, err := r.index(inPod, l.Parent)
		if err != nil {
			return fmt.Errorf("parent: %w", err)
		}
		err = r.pod.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: l.Name, MTU: l.MTU, ParentIndex: parent}, VlanId: l.VLAN})
		if errors.Is(err, unix.EOPNOTSUPP) {
			return fmt.Errorf("%w: %w", nodenet.ErrVLANNotSupported, err)
		}
		if err != nil {
			return err
		}
	case v1.PodInterfaceBridge:
		if err := r.pod.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: l.Name, MTU: l.MTU}}); err != nil {
			return err
		}
	default:
		return fmt.Errorf("interface %s: unknown kind %q", l.Name, l.Kind)
	}
	return r.mark(inPod, l.Name, c.Alias, nil)
}

// mark sets the alias of a link just made; when that fails the link is deleted again (and undo, if set, runs),
// so no unmarked link of ours stays.
func (r *runner) mark(s side, name, alias string, undo func() error) error {
	h, err := r.handle(s)
	if err != nil {
		return err
	}
	l, err := h.LinkByName(name)
	if err == nil {
		err = h.LinkSetAlias(l, alias)
		if err == nil {
			return nil
		}
		err = fmt.Errorf("set alias %q of %s %s: %w", alias, s, name, err)
		if derr := h.LinkDel(l); derr != nil {
			err = errors.Join(err, fmt.Errorf("and removing it again: %w", derr))
		}
	} else {
		err = fmt.Errorf("created %s link %s: %w", s, name, err)
	}
	if undo != nil {
		if uerr := undo(); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}
	return err
}

// veth makes the pair from the host: the host end with its name, the pod end directly in the pod's namespace,
// then marks both and makes the host end a port of the network's bridge.
func (c *createLink) veth(r *runner) error {
	l := c.Link
	br, err := r.index(onHost, l.Bridge)
	if err != nil {
		return err
	}
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: l.HostName, MTU: l.MTU}, PeerName: l.Name,
		PeerHardwareAddr: l.MAC, PeerNamespace: netlink.NsFd(r.podNS), PeerMTU: uint32(l.MTU)}
	if err := r.host.LinkAdd(v); err != nil {
		return err
	}
	if err := r.mark(onHost, l.HostName, c.Alias, nil); err != nil {
		return err
	}
	delHost := func() error {
		h, err := r.host.LinkByName(l.HostName)
		if err != nil {
			return nil
		}
		return r.host.LinkDel(h)
	}
	if err := r.mark(inPod, l.Name, c.Alias, delHost); err != nil {
		return err
	}
	host, err := r.host.LinkByName(l.HostName)
	if err != nil {
		return err
	}
	if err := r.host.LinkSetMasterByIndex(host, br); err != nil {
		return fmt.Errorf("host end %s: master %s: %w", l.HostName, l.Bridge, err)
	}
	return nil
}

func (d *deleteLink) apply(r *runner) error {
	l, err := r.owned(d.Side, d.Name, false)
	if errors.As(err, new(netlink.LinkNotFoundError)) {
		return nil // gone already (with its peer, parent or namespace)
	}
	if err != nil {
		return err
	}
	h, _ := r.handle(d.Side)
	if err := h.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
		return err
	}
	return nil
}

func (s *setAlias) apply(r *runner) error {
	l, err := r.owned(s.Side, s.Name, true)
	if err != nil {
		return err
	}
	h, _ := r.handle(s.Side)
	return h.LinkSetAlias(l, s.To)
}

// primaryLink returns a link the agent tunes without owning it: the primary interface, never one marked as
// another pod's or as nodenet's.
func (r *runner) primaryLink(name string) (netlink.Link, error) {
	if r.pod == nil {
		return nil, errors.New("the pod's network namespace is gone")
	}
	l, err := r.pod.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("pod link %s: %w", name, err)
	}
	return l, nil
}

func (s *setMTU) apply(r *runner) error {
	var l netlink.Link
	var err error
	if s.Primary {
		l, err = r.primaryLink(s.Name) // tuning or restoring the primary interface
	} else {
		l, err = r.owned(s.Side, s.Name, false)
	}
	if err != nil {
		return err
	}
	h, _ := r.handle(s.Side)
	return h.LinkSetMTU(l, s.To)
}

func (s *setTxQueueLen) apply(r *runner) error {
	l, err := r.primaryLink(s.Name)
	if err != nil {
		return err
	}
	return r.pod.LinkSetTxQLen(l, s.To)
}

func (s *setMAC) apply(r *runner) error {
	l, err := r.owned(inPod, s.Name, false)
	if err != nil {
		return err
	}
	return r.pod.LinkSetHardwareAddr(l, s.To)
}

func (s *setMaster) apply(r *runner) error {
	l, err := r.owned(s.Side, s.Name, false)
	if err != nil {
		return err
	}
	h, _ := r.handle(s.Side)
	if s.To == "" {
		return h.LinkSetNoMaster(l)
	}
	idx, err := r.index(s.Side, s.To)
	if err != nil {
		return err
	}
	return h.LinkSetMasterByIndex(l, idx)
}

func (s *setUp) apply(r *runner) error {
	l, err := r.owned(s.Side, s.Name, false)
	if err != nil {
		return err
	}
	h, _ := r.handle(s.Side)
	return h.LinkSetUp(l)
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func nlAddr(p netip.Prefix) *netlink.Addr {
	a := &netlink.Addr{IPNet: ipNet(p)}
	if p.Addr().Is6() {
		a.Flags |= unix.IFA_F_NODAD // the operator allocated it to this pod alone: usable at once
	}
	return a
}

func (a *addAddr) apply(r *runner) error {
	l, err := r.owned(inPod, a.Link, false)
	if err != nil {
		return err
	}
	return r.pod.AddrReplace(l, nlAddr(a.Addr))
}

func (d *delAddr) apply(r *runner) error {
	l, err := r.owned(inPod, d.Link, false)
	if err != nil {
		return err
	}
	if err := r.pod.AddrDel(l, nlAddr(d.Addr)); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
		return err
	}
	return nil
}

func (r *runner) nlRoute(rt Route) (*netlink.Route, error) {
	nr := &netlink.Route{Table: unix.RT_TABLE_MAIN, Dst: ipNet(rt.Dst), Protocol: netlink.RouteProtocol(r.proto),
		Priority: int(rt.Metric), Family: unix.AF_INET, Type: unix.RTN_UNICAST, Scope: netlink.SCOPE_UNIVERSE}
	if rt.Dst.Addr().Is6() {
		nr.Family = unix.AF_INET6
	}
	if rt.Gateway.IsValid() {
		nr.Gw = net.IP(rt.Gateway.AsSlice())
	} else {
		nr.Scope = netlink.SCOPE_LINK
	}
	if rt.Dev != "" {
		idx, err := r.index(inPod, rt.Dev)
		if err != nil {
			return nil, err
		}
		nr.LinkIndex = idx
	}
	return nr, nil
}

func (a *addRoute) apply(r *runner) error {
	nr, err := r.nlRoute(a.Route)
	if err != nil {
		return err
	}
	if a.From != nil {
		return r.pod.RouteReplace(nr) // the agent's own route
	}
	return r.pod.RouteAdd(nr) // exclusive: never replaces a route that is not the agent's
}

func (d *delRoute) apply(r *runner) error {
	nr := &netlink.Route{Table: unix.RT_TABLE_MAIN, Dst: ipNet(d.Route.Dst), Protocol: netlink.RouteProtocol(r.proto),
		Priority: int(d.Route.Metric), Family: unix.AF_INET, Scope: netlink.SCOPE_NOWHERE}
	if d.Route.Dst.Addr().Is6() {
		nr.Family = unix.AF_INET6
	}
	if err := r.pod.RouteDel(nr); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	return nil
}

func (s *setSysctl) apply(r *runner) error {
	if r.pod == nil {
		return errors.New("the pod's network namespace is gone")
	}
	return netnsrun.Run(r.podNS, func() error {
		return os.WriteFile(sysctlPath(r.sysctlDir, s.Name), []byte(s.To), 0o644)
	})
}

func (d *delNeigh) apply(r *runner) error {
	idx, err := r.index(onHost, d.Dev)
	if err != nil {
		return err
	}
	n := &netlink.Neigh{LinkIndex: idx, Family: unix.AF_INET, IP: net.IP(d.IP.AsSlice())}
	if d.IP.Is6() {
		n.Family = unix.AF_INET6
	}
	if err := r.host.NeighDel(n); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

func (a *addFDB) apply(r *runner) error {
	idx, err := r.index(onHost, a.Port)
	if err != nil {
		return err
	}
	return r.host.NeighSet(&netlink.Neigh{LinkIndex: idx, Family: unix.AF_BRIDGE, Flags: netlink.NTF_MASTER,
		State: netlink.NUD_NOARP, HardwareAddr: a.MAC, Vlan: a.VLAN})
}

func (d *delFDB) apply(r *runner) error {
	idx, err := r.index(onHost, d.Port)
	if errors.As(err, new(netlink.LinkNotFoundError)) {
		return nil // its entries went with the port
	}
	if err != nil {
		return err
	}
	n := &netlink.Neigh{LinkIndex: idx, Family: unix.AF_BRIDGE, Flags: netlink.NTF_MASTER, HardwareAddr: d.MAC, Vlan: d.VLAN}
	if err := r.host.NeighDel(n); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}
