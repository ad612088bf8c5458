package nodenet

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Plan is the ordered list of actions that turns the observed state into the desired one, plus what the
// planner could not or would not do.
type Plan struct {
	Desired *Desired
	// Actions are ordered by phase, and within a phase in the order the kernel needs.
	Actions []Action
	// Conflicts are links nodenet needs whose names are held by foreign links; they and everything depending on
	// them are left alone.
	Conflicts []Conflict
	// Unsupported are objects the kernel cannot create (e.g. 802.1Q sub-interfaces without 802.1Q support).
	Unsupported []Unsupported
	// Notes explain decisions (e.g. table-only VRFs).
	Notes []string
	// Observed counts what Observe read for this plan (zero for a plan not computed from the kernel).
	Observed ObservedCounts
	// ObservedReused: the namespace sent no change notification since the last read, which was used again
	// (Manager.WatchChanges).
	ObservedReused bool
	// Ifindexes are the links of the namespace by name when the plan was computed (nil: not observed), Links
	// the same links as observed.
	Ifindexes map[string]int
	Links     []LinkState
}

// ObservedCounts are the sizes of an observation: every link of the namespace, the global addresses, and the
// routes and rules of nodenet's protocol.
type ObservedCounts struct {
	Links, Addresses, Routes, Rules int
}

// Ifindexes maps every observed link's name to its ifindex.
func (o *Observed) Ifindexes() map[string]int {
	out := make(map[string]int, len(o.Links))
	for _, l := range o.Links {
		out[l.Name] = l.Index
	}
	return out
}

// Counts returns the sizes of o.
func (o *Observed) Counts() ObservedCounts {
	c := ObservedCounts{Links: len(o.Links), Routes: len(o.Routes), Rules: len(o.Rules)}
	for _, l := range o.Links {
		c.Addresses += len(l.Addrs)
	}
	return c
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return len(p.Actions) == 0 }

// DeletesLink reports whether the plan deletes the link called name (to recreate it, or for good): a link of
// that name that exists after the plan is a new one, with a new ifindex.
func (p *Plan) DeletesLink(name string) bool {
	for _, a := range p.Actions {
		if link, e := a.Effect(); e == LinkDeleted && link == name {
			return true
		}
	}
	return false
}

// PhaseActions returns the actions of one phase, in order.
func (p *Plan) PhaseActions(ph Phase) []Action {
	var out []Action
	for _, a := range p.Actions {
		if a.Phase() == ph {
			out = append(out, a)
		}
	}
	return out
}

// Err is nil, or ErrConflict joined once per conflicting link: such a plan must not be applied.
func (p *Plan) Err() error {
	var errs []error
	for _, c := range p.Conflicts {
		errs = append(errs, c.Err())
	}
	return errors.Join(errs...)
}

// String renders the plan for humans: one numbered action per line grouped by phase, then conflicts,
// unsupported objects and notes.
func (p *Plan) String() string {
	var b strings.Builder
	if p.Empty() {
		b.WriteString("no changes\n")
	}
	n := 0
	for _, ph := range Phases() {
		acts := p.PhaseActions(ph)
		if len(acts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "phase %s:\n", ph)
		for _, a := range acts {
			n++
			fmt.Fprintf(&b, "  %3d. %s\n", n, a)
		}
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, l := range lines {
			fmt.Fprintf(&b, "  - %s\n", l)
		}
	}
	section("conflicts (not touched)", mapStrings(p.Conflicts, Conflict.String))
	section("unsupported", mapStrings(p.Unsupported, Unsupported.String))
	section("notes", p.Notes)
	return b.String()
}

func mapStrings[T any](in []T, f func(T) string) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

// step orders the actions inside the plan: phase first, then what the kernel needs to exist before.
type step int

const (
	stepVRFRecreate step = iota
	stepVRFCreate
	stepVRFUpdate
	stepVRFUp
	stepTableRoutes
	stepRules

	stepRecreate
	stepCreateLower // bridges, veths
	stepCreateUpper // bridge ports: vxlans, vlans
	stepUpdate
	stepPortFlags
	stepFlood
	stepOffload
	stepAddAddr
	stepUp
	stepRoutes

	stepDelFlood
	stepDelRoute
	stepDelRule
	stepDelAddr
	stepDelPorts
	stepDelLower
	stepDelVRF

	numSteps
)

