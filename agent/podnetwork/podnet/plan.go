package podnet

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Plan is the ordered list of actions that brings one pod, and the host objects that are its, to the desired
// state, with what cannot be applied.
type Plan struct {
	Desired *Desired
	// Actions in the order they run: links re-created, created and updated (each after what it needs),
	// addresses, links up, routes, sysctls, primary tuning; then removals (routes, restored sysctls and tuning,
	// links in reverse order, the host's neighbour and FDB entries of removed interfaces).
	Actions []Action
	// Problems found while planning (names held by objects the agent does not own, missing bridges), by config.
	Problems map[string][]Problem
	// Links are the desired links that exist once the plan ran (kept or created; not those left out).
	Links []Link
	// Record is what podrecords remembers once the plan ran; Prev what it remembered before.
	Record, Prev *podrecords.Record
	// Settle: a veth's host end joins its bridge in this plan or was not seen in it and up; its static FDB entry
	// comes with the next plan, which should follow in SettleAfter (staticFDB).
	Settle bool
}

// SettleAfter is how soon a plan with Settle is followed by the next: zebra has long handled the port's link
// events by then (milliseconds).
const SettleAfter = 2 * time.Second

// Empty reports whether the plan changes nothing, in the kernel or in podrecords.
func (p *Plan) Empty() bool { return len(p.Actions) == 0 && sameRecord(p.Prev, p.Record) }

func sameRecord(a, b *podrecords.Record) bool {
	if a.Empty() || b.Empty() {
		return a.Empty() && b.Empty()
	}
	return reflect.DeepEqual(a, b)
}

// ConfigProblems returns every problem of one config: from its spec (Desired) and from planning.
func (p *Plan) ConfigProblems(config string) []Problem {
	var out []Problem
	for _, c := range p.Desired.Configs {
		if c.Name == config {
			out = append(out, c.Problems...)
		}
	}
	return append(out, p.Problems[config]...)
}

// String renders the plan for humans: one numbered action per line, then what is not applied.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s:\n", p.Desired.Pod)
	switch {
	case len(p.Actions) == 0 && !sameRecord(p.Prev, p.Record):
		b.WriteString("  no changes in the kernel; the pod's record is updated\n")
	case len(p.Actions) == 0:
		b.WriteString("  no changes\n")
	}
	for i, a := range p.Actions {
		fmt.Fprintf(&b, "  %3d. %s\n", i+1, a)
	}
	for _, c := range p.Desired.Configs {
		for _, pr := range p.ConfigProblems(c.Name) {
			fmt.Fprintf(&b, "  not applied (PodNetworkConfig %s): %s\n", c.Name, pr)
		}
	}
	return b.String()
}

// planner holds the state of one ComputePlan.
type planner struct {
	d   *Desired
	o   *Observed
	p   *Plan
	uid string
	// links are the desired links that will exist after the plan (not left out by a problem).
	links []Link
	// fresh are the links the plan creates (new or re-created): nothing observed of them counts.
	fresh map[string]bool
	// gone are pod links the plan deletes (re-created or removed); hostGone host links.
	gone, hostGone map[string]bool
	// unavailable are desired links left out while planning, with the reason.
	unavailable map[string]string

	recreate, create, update, addrs, up, fdb, routes, sysctls, primary []Action
	delRoutes, restores, delLinks, delHost, delNeigh                   []Action
}

// ComputePlan diffs the desired and the observed state of one pod into ordered actions. It is pure. Without the
// pod's network namespace (Observed.HasNetns false) only the host side is planned: everything of the pod there
// is removed.
func ComputePlan(d *Desired, o *Observed) *Plan {
	p := &Plan{Desired: d, Problems: map[string][]Problem{}, Prev: o.Record}
	pl := &planner{d: d, o: o, p: p, uid: d.Pod.UID, fresh: map[string]bool{}, gone: map[string]bool{},
		hostGone: map[string]bool{}, unavailable: map[string]string{}}
	if o.HasNetns {
		pl.planLinks()
		pl.planRoutes()
		pl.planSysctls()
		pl.planPrimary()
	}
	pl.planRemovals()
	p.Record, p.Links = pl.record(), pl.links
	for _, group := range [][]Action{pl.recreate, pl.create, pl.update, pl.addrs, pl.up, pl.fdb, pl.routes, pl.sysctls, pl.primary,
		pl.delRoutes, pl.restores, pl.delLinks, pl.delHost, pl.delNeigh} {
		p.Actions = append(p.Actions, group...)
	}
	return p
}

