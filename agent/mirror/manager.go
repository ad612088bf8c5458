package mirror

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	tc "github.com/florianl/go-tc"
	"github.com/florianl/go-tc/core"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/nlwatch"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Filter priorities of the mirror filters, one per IP family (a tc priority holds one classifier of one
// protocol). They are below the eBPF router's legacy tc filter (loader.DefaultTCPriority 0xc0de), so a copy is
// taken before the router redirects the packet.
const (
	PriorityIPv4 uint16 = 0x6d04
	PriorityIPv6 uint16 = 0x6d06
)

// tcActUnspec is TC_ACT_UNSPEC ("continue"): classification goes on after the copy.
const tcActUnspec = ^uint32(0)

// tcaEgressMirror is TCA_EGRESS_MIRROR.
const tcaEgressMirror = 2

// Manager observes, plans and applies mirrors in one network namespace.
type Manager struct {
	h  *netlink.Handle
	ns netns.NsHandle

	mu sync.Mutex
	// unsupported remembers, per tunnel kind, why the kernel refused it (detected once).
	unsupported map[string]error

	// observed is the last observation, reused while no tc change is notified (WatchChanges).
	observed nlwatch.Memo[observation]
}

// observation is an Observed with the links it was made of.
type observation struct {
	links []Link
	obs   *Observed
}

// WatchChanges subscribes to the namespace's tc notifications: from then on a plan given the same links as the
// last one observes the qdiscs and filters only when one changed since (a dump of every qdisc of 4000 links
// took ~25 ms). stop ends the subscription.
func (m *Manager) WatchChanges() (stop func(), err error) {
	return m.observed.Start(m.ns, nlwatch.DefaultBuffer, nil, unix.RTNLGRP_TC)
}

// New returns a Manager working through h in namespace ns (0: the calling thread's).
func New(h *netlink.Handle, ns netns.NsHandle) *Manager {
	return &Manager{h: h, ns: ns, unsupported: map[string]error{}}
}

// Owned is one filter node of ours found on the node.
type Owned struct {
	Interface string
	Ifindex   int
	Ingress   bool
	Family    int
	Handle    uint32
	Cookie    []byte
}

func (o Owned) String() string {
	dir := "egress"
	if o.Ingress {
		dir = "ingress"
	}
	return fmt.Sprintf("%s %s ipv%d handle %#x", o.Interface, dir, o.Family, o.Handle)
}

// Observed is what the node has of ours: tunnels (name -> alias), filter nodes, and the interfaces that have a
// clsact qdisc.
type Observed struct {
	Tunnels map[string]string
	Filters []Owned
	Clsact  map[string]bool
}

// Plan is what Apply does: tunnels to create and delete, filter nodes to add and delete, and per mirror why
// it is left out.
type Plan struct {
	Desired struct {
		Tunnels []Tunnel
		Rules   []Rule
	}
	AddTunnels, DelTunnels []string // descriptions / device names
	addTunnels             []Tunnel
	AddClsact              []string
	AddRules               []Rule
	DelRules               []Owned
	// Problems are mirrors left out (not errors of the apply): a kernel without GRE, a missing source.
	Problems []Problem
}

// Empty reports whether applying changes nothing.
func (p *Plan) Empty() bool {
	return len(p.addTunnels) == 0 && len(p.DelTunnels) == 0 && len(p.AddRules) == 0 && len(p.DelRules) == 0
}

// Steps describe the plan, one line each, in apply order.
func (p *Plan) Steps() []string {
	var out []string
	for _, t := range p.addTunnels {
		out = append(out, "create "+t.String())
	}
	for _, c := range p.AddClsact {
		out = append(out, "add clsact qdisc to "+c)
	}
	for _, r := range p.AddRules {
		out = append(out, "add filter: "+r.String())
	}
	for _, o := range p.DelRules {
		out = append(out, "delete filter "+o.String())
	}
	for _, t := range p.DelTunnels {
		out = append(out, "delete tunnel "+t)
	}
	return out
}