func (s step) phase() Phase {
	switch {
	case s <= stepRules:
		return PhaseVRFs
	case s <= stepRoutes:
		return PhaseInterfaces
	}
	return PhaseRemovals
}

// planner holds the state of one ComputePlan call.
type planner struct {
	d       *Desired
	obs     map[string]*LinkState
	byIndex map[int]*LinkState
	steps   [numSteps][]Action
	plan    *Plan

	blocked   map[string]bool // desired links not touched (conflict, or depending on one)
	gone      map[string]bool // observed links the plan deletes before recreating them
	created   map[string]bool // links the plan creates (incl. veth peers)
	handled   map[string]bool // observed links accounted for (desired, or deleted already)
	desiredBy map[string]*LinkSpec
}

func (p *planner) add(s step, a Action) {
	a.setPhase(s.phase())
	p.steps[s] = append(p.steps[s], a)
}

// owned reports whether nodenet owns an observed link: its alias says so, or it is the veth peer of a link
// whose alias says so (the peer's alias is set right after the pair is created).
func (p *planner) owned(l *LinkState) bool {
	if OwnedAlias(l.Alias) {
		return true
	}
	if l.Kind != KindVeth || l.PeerIndex == 0 {
		return false
	}
	peer := p.byIndex[l.PeerIndex]
	return peer != nil && peer.PeerIndex == l.Index && OwnedAlias(peer.Alias)
}

// ComputePlan diffs desired against observed. It is pure: the same inputs give the same plan.
func ComputePlan(d *Desired, o *Observed) *Plan {
	p := &planner{
		d: d, obs: map[string]*LinkState{}, byIndex: map[int]*LinkState{},
		plan:    &Plan{Desired: d, Unsupported: slices.Clone(d.Unsupported), Notes: slices.Clone(d.Notes)},
		blocked: map[string]bool{}, gone: map[string]bool{}, created: map[string]bool{}, handled: map[string]bool{},
		desiredBy: map[string]*LinkSpec{},
	}
	for i := range o.Links {
		l := &o.Links[i]
		p.obs[l.Name] = l
		p.byIndex[l.Index] = l
	}
	for i := range d.Links {
		p.desiredBy[d.Links[i].Name] = &d.Links[i]
	}
	p.findConflicts()
	for i := range d.Links {
		p.planLink(&d.Links[i])
	}
	p.planStale()
	p.planRoutes(o.Routes)
	p.planRules(o.Rules)
	for _, acts := range p.steps {
		p.plan.Actions = append(p.plan.Actions, acts...)
	}
	return p.plan
}

// findConflicts marks desired links whose names are held by foreign links, and everything that depends on
// them (ports of a foreign bridge, the other end of a veth pair), as blocked.
func (p *planner) findConflicts() {
	for i := range p.d.Links {
		want := &p.d.Links[i]
		l, ok := p.obs[want.Name]
		if !ok || p.owned(l) {
			continue
		}
		reason := "it has no network-operator alias"
		if l.Alias != "" {
			reason = fmt.Sprintf("its alias %q is not a network-operator one", l.Alias)
		}
		p.plan.Conflicts = append(p.plan.Conflicts, Conflict{Name: want.Name, Want: want.Kind, Found: l.Kind, Alias: l.Alias, Reason: reason})
		p.blocked[want.Name] = true
	}
	// Dependents: links are ordered masters first, so one pass per level settles them; loop until stable.
	for changed := true; changed; {
		changed = false
		for i := range p.d.Links {
			want := &p.d.Links[i]
			if p.blocked[want.Name] {
				continue
			}
			var why string
			switch {
			case want.Master != "" && p.blocked[want.Master]:
				why = "its master " + want.Master + " is held by a foreign link"
			case want.Kind == KindVeth && p.blocked[want.Peer]:
				why = "its veth peer " + want.Peer + " is held by a foreign link"
			case want.Kind == KindVLAN && want.VLAN != nil && p.blocked[want.VLAN.Parent]:
				why = "its parent " + want.VLAN.Parent + " is held by a foreign link"
			default:
				continue
			}
			found := LinkKind("nothing")
			if l, ok := p.obs[want.Name]; ok {
				found = l.Kind
			}
			p.plan.Conflicts = append(p.plan.Conflicts, Conflict{Name: want.Name, Want: want.Kind, Found: found, Reason: why})
			p.blocked[want.Name] = true
			changed = true
		}
	}
}