func (pl *planner) problem(config, reason, format string, args ...any) {
	pl.p.Problems[config] = append(pl.p.Problems[config], Problem{Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// owned reports whether an observed pod link is the agent's link for interface name of this pod.
func (pl *planner) owned(l PodLink) bool {
	uid, ifname, ok := ParseAlias(l.Alias)
	return ok && uid == pl.uid && ifname == l.Name
}

func (pl *planner) ownedHost(l HostLink) bool {
	uid, _, ok := ParseAlias(l.Alias)
	return ok && uid == pl.uid
}

// immutable says why an owned link must be re-created to become l ("" when it need not be).
func (pl *planner) immutable(l Link, ob PodLink) string {
	if ob.Kind != string(l.Kind) {
		return fmt.Sprintf("is a %s, want a %s", ob.Kind, l.Kind)
	}
	switch l.Kind {
	case v1.PodInterfaceVeth:
		h, ok := pl.o.hostLink(l.HostName)
		if !ok || !pl.ownedHost(h) || h.Index != ob.ParentIndex {
			return "its host end " + l.HostName + " is missing"
		}
	case v1.PodInterfaceMACVLAN:
		br, _ := pl.o.hostLink(l.Bridge)
		if br.Index != ob.ParentIndex {
			return "it is not on " + l.Bridge
		}
		if ob.Mode != l.Mode {
			return fmt.Sprintf("mode %s, want %s", ob.Mode, l.Mode)
		}
	case v1.PodInterfaceVLAN:
		if pl.fresh[l.Parent] {
			return "its parent " + l.Parent + " is re-created"
		}
		if ob.ParentName != l.Parent || ob.VLAN != l.VLAN {
			return fmt.Sprintf("id %d on %s, want id %d on %s", ob.VLAN, ob.ParentName, l.VLAN, l.Parent)
		}
	}
	return ""
}

func (pl *planner) planLinks() {
	// First what happens to each link (kept, created, re-created, left out), then the changes: a port's master
	// or a route's device may be a link decided later.
	var kept []Link
	observed := map[string]PodLink{}
	frozen := map[string]bool{}
	for _, l := range pl.d.Links {
		if why := pl.blocked(l); why != "" {
			pl.unavailable[l.Name] = why
			continue
		}
		if l.Kind == v1.PodInterfaceVeth || l.Kind == v1.PodInterfaceMACVLAN {
			if br, ok := pl.o.hostLink(l.Bridge); !ok || br.Kind != "bridge" {
				pl.problem(l.Config, ReasonApplyFailed, "interface %s: the bridge %s of network %s is not on the node (yet)", l.Name, l.Bridge, l.Network)
				if ob, ok := pl.o.podLink(l.Name); ok && pl.owned(ob) {
					// The node re-makes the bridge (its apply deletes and creates it): the interface stays as it is
					// until the bridge is back, and is then put on it again.
					frozen[l.Name] = true
					continue
				}
				pl.unavailable[l.Name] = "the bridge " + l.Bridge + " of network " + l.Network + " is not on the node"
				continue
			}
		}
		ob, exists := pl.o.podLink(l.Name)
		switch {
		case !exists:
			pl.recreateHostEnd(l)
			pl.markFresh(l)
		case !pl.owned(ob):
			if pl.adoptable(l, ob) {
				pl.update = append(pl.update, &setAlias{Name: l.Name, To: Alias(pl.uid, l.Name), Side: inPod, forConfig: forConfig{l.Config}})
				kept, observed[l.Name] = append(kept, l), ob
				continue
			}
			pl.unavailable[l.Name] = "the name is held by a link the agent does not own"
			pl.problem(l.Config, ReasonConflict, "interface %s: the pod already has a %s %s the agent did not make (alias %q)",
				l.Name, ob.Kind, ob.Name, ob.Alias)
		default:
			why := pl.immutable(l, ob)
			if why == "" {
				kept, observed[l.Name] = append(kept, l), ob
				continue
			}
			pl.recreate = append([]Action{&deleteLink{Name: l.Name, Kind: ob.Kind, Side: inPod, Reason: "re-created: " + why,
				forConfig: forConfig{l.Config}}}, pl.recreate...)
			pl.gone[l.Name] = true
			pl.recreateHostEnd(l)
			pl.markFresh(l)
		}
	}
	for _, l := range pl.d.Links {
		switch {
		case pl.fresh[l.Name]:
			pl.createLink(l)
		case frozen[l.Name]:
			pl.links = append(pl.links, l)
		case slices.ContainsFunc(kept, func(k Link) bool { return k.Name == l.Name }):
			pl.links = append(pl.links, l)
			pl.updateLink(l, observed[l.Name])
		}
	}
}

// markFresh decides that a link is (re-)created, unless its host name is held by a foreign link.
func (pl *planner) markFresh(l Link) {
	if why, ok := pl.unavailable[l.Name]; ok {
		pl.problem(l.Config, ReasonConflict, "interface %s: %s", l.Name, why)
		return
	}
	pl.fresh[l.Name] = true
}

// blocked says why a desired link cannot be made because of another one ("" when it can).
func (pl *planner) blocked(l Link) string {
	if why, ok := pl.unavailable[l.Parent]; ok && l.Parent != "" {
		return "its parent " + l.Parent + " is not applied: " + why
	}
	return ""
}

// adoptable: a veth's pod end without an alias whose peer is this pod's host end (the agent stopped between
// making the pair and marking it).
func (pl *planner) adoptable(l Link, ob PodLink) bool {
	if l.Kind != v1.PodInterfaceVeth || ob.Kind != string(v1.PodInterfaceVeth) || ob.Alias != "" {
		return false
	}
	h, ok := pl.o.hostLink(l.HostName)
	return ok && h.Alias == Alias(pl.uid, l.Name) && h.Index == ob.ParentIndex
}

// recreateHostEnd deletes a veth's host end left without its pod end (or before re-creating the pair).
func (pl *planner) recreateHostEnd(l Link) {
	if l.Kind != v1.PodInterfaceVeth {
		return
	}
	h, ok := pl.o.hostLink(l.HostName)
	if !ok {
		return
	}
	if !pl.ownedHost(h) {
		pl.unavailable[l.Name] = "the host name " + l.HostName + " is held by a link the agent does not own"
		return
	}
	pl.recreate = append(pl.recreate, &deleteLink{Name: h.Name, Kind: h.Kind, Side: onHost,
		Reason: "host end of " + l.Name + ", re-created with it", forConfig: forConfig{l.Config}})
	pl.hostGone[h.Name] = true
}

func (pl *planner) createLink(l Link) {
	cfg := forConfig{l.Config}
	pl.links = append(pl.links, l)
	pl.create = append(pl.create, &createLink{Link: l, Alias: Alias(pl.uid, l.Name), forConfig: cfg})
	if l.Master != "" && !pl.isUnavailable(l.Master) {
		pl.update = append(pl.update, &setMaster{Name: l.Name, To: l.Master, Side: inPod, forConfig: cfg})
	}
	for _, a := range l.Addrs {
		pl.addrs = append(pl.addrs, &addAddr{Link: l.Name, Addr: a, forConfig: cfg})
	}
	pl.up = append(pl.up, &setUp{Name: l.Name, Side: inPod, forConfig: cfg})
	if l.Kind == v1.PodInterfaceVeth {
		pl.up = append(pl.up, &setUp{Name: l.HostName, Side: onHost, forConfig: cfg})
		if l.Bridge != "" {
			pl.p.Settle = true // its static FDB entry comes with the next plan (staticFDB)
		}
	}
}

// staticFDB plans a static FDB entry of a veth's MAC on its host end, in its bridge, when there is none: other
// nodes reach the pod by the MAC/IP route its node's zebra advertises, only for a neighbour whose MAC zebra knows
// as local. zebra drops a MAC event of a port it does not know in its bridge yet (FRR 10 handles link events apart
// from FDB events): the entry of a pod's first frame, learnt just after its port joined the bridge, may never
// reach it, and the pod stays unreachable (seen with FRR 10.3). So the entry is made static, and only for a host
// end observed in its bridge and up, on the plan after the one that made it (Plan.Settle): turning a learnt entry
// static notifies it again.
func (pl *planner) staticFDB(l Link) {
	if l.Bridge == "" || l.HostName == "" || len(l.MAC) == 0 {
		return
	}
	if h, ok := pl.o.hostLink(l.HostName); !ok || h.Master != l.Bridge || !h.Up || pl.fresh[l.Name] || pl.hostGone[l.HostName] {
		pl.p.Settle = true
		return
	}
	if slices.ContainsFunc(pl.o.FDB, func(f FDBEntry) bool {
		return f.Static && f.Port == l.HostName && f.Bridge == l.Bridge && bytes.Equal(f.MAC, l.MAC)
	}) {
		return
	}
	pl.fdb = append(pl.fdb, &addFDB{FDBEntry: FDBEntry{Port: l.HostName, Bridge: l.Bridge, MAC: l.MAC}, forConfig: forConfig{l.Config}})
}

// updateLink plans the changes of an existing owned link.
func (pl *planner) updateLink(l Link, ob PodLink) {
	cfg := forConfig{l.Config}
	if l.MTU != 0 && ob.MTU != l.MTU {
		pl.update = append(pl.update, &setMTU{Name: l.Name, Side: inPod, From: ob.MTU, To: l.MTU, forConfig: cfg})
	}
	if l.MAC != nil && !bytes.Equal(ob.MAC, l.MAC) {
		pl.update = append(pl.update, &setMAC{Name: l.Name, From: ob.MAC, To: l.MAC, forConfig: cfg})
	}
	master := ob.Master
	if pl.fresh[master] {
		master = "" // its bridge is re-created: the port was released
	}
	if master != l.Master && (l.Master == "" || !pl.isUnavailable(l.Master)) {
		pl.update = append(pl.update, &setMaster{Name: l.Name, From: master, To: l.Master, Side: inPod, forConfig: cfg})
	}
	if l.Kind == v1.PodInterfaceVeth {
		h, _ := pl.o.hostLink(l.HostName)
		if l.MTU != 0 && h.MTU != l.MTU {
			pl.update = append(pl.update, &setMTU{Name: h.Name, Side: onHost, From: h.MTU, To: l.MTU, forConfig: cfg})
		}
		if h.Master != l.Bridge {
			pl.update = append(pl.update, &setMaster{Name: h.Name, From: h.Master, To: l.Bridge, Side: onHost, forConfig: cfg})
		}
		if !h.Up {
			pl.up = append(pl.up, &setUp{Name: h.Name, Side: onHost, forConfig: cfg})
		}
		pl.staticFDB(l)
	}
	for _, a := range ob.Addrs {
		if !slices.Contains(l.Addrs, a) {
			pl.update = append(pl.update, &delAddr{Link: l.Name, Addr: a, forConfig: cfg})
		}
	}
	for _, a := range l.Addrs {
		if !slices.Contains(ob.Addrs, a) {
			pl.addrs = append(pl.addrs, &addAddr{Link: l.Name, Addr: a, forConfig: cfg})
		}
	}
	if !ob.Up {
		pl.up = append(pl.up, &setUp{Name: l.Name, Side: inPod, forConfig: cfg})
	}
}

func (pl *planner) isUnavailable(name string) bool {
	_, ok := pl.unavailable[name]
	return ok
}

// primaryName is the primary interface's name: the tuned one's, else the API's default.
func (pl *planner) primaryName() string {
	if pl.d.Primary != nil {
		return pl.d.Primary.Name
	}
	return v1.DefaultPrimaryInterface
}

// devAvailable reports whether a route or sysctl may use the pod interface dev ("" any).
func (pl *planner) devAvailable(dev string) bool {
	return dev == "" || !pl.isUnavailable(dev)
}

func (pl *planner) planRoutes() {
	ours := map[routeKey]Route{}
	for _, r := range pl.o.Routes {
		if pl.gone[r.Dev] {
			continue // goes with its link
		}
		ours[r.key()] = r
	}
	foreign := map[routeKey]Route{}
	for _, r := range pl.o.Foreign {
		foreign[r.key()] = r
	}
	desired := map[routeKey]bool{}
	for _, r := range pl.d.Routes {
		if !pl.devAvailable(r.Dev) {
			pl.problem(r.Config, ReasonInvalid, "route %s: interface %s is not applied: %s", r, r.Dev, pl.unavailable[r.Dev])
			continue
		}
		if r.Dev != "" && r.Dev != pl.primaryName() {
			if _, ok := pl.d.link(r.Dev); !ok {
				continue
			}
		}
		desired[r.key()] = true
		cur, have := ours[r.key()]
		switch {
		case have && cur.same(r) && !pl.fresh[r.Dev]:
		case have:
			from := cur
			pl.routes = append(pl.routes, &addRoute{Route: r, From: &from, forConfig: forConfig{r.Config}})
		default:
			if f, taken := foreign[r.key()]; taken {
				pl.problem(r.Config, ReasonConflict, "route %s: the pod has a route %s the agent did not add", r, f)
				continue
			}
			pl.routes = append(pl.routes, &addRoute{Route: r, forConfig: forConfig{r.Config}})
		}
	}
	for _, r := range pl.o.Routes {
		if !desired[r.key()] && !pl.gone[r.Dev] {
			pl.delRoutes = append(pl.delRoutes, &delRoute{Route: r})
		}
	}
}

// normalize makes sysctl values comparable: the kernel separates fields with tabs.
func normalize(v string) string { return strings.Join(strings.Fields(v), " ") }

func (pl *planner) planSysctls() {
	var rec map[string]string
	if pl.o.Record != nil {
		rec = pl.o.Record.Sysctls
	}
	desired := map[string]bool{}
	for _, s := range pl.d.Sysctls {
		dev, _ := sysctlDevice(s.Name)
		if dev != "" && !pl.devAvailable(dev) {
			pl.problem(s.Config, ReasonInvalid, "sysctl %s: interface %s is not applied: %s", s.Name, dev, pl.unavailable[dev])
			continue
		}
		desired[s.Name] = true
		if s.Link != "" && pl.fresh[s.Link] {
			pl.sysctls = append(pl.sysctls, &setSysctl{Name: s.Name, To: s.Value, Note: " (new interface)",
				forConfig: forConfig{s.Config}})
			continue
		}
		cur, ok := pl.o.Sysctls[s.Name]
		if !ok {
			pl.problem(s.Config, ReasonInvalid, "sysctl %s: no such key in the pod's network namespace", s.Name)
			continue
		}
		if normalize(cur) == normalize(s.Value) {
			continue
		}
		note := ""
		if _, remembered := rec[s.Name]; s.Link == "" && !remembered {
			note = " (original remembered)"
		}
		pl.sysctls = append(pl.sysctls, &setSysctl{Name: s.Name, From: normalize(cur), To: s.Value, Note: note,
			forConfig: forConfig{s.Config}})
	}
	for _, name := range slices.Sorted(maps.Keys(rec)) {
		if desired[name] {
			continue
		}
		cur, ok := pl.o.Sysctls[name]
		if !ok || normalize(cur) == normalize(rec[name]) {
			continue // gone with its interface, or already the original
		}
		pl.restores = append(pl.restores, &setSysctl{Name: name, From: normalize(cur), To: rec[name], Note: " (restoring the original)"})
	}
}

func (pl *planner) planPrimary() {
	var prev *podrecords.Primary
	if pl.o.Record != nil {
		prev = pl.o.Record.Primary
	}
	want := pl.d.Primary
	if want != nil {
		ob, ok := pl.o.podLink(want.Name)
		switch {
		case !ok:
			pl.problem(want.Config, ReasonApplyFailed, "primary interface %s: not found in the pod", want.Name)
		case pl.owned(ob):
			pl.problem(want.Config, ReasonInvalid, "primary interface %s: is an interface the agent made", want.Name)
		default:
			cfg := forConfig{want.Config}
			if want.MTU != nil && ob.MTU != *want.MTU {
				pl.primary = append(pl.primary, &setMTU{Name: ob.Name, Side: inPod, From: ob.MTU, To: *want.MTU, Primary: true,
					Note: rememberNote(prev, want.Name, func(p *podrecords.Primary) *int { return p.MTU }), forConfig: cfg})
			}
			if want.TxQueueLen != nil && ob.TxQueueLen != *want.TxQueueLen {
				pl.primary = append(pl.primary, &setTxQueueLen{Name: ob.Name, From: ob.TxQueueLen, To: *want.TxQueueLen,
					Note: rememberNote(prev, want.Name, func(p *podrecords.Primary) *int { return p.TxQueueLen }), forConfig: cfg})
			}
		}
	}
	if prev == nil {
		return
	}
	ob, ok := pl.o.podLink(prev.Name)
	if !ok {
		return
	}
	tuned := func(field func(*Primary) *int) bool {
		return want != nil && want.Name == prev.Name && field(want) != nil
	}
	if prev.MTU != nil && !tuned(func(p *Primary) *int { return p.MTU }) && ob.MTU != *prev.MTU {
		pl.restores = append(pl.restores, &setMTU{Name: prev.Name, Side: inPod, From: ob.MTU, To: *prev.MTU, Primary: true,
			Note: " (restoring the original)"})
	}
	if prev.TxQueueLen != nil && !tuned(func(p *Primary) *int { return p.TxQueueLen }) && ob.TxQueueLen != *prev.TxQueueLen {
		pl.restores = append(pl.restores, &setTxQueueLen{Name: prev.Name, From: ob.TxQueueLen, To: *prev.TxQueueLen,
			Note: " (restoring the original)"})
	}
}

func rememberNote(prev *podrecords.Primary, name string, field func(*podrecords.Primary) *int) string {
	if prev != nil && prev.Name == name && field(prev) != nil {
		return ""
	}
	return " (original remembered)"
}

// planRemovals deletes the owned links no longer desired (pod and host side), and the host's neighbour and FDB
// entries of every remembered interface that goes or changes its bridge or MAC.
func (pl *planner) planRemovals() {
	keep := map[string]bool{}
	keepHost := map[string]bool{}
	for _, l := range pl.links {
		keep[l.Name] = true
		if l.HostName != "" {
			keepHost[l.HostName] = true
		}
	}
	// Pod links: bridges first, then vlans (deepest first), then veths and macvlans.
	var del []PodLink
	if pl.o.HasNetns {
		for _, ob := range pl.o.PodLinks {
			if pl.owned(ob) && !keep[ob.Name] && !pl.gone[ob.Name] {
				del = append(del, ob)
			}
		}
	}
	depth := func(l PodLink) int {
		n := 0
		for p := l.ParentName; p != "" && n < 16; n++ {
			q, ok := pl.o.podLink(p)
			if !ok {
				break
			}
			p = q.ParentName
		}
		return n
	}
	rank := func(l PodLink) int {
		switch l.Kind {
		case "bridge":
			return 0
		case "vlan":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(del, func(a, b PodLink) int {
		if r := rank(a) - rank(b); r != 0 {
			return r
		}
		if r := depth(b) - depth(a); r != 0 {
			return r
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, ob := range del {
		if ob.Kind == string(v1.PodInterfaceVeth) {
			if h, ok := pl.o.hostLink(HostVethName(pl.uid, ob.Name)); ok && pl.ownedHost(h) && !pl.hostGone[h.Name] {
				continue // deleted with its host end below
			}
		}
		pl.delLinks = append(pl.delLinks, &deleteLink{Name: ob.Name, Kind: ob.Kind, Side: inPod, Reason: "no longer desired"})
		pl.gone[ob.Name] = true
	}
	hosts := slices.Clone(pl.o.HostLinks)
	slices.SortFunc(hosts, func(a, b HostLink) int { return strings.Compare(a.Name, b.Name) })
	for _, h := range hosts {
		if !pl.ownedHost(h) || keepHost[h.Name] || pl.hostGone[h.Name] {
			continue
		}
		_, ifname, _ := ParseAlias(h.Alias)
		pl.delHost = append(pl.delHost, &deleteLink{Name: h.Name, Kind: h.Kind, Side: onHost,
			Reason: "host end of " + ifname + ", no longer desired; its pod end goes with it"})
		pl.hostGone[h.Name] = true
	}
	pl.planNeighbours()
}

// planNeighbours removes the host's neighbour and FDB entries of remembered interfaces that go (or come back
// with another bridge or MAC).
func (pl *planner) planNeighbours() {
	if pl.o.Record == nil {
		return
	}
	stays := map[string]Link{}
	for _, l := range pl.links {
		stays[l.Name] = l
	}
	for _, in := range pl.o.Record.Interfaces {
		if in.MAC == "" || in.Bridge == "" {
			continue
		}
		if l, ok := stays[in.Name]; ok && l.Bridge == in.Bridge && l.MAC.String() == in.MAC {
			continue
		}
		for _, n := range pl.o.Neighbours {
			if n.Dev == in.Bridge && n.MAC.String() == in.MAC {
				pl.delNeigh = append(pl.delNeigh, &delNeigh{Neighbour: n})
			}
		}
		for _, f := range pl.o.FDB {
			if f.Bridge == in.Bridge && f.MAC.String() == in.MAC && !pl.hostGone[f.Port] {
				pl.delNeigh = append(pl.delNeigh, &delFDB{FDBEntry: f})
			}
		}
	}
}

// record is what podrecords remembers after the plan: the interfaces that exist, the originals still needed.
func (pl *planner) record() *podrecords.Record {
	r := &podrecords.Record{UID: pl.uid, Namespace: pl.d.Pod.Namespace, Name: pl.d.Pod.Name}
	if !pl.o.HasNetns {
		return r
	}
	for _, l := range pl.links {
		r.Interfaces = append(r.Interfaces, l.record())
	}
	slices.SortFunc(r.Interfaces, func(a, b podrecords.Interface) int { return strings.Compare(a.Name, b.Name) })
	var prev *podrecords.Record = pl.o.Record
	for _, s := range pl.d.Sysctls {
		if s.Link != "" {
			continue
		}
		if dev, _ := sysctlDevice(s.Name); !pl.devAvailable(dev) {
			continue
		}
		orig, remembered := "", false
		if prev != nil {
			orig, remembered = prev.Sysctls[s.Name]
		}
		if !remembered {
			cur, ok := pl.o.Sysctls[s.Name]
			if !ok || normalize(cur) == normalize(s.Value) {
				continue
			}
			orig = normalize(cur)
		}
		if r.Sysctls == nil {
			r.Sysctls = map[string]string{}
		}
		r.Sysctls[s.Name] = orig
	}
	if want := pl.d.Primary; want != nil {
		ob, ok := pl.o.podLink(want.Name)
		if ok && !pl.owned(ob) {
			p := &podrecords.Primary{Name: want.Name}
			var old *podrecords.Primary
			if prev != nil && prev.Primary != nil && prev.Primary.Name == want.Name {
				old = prev.Primary
			}
			p.MTU = original(want.MTU, ob.MTU, old, func(x *podrecords.Primary) *int { return x.MTU })
			p.TxQueueLen = original(want.TxQueueLen, ob.TxQueueLen, old, func(x *podrecords.Primary) *int { return x.TxQueueLen })
			if p.MTU != nil || p.TxQueueLen != nil {
				r.Primary = p
			}
		}
	}
	return r
}

// original is the value to remember for a primary field: the remembered one, else the current one when the
// plan changes it; nil when the field is not tuned or was never changed.
func original(want *int, cur int, old *podrecords.Primary, field func(*podrecords.Primary) *int) *int {
	if want == nil {
		return nil
	}
	if old != nil && field(old) != nil {
		v := *field(old)
		return &v
	}
	if cur == *want {
		return nil
	}
	v := cur
	return &v
}