// Plan computes the mirrors of spec (nd: nodenet's objects of the same spec) against the node.
func (m *Manager) Plan(ctx context.Context, spec *v1.NodeNetworkConfigSpec, nd *nodenet.Desired) (*Plan, error) {
	return m.plan(ctx, spec, nd, nil)
}

// Link is what the mirrors need to know of an interface of the node.
type Link struct {
	Name, Alias string
	Index       int
}

// PlanObserved is Plan with the node's interfaces as the caller observed them a moment ago (nodenet's
// observation of the same plan), instead of a dump of its own: 4000 interfaces cost tens of ms per dump.
func (m *Manager) PlanObserved(ctx context.Context, spec *v1.NodeNetworkConfigSpec, nd *nodenet.Desired, links []Link) (*Plan, error) {
	if links == nil {
		links = []Link{}
	}
	return m.plan(ctx, spec, nd, links)
}

func (m *Manager) plan(ctx context.Context, spec *v1.NodeNetworkConfigSpec, nd *nodenet.Desired, links []Link) (*Plan, error) {
	tunnels, probs := Tunnels(spec, nd)
	devices := map[string]string{}
	var keep []Tunnel
	m.mu.Lock()
	for _, t := range tunnels {
		if err := m.unsupported[t.Kind]; err != nil {
			for _, mi := range spec.Mirrors {
				if mi.Target.Name == t.Target {
					probs = append(probs, Problem{Mirror: mi.Name, Err: fmt.Errorf("target %s: %w", t.Target, err)})
				}
			}
			continue
		}
		keep = append(keep, t)
		devices[t.Target] = t.Device
	}
	m.mu.Unlock()
	rules, rprobs := Rules(spec, nd, devices)
	p, err := m.planFor(ctx, keep, rules, links)
	if err != nil {
		return nil, err
	}
	p.Problems = append(probs, rprobs...)
	return p, nil
}

// PlanFor plans exactly these tunnels and rules (a rule's TargetDevice is any device: the tunnel of its target,
// or one the caller provides).
func (m *Manager) PlanFor(ctx context.Context, tunnels []Tunnel, rules []Rule) (*Plan, error) {
	return m.planFor(ctx, tunnels, rules, nil)
}

func (m *Manager) planFor(ctx context.Context, tunnels []Tunnel, rules []Rule, links []Link) (*Plan, error) {
	obs, err := m.observe(ctx, links)
	if err != nil {
		return nil, err
	}
	p := &Plan{}
	p.Desired.Tunnels, p.Desired.Rules = tunnels, rules
	want := map[string]bool{}
	for _, t := range tunnels {
		want[t.Device] = true
		if obs.Tunnels[t.Device] != t.alias() {
			p.addTunnels = append(p.addTunnels, t)
			p.AddTunnels = append(p.AddTunnels, t.String())
		}
	}
	for name := range obs.Tunnels {
		if !want[name] {
			p.DelTunnels = append(p.DelTunnels, name)
		}
	}
	slices.Sort(p.DelTunnels)
	// A re-created tunnel gets a new ifindex: the filters mirroring into it are added again.
	recreated := map[string]bool{}
	for _, t := range p.addTunnels {
		recreated[t.Device] = true
	}
	have := map[string]bool{}
	for _, o := range obs.Filters {
		have[string(o.Cookie)] = true
	}
	wantCookies := map[string]bool{}
	clsact := map[string]bool{}
	for _, r := range rules {
		c := string(r.cookie())
		if wantCookies[c] {
			continue
		}
		wantCookies[c] = true
		if !have[c] || recreated[r.TargetDevice] {
			p.AddRules = append(p.AddRules, r)
			if !obs.Clsact[r.Interface] && !clsact[r.Interface] {
				clsact[r.Interface] = true
				p.AddClsact = append(p.AddClsact, r.Interface)
			}
		}
	}
	for _, o := range obs.Filters {
		if !wantCookies[string(o.Cookie)] {
			p.DelRules = append(p.DelRules, o)
			continue
		}
		for _, r := range p.AddRules {
			if bytes.Equal(r.cookie(), o.Cookie) {
				p.DelRules = append(p.DelRules, o) // replaced (its target was re-created)
				break
			}
		}
	}
	return p, nil
}