// recreateReason says why an owned link cannot be updated in place ("" when it can).
func recreateReason(have *LinkState, want *LinkSpec, peerName string) string {
	if have.Kind != want.Kind {
		return fmt.Sprintf("recreate: kind %s -> %s", have.Kind, want.Kind)
	}
	switch want.Kind {
	case KindVRF:
		if have.Table != want.Table {
			return fmt.Sprintf("recreate: table %d -> %d", have.Table, want.Table)
		}
	case KindVXLAN:
		h, w := VXLANSpec{}, VXLANSpec{}
		if have.VXLAN != nil {
			h = *have.VXLAN
		}
		if want.VXLAN != nil {
			w = *want.VXLAN
		}
		if h != w {
			return fmt.Sprintf("recreate: %s -> %s", h, w)
		}
	case KindVeth:
		if peerName != want.Peer {
			return fmt.Sprintf("recreate: peer %s -> %s", noneIfEmpty(peerName), want.Peer)
		}
	case KindVLAN:
		h, w := VLANSpec{}, VLANSpec{}
		if have.VLAN != nil {
			h = *have.VLAN
		}
		if want.VLAN != nil {
			w = *want.VLAN
		}
		if h != w {
			return fmt.Sprintf("recreate: vlan %d on %s -> vlan %d on %s", h.ID, noneIfEmpty(h.Parent), w.ID, w.Parent)
		}
	}
	return ""
}

func isUpper(k LinkKind) bool { return k == KindVXLAN || k == KindVLAN }

// linkSteps are the steps of one link's actions: VRF devices are created in PhaseVRFs, bridge ports
// (VXLANs, VLANs) after the bridges.
type linkSteps struct{ create, update, recreate, up step }

func stepsFor(k LinkKind) linkSteps {
	switch {
	case k == KindVRF:
		return linkSteps{create: stepVRFCreate, update: stepVRFUpdate, recreate: stepVRFRecreate, up: stepVRFUp}
	case isUpper(k):
		return linkSteps{create: stepCreateUpper, update: stepUpdate, recreate: stepRecreate, up: stepUp}
	}
	return linkSteps{create: stepCreateLower, update: stepUpdate, recreate: stepRecreate, up: stepUp}
}

func (p *planner) planLink(want *LinkSpec) {
	if p.blocked[want.Name] {
		return
	}
	steps := stepsFor(want.Kind)
	state := p.ensureLink(want, steps)
	p.planAttrs(want, &state, steps.update)
	p.planFlood(want, state.Flood)
	p.planAddrs(want, state.Addrs)
	if !state.Up {
		p.add(steps.up, &setUp{Name: want.Name})
	}
}

// ensureLink plans the link's creation (or deletion and re-creation, when it cannot be changed in place) and
// returns its state as the rest of the plan finds it.
func (p *planner) ensureLink(want *LinkSpec, steps linkSteps) LinkState {
	if have, exists := p.obs[want.Name]; exists && !p.gone[want.Name] {
		p.handled[want.Name] = true
		peerName := ""
		if have.PeerIndex != 0 {
			if peer := p.byIndex[have.PeerIndex]; peer != nil {
				peerName = peer.Name
			}
		}
		why := recreateReason(have, want, peerName)
		if why == "" {
			state := *have
			state.Peer = peerName
			if p.gone[state.Master] {
				p.cycledBy(&state, state.Master)
				state.Master, state.Port = "", nil // released when its master was deleted
			}
			return state
		}
		p.add(steps.recreate, &deleteLink{Name: want.Name, Kind: have.Kind, Reason: why})
		p.markGone(have)
	}
	if p.created[want.Name] {
		// The other end of a veth pair created before: it has the peer alias and MTU, nothing else.
		peer := p.desiredBy[want.Peer]
		return LinkState{LinkSpec: LinkSpec{Name: want.Name, Kind: KindVeth, Alias: peer.PeerAlias, MTU: peer.MTU, Peer: peer.Name}}
	}
	p.add(steps.create, &createLink{Link: *want})
	p.created[want.Name] = true
	if want.Kind == KindVeth {
		p.created[want.Peer] = true
	}
	return LinkState{LinkSpec: LinkSpec{Name: want.Name, Kind: want.Kind, Alias: want.Alias, MTU: want.MTU,
		MAC: want.MAC, Master: want.Master, Table: want.Table, VXLAN: want.VXLAN, VLAN: want.VLAN, Peer: want.Peer}}
}

// planAttrs plans the changes of alias, MTU, MAC, master and bridge port flags.
func (p *planner) planAttrs(want *LinkSpec, state *LinkState, update step) {
	base, segOff := splitSegMark(state.Alias)
	if base != want.Alias {
		p.add(update, &setAlias{Name: want.Name, From: state.Alias, To: withSegMark(want.Alias, segOff)})
	}
	p.planSegmentation(want, state, segOff)
	if want.MTU != 0 && state.MTU != want.MTU {
		p.add(update, &setMTU{Name: want.Name, From: state.MTU, To: want.MTU})
	}
	if want.MAC != nil && !bytes.Equal(state.MAC, want.MAC) {
		p.add(update, &setMAC{Name: want.Name, From: state.MAC, To: want.MAC})
	}
	if state.Master != want.Master {
		p.add(update, &setMaster{Name: want.Name, From: state.Master, To: want.Master})
		p.cycledBy(state, state.Master)
		p.cycledBy(state, want.Master)
		state.Port = nil // a new bridge port starts with the kernel's defaults
	}
	if want.Port != nil && want.Master != "" {
		have := PortFlags{Learning: true} // the kernel's defaults for a new port
		if state.Port != nil {
			have = *state.Port
		}
		if have != *want.Port {
			p.add(stepPortFlags, &setPortFlags{Name: want.Name, From: have, To: *want.Port})
		}
	}
}

// cycledBy updates the state of a running link that master takes or releases. A VRF device cycles its port
// down and up then (to move the port's routes to the other table), and going down removes the port's IPv6
// addresses (keep_addr_on_down is off by default): they must be added again after the enslaving.
func (p *planner) cycledBy(state *LinkState, master string) {
	if !state.Up || !p.isVRF(master) {
		return
	}
	state.Addrs = slices.DeleteFunc(slices.Clone(state.Addrs), func(a Address) bool { return a.Prefix.Addr().Is6() })
}

// isVRF reports whether the link called name is a VRF device, as observed or as desired.
func (p *planner) isVRF(name string) bool {
	if l, ok := p.obs[name]; ok && l.Kind == KindVRF {
		return true
	}
	w, ok := p.desiredBy[name]
	return ok && w.Kind == KindVRF
}

// planFlood adds the flood entries of a static-flooding VXLAN it lacks and deletes those to peers no longer
// wanted (have: its entries as the plan finds them; none on a link the plan creates).
func (p *planner) planFlood(want *LinkSpec, have []netip.Addr) {
	if want.VXLAN == nil || !want.VXLAN.Learning {
		return
	}
	for _, peer := range want.Flood {
		if !slices.Contains(have, peer) {
			p.add(stepFlood, &addFlood{Link: want.Name, Peer: peer})
		}
	}
	for _, peer := range have {
		if !slices.Contains(want.Flood, peer) {
			p.add(stepDelFlood, &delFlood{Link: want.Name, Peer: peer})
		}
	}
}

// planAddrs adds the wanted addresses the link lacks (or has with other flags) and deletes the others.
func (p *planner) planAddrs(want *LinkSpec, have []Address) {
	byPrefix := make(map[netip.Prefix]Address, len(have))
	for _, a := range have {
		byPrefix[a.Prefix] = a
	}
	for _, a := range want.Addrs {
		h, ok := byPrefix[a.Prefix]
		if !ok || h.NoPrefixRoute != a.NoPrefixRoute {
			p.add(stepAddAddr, &addAddr{Link: want.Name, Addr: a})
		}
		delete(byPrefix, a.Prefix)
	}
	for _, a := range have {
		if _, extra := byPrefix[a.Prefix]; extra {
			p.add(stepDelAddr, &delAddr{Link: want.Name, Addr: a})
		}
	}
}

// markGone records that an observed link (and a veth's peer) disappears before the plan recreates it.
func (p *planner) markGone(l *LinkState) {
	p.gone[l.Name] = true
	p.handled[l.Name] = true
	if l.Kind == KindVeth && l.PeerIndex != 0 {
		if peer := p.byIndex[l.PeerIndex]; peer != nil {
			p.gone[peer.Name] = true
			p.handled[peer.Name] = true
		}
	}
}