func (m *Manager) openTC() (*tc.Tc, error) {
	cfg := tc.Config{}
	if m.ns > 0 {
		cfg.NetNS = int(m.ns)
	}
	t, err := tc.Open(&cfg)
	if err != nil {
		return nil, fmt.Errorf("open rtnetlink for tc: %w", err)
	}
	return t, nil
}

func parent(ingress bool) uint32 {
	if ingress {
		return core.BuildHandle(tc.HandleRoot, tc.HandleMinIngress)
	}
	return core.BuildHandle(tc.HandleRoot, tc.HandleMinEgress)
}

func htons(v uint16) uint16 { return v>>8 | v<<8 }

func ethProto(family int) uint16 {
	if family == 6 {
		return unix.ETH_P_IPV6
	}
	return unix.ETH_P_IP
}

func priority(family int) uint16 {
	if family == 6 {
		return PriorityIPv6
	}
	return PriorityIPv4
}

// Observe reads our tunnels and filters.
func (m *Manager) Observe(ctx context.Context) (*Observed, error) { return m.observe(ctx, nil) }

// observe reads our filters, and our tunnels from links (nil: from a dump of the node's links).
func (m *Manager) observe(ctx context.Context, links []Link) (*Observed, error) {
	if links == nil {
		return m.observeTC(ctx, nil)
	}
	o, _, err := m.observed.Read(func() (observation, error) {
		obs, err := m.observeTC(ctx, links)
		return observation{links: slices.Clone(links), obs: obs}, err
	}, func(last observation) bool { return slices.Equal(links, last.links) })
	return o.obs, err
}

// observeTC reads the tunnels among links (nil: every link of the namespace) and the qdiscs and filters.
func (m *Manager) observeTC(ctx context.Context, links []Link) (*Observed, error) {
	obs := &Observed{Tunnels: map[string]string{}, Clsact: map[string]bool{}}
	if links == nil {
		nl, err := m.h.LinkList()
		if err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		links = make([]Link, 0, len(nl))
		for _, l := range nl {
			a := l.Attrs()
			links = append(links, Link{Name: a.Name, Alias: a.Alias, Index: a.Index})
		}
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Index] = l.Name
		if strings.HasPrefix(l.Alias, AliasPrefix) {
			obs.Tunnels[l.Name] = l.Alias
		}
	}
	t, err := m.openTC()
	if err != nil {
		return nil, err
	}
	defer t.Close()
	qdiscs, err := t.Qdisc().Get()
	if err != nil {
		return nil, fmt.Errorf("list qdiscs: %w", err)
	}
	for _, q := range qdiscs {
		if q.Kind != "clsact" {
			continue
		}
		name, ok := names[int(q.Ifindex)]
		if !ok {
			continue
		}
		obs.Clsact[name] = true
		for _, ingress := range []bool{true, false} {
			owned, err := m.owned(t, int(q.Ifindex), name, ingress)
			if err != nil {
				return nil, err
			}
			obs.Filters = append(obs.Filters, owned...)
		}
	}
	slices.SortFunc(obs.Filters, func(a, b Owned) int { return strings.Compare(a.String(), b.String()) })
	return obs, ctx.Err()
}