// planStale deletes owned links that are not desired: ports first, then bridges and veths, VRF devices last.
func (p *planner) planStale() {
	names := make([]string, 0, len(p.obs))
	for n := range p.obs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		l := p.obs[n]
		if p.handled[n] || p.desiredBy[n] != nil || !p.owned(l) {
			continue
		}
		if l.Kind == KindVeth && l.PeerIndex != 0 {
			if peer := p.byIndex[l.PeerIndex]; peer != nil && p.desiredBy[peer.Name] != nil && !p.gone[peer.Name] {
				continue // the desired end's recreate takes this one along
			}
		}
		s := stepDelLower
		switch {
		case l.Kind == KindVRF:
			s = stepDelVRF
		case isUpper(l.Kind):
			s = stepDelPorts
		}
		p.add(s, &deleteLink{Name: n, Kind: l.Kind, Reason: "no longer desired"})
		p.markGone(l)
	}
}

// linkUsable reports whether routes and rules may reference the link.
func (p *planner) linkUsable(name string) bool { return name == "" || !p.blocked[name] }

func (p *planner) planRoutes(observed []RouteSpec) {
	have := make(map[routeKey]RouteSpec, len(observed))
	for _, r := range observed {
		if r.Dev != "" && p.gone[r.Dev] {
			continue // deleted with its device
		}
		have[r.key()] = r
	}
	for _, r := range p.d.Routes {
		if !p.linkUsable(r.Dev) {
			continue
		}
		s := stepRoutes
		if r.Type == RouteUnreachable {
			s = stepTableRoutes
		}
		h, ok := have[r.key()]
		delete(have, r.key())
		switch {
		case !ok:
			p.add(s, &replaceRoute{Route: r})
		case h != r:
			from := h
			p.add(s, &replaceRoute{Route: r, From: &from})
		}
	}
	stale := make([]RouteSpec, 0, len(have))
	for _, r := range have {
		stale = append(stale, r)
	}
	slices.SortFunc(stale, func(a, b RouteSpec) int { return strings.Compare(a.String(), b.String()) })
	for _, r := range stale {
		p.add(stepDelRoute, &delRoute{Route: r})
	}
}

func (p *planner) planRules(observed []RuleSpec) {
	have := make(map[RuleSpec]bool, len(observed))
	for _, r := range observed {
		have[r] = true
	}
	for _, r := range p.d.Rules {
		if !p.linkUsable(r.Iif) || !p.linkUsable(r.Oif) {
			continue
		}
		if !have[r] {
			p.add(stepRules, &addRule{Rule: r})
		}
		delete(have, r)
	}
	stale := make([]RuleSpec, 0, len(have))
	for r := range have {
		stale = append(stale, r)
	}
	slices.SortFunc(stale, func(a, b RuleSpec) int { return strings.Compare(a.String(), b.String()) })
	for _, r := range stale {
		p.add(stepDelRule, &delRule{Rule: r})
	}
}

// planSegmentation turns a link's segmentation offload off while it is wanted off, and when it is not any more,
// on again what nodenet turned off (segOff, from the alias). Features the driver does not let change are noted.
func (p *planner) planSegmentation(want *LinkSpec, state *LinkState, segOff []string) {
	if !want.SegmentationOff && len(segOff) == 0 {
		return
	}
	if state.Segmentation == nil {
		switch {
		case p.created[want.Name] && want.SegmentationOff:
			// A new link: the action turns off whatever of them the new link has on.
			p.add(stepOffload, &setSegmentation{Name: want.Name, Off: true, Features: segmentationFeatureNames()})
		case state.SegmentationErr != "":
			p.plan.Notes = append(p.plan.Notes, fmt.Sprintf("%s: segmentation offload not read, left as it is: %s", want.Name, state.SegmentationErr))
		}
		return
	}
	var change, fixed []string
	for _, f := range state.Segmentation {
		switch {
		case want.SegmentationOff && f.On && f.Changeable:
			change = append(change, f.Name)
		case want.SegmentationOff && f.On:
			fixed = append(fixed, f.Name+" on")
		case !want.SegmentationOff && slices.Contains(segOff, f.Name) && !f.On && f.Changeable:
			change = append(change, f.Name)
		}
	}
	if len(fixed) > 0 {
		p.plan.Notes = append(p.plan.Notes, fmt.Sprintf("%s: segmentation offload cannot be turned off, the driver keeps it fixed: %s",
			want.Name, strings.Join(fixed, ", ")))
	}
	if len(change) > 0 || !want.SegmentationOff {
		p.add(stepOffload, &setSegmentation{Name: want.Name, Off: want.SegmentationOff, Features: change})
	}
}