func (m *Manager) owned(t *tc.Tc, ifindex int, name string, ingress bool) ([]Owned, error) {
	fs, err := t.Filter().Get(&tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(ifindex), Parent: parent(ingress)})
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENODEV) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list filters of %s: %w", name, err)
	}
	var out []Owned
	for _, f := range fs {
		if f.Kind != "u32" || f.U32 == nil || f.U32.Actions == nil {
			continue
		}
		for _, a := range *f.U32.Actions {
			if a == nil || a.Cookie == nil || !bytes.HasPrefix(*a.Cookie, CookieMagic[:]) {
				continue
			}
			fam := 4
			if uint16(f.Info&0xffff) == htons(unix.ETH_P_IPV6) {
				fam = 6
			}
			out = append(out, Owned{Interface: name, Ifindex: ifindex, Ingress: ingress, Family: fam, Handle: f.Handle,
				Cookie: append([]byte{}, *a.Cookie...)})
			break
		}
	}
	return out, nil
}

// Result is what an Apply did.
type Result struct {
	// Problems are the plan's, plus the mirrors into tunnels the kernel refused (ErrNotSupported).
	Problems []Problem
}

// tunnelProblems are the problems of a tunnel the kernel refused: one per mirror whose rules go into it (the
// target's name when none does).
func tunnelProblems(rules []Rule, t Tunnel, err error) []Problem {
	var out []Problem
	seen := map[string]bool{}
	for _, r := range rules {
		if r.TargetDevice == t.Device && !seen[r.Mirror] {
			seen[r.Mirror] = true
			out = append(out, Problem{Mirror: r.Mirror, Err: fmt.Errorf("target %s: %w", t.Target, err)})
		}
	}
	if len(out) == 0 {
		out = append(out, Problem{Mirror: "target " + t.Target, Err: err})
	}
	return out
}

// Apply executes a plan: tunnels, then the filters mirroring into them (filters into a tunnel the kernel
// cannot create are left out and reported), then removals; a clsact qdisc left without any filter by the
// removals is deleted.
func (m *Manager) Apply(ctx context.Context, p *Plan) (*Result, error) {
	res := &Result{Problems: append([]Problem{}, p.Problems...)}
	failed := map[string]bool{}
	for _, t := range p.addTunnels {
		if err := m.ensureTunnel(t); err != nil {
			if !errors.Is(err, ErrNotSupported) {
				return res, err
			}
			failed[t.Device] = true
			res.Problems = append(res.Problems, tunnelProblems(p.Desired.Rules, t, err)...)
		}
	}
	t, err := m.openTC()
	if err != nil {
		return res, err
	}
	defer t.Close()
	for _, c := range p.AddClsact {
		if err := m.ensureClsact(t, c); err != nil {
			return res, err
		}
	}
	for _, r := range p.AddRules {
		if failed[r.TargetDevice] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := m.addRule(t, r); err != nil {
			return res, err
		}
	}
	touched := map[int]string{}
	for _, o := range p.DelRules {
		if err := deleteFilter(t, o); err != nil {
			return res, err
		}
		touched[o.Ifindex] = o.Interface
	}
	for _, name := range p.DelTunnels {
		l, err := m.h.LinkByName(name)
		if err != nil {
			continue // gone already
		}
		if err := m.h.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
			return res, fmt.Errorf("delete tunnel %s: %w", name, err)
		}
	}
	for idx, name := range touched {
		if err := removeEmptyClsact(t, idx, name); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (m *Manager) ensureClsact(t *tc.Tc, name string) error {
	l, err := m.h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("mirror source %s: %w", name, err)
	}
	q := tc.Object{
		Msg: tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(l.Attrs().Index), Handle: core.BuildHandle(tc.HandleRoot, 0),
			Parent: tc.HandleIngress},
		Attribute: tc.Attribute{Kind: "clsact"},
	}
	if err := t.Qdisc().Add(&q); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add clsact qdisc to %s: %w", name, err)
	}
	return nil
}

// be is a big-endian word as go-tc writes it (host order).
func be(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return binary.NativeEndian.Uint32(b[:])
}

func (m *Manager) addRule(t *tc.Tc, r Rule) error {
	src, err := m.h.LinkByName(r.Interface)
	if err != nil {
		return fmt.Errorf("mirror %s: source %s: %w", r.Mirror, r.Interface, err)
	}
	dst, err := m.h.LinkByName(r.TargetDevice)
	if err != nil {
		return fmt.Errorf("mirror %s: target device %s: %w", r.Mirror, r.TargetDevice, err)
	}
	keys := make([]tc.U32Key, 0, len(r.Keys))
	for _, k := range r.Keys {
		keys = append(keys, tc.U32Key{Mask: be(k.Mask), Val: be(k.Val & k.Mask), Off: uint32(k.Off)})
	}
	if len(keys) == 0 {
		keys = append(keys, tc.U32Key{}) // match all
	}
	cookie := r.cookie()
	actions := []*tc.Action{{
		Kind:   "mirred",
		Cookie: &cookie,
		Mirred: &tc.Mirred{Parms: &tc.MirredParam{Action: tcActUnspec, Eaction: tcaEgressMirror, IfIndex: uint32(dst.Attrs().Index)}},
	}}
	obj := tc.Object{
		Msg: tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(src.Attrs().Index), Parent: parent(r.Ingress),
			Info: uint32(priority(r.Family))<<16 | uint32(htons(ethProto(r.Family)))},
		Attribute: tc.Attribute{Kind: "u32", U32: &tc.U32{
			Sel:     &tc.U32Sel{Flags: 1 /* TC_U32_TERMINAL */, NKeys: uint8(len(keys)), Keys: keys},
			Actions: &actions,
		}},
	}
	if err := t.Filter().Add(&obj); err != nil {
		return fmt.Errorf("add filter (%s): %w", r, err)
	}
	return nil
}

func deleteFilter(t *tc.Tc, o Owned) error {
	obj := tc.Object{
		Msg: tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(o.Ifindex), Parent: parent(o.Ingress), Handle: o.Handle,
			Info: uint32(priority(o.Family))<<16 | uint32(htons(ethProto(o.Family)))},
		Attribute: tc.Attribute{Kind: "u32"},
	}
	if err := t.Filter().Delete(&obj); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("delete filter %s: %w", o, err)
	}
	return nil
}

// removeEmptyClsact deletes, on ifindex, our u32 classifiers (priorities PriorityIPv4/6) left without any filter
// node, then the clsact qdisc when no filter at all is left on it (an empty clsact does nothing for anybody).
func removeEmptyClsact(t *tc.Tc, ifindex int, name string) error {
	for _, ingress := range []bool{true, false} {
		fs, err := t.Filter().Get(&tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(ifindex), Parent: parent(ingress)})
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENODEV) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list filters of %s: %w", name, err)
		}
		left := 0
		for _, fam := range []int{4, 6} {
			info := uint32(priority(fam))<<16 | uint32(htons(ethProto(fam)))
			entries, nodes := 0, 0
			for _, f := range fs {
				if f.Info != info {
					continue
				}
				entries++
				if f.Kind != "u32" || f.Handle&0xfff != 0 {
					nodes++ // a filter node (or a foreign classifier at our priority)
				}
			}
			if entries == 0 || nodes > 0 {
				continue
			}
			left -= entries
			obj := tc.Object{Msg: tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(ifindex), Parent: parent(ingress), Info: info},
				Attribute: tc.Attribute{Kind: "u32"}}
			if err := t.Filter().Delete(&obj); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("delete empty u32 classifier prio %#x of %s: %w", priority(fam), name, err)
			}
		}
		if len(fs)+left > 0 {
			return nil
		}
	}
	q := tc.Object{
		Msg: tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(ifindex), Handle: core.BuildHandle(tc.HandleRoot, 0),
			Parent: tc.HandleIngress},
		Attribute: tc.Attribute{Kind: "clsact"},
	}
	if err := t.Qdisc().Delete(&q); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("delete empty clsact qdisc of %s: %w", name, err)
	}
	return nil
}
