package nodenet

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Phase is one step of applying a plan; the runtime runs them in order with its own work in between.
type Phase int

const (
	// PhaseVRFs creates VRF devices, the unreachable defaults of VRF tables and the table-only rules. FRR is
	// configured after it (FRR must know a VRF's table and VNI before the VRF's interfaces come up).
	PhaseVRFs Phase = 1
	// PhaseInterfaces creates and updates bridges, VXLANs, veths and VLANs, sets port flags and addresses,
	// brings links up and installs routes.
	PhaseInterfaces Phase = 3
	// PhaseRemovals deletes owned links, addresses, routes and rules that are no longer desired. The runtime
	// runs it after the BPF generation that referenced them is gone.
	PhaseRemovals Phase = 4
)

// Phases lists the phases in the order they are applied.
func Phases() [3]Phase { return [...]Phase{PhaseVRFs, PhaseInterfaces, PhaseRemovals} }

func (p Phase) String() string {
	switch p {
	case PhaseVRFs:
		return "vrfs"
	case PhaseInterfaces:
		return "interfaces"
	case PhaseRemovals:
		return "removals"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// Action is one change to the kernel. String describes it for humans (dry-run output, errors); Effect says
// which link it creates or deletes, if any (the concrete actions are nodenet's own).
type Action interface {
	Phase() Phase
	String() string
	Effect() (link string, e LinkEffect)
	apply(a *applier) error
	setPhase(Phase)
}

// LinkEffect is what an action does to a link's existence.
type LinkEffect int

const (
	// NoLinkEffect: the action creates and deletes no link (it may change one).
	NoLinkEffect LinkEffect = iota
	// LinkCreated: the action creates the link (for a veth, the pair).
	LinkCreated
	// LinkDeleted: the action deletes the link (for a veth, the pair); a link of that name later in the plan
	// is a new one, with a new ifindex.
	LinkDeleted
)

// inPhase is embedded by every action: the planner sets the phase from the action's step.
type inPhase struct{ phase Phase }

// Phase is the phase the action belongs to.
func (i *inPhase) Phase() Phase { return i.phase }

func (i *inPhase) setPhase(p Phase) { i.phase = p }

// Effect is the default of every action that neither creates nor deletes a link.
func (i *inPhase) Effect() (string, LinkEffect) { return "", NoLinkEffect }

// createLink creates a link with its alias, MTU, MAC and master (a veth with its peer).
type createLink struct {
	Link LinkSpec
	inPhase
}

// Effect says the link is created.
func (c *createLink) Effect() (string, LinkEffect) { return c.Link.Name, LinkCreated }

func (c *createLink) String() string {
	l := c.Link
	var attrs []string
	if l.Layer2 != "" {
		attrs = append(attrs, "layer2 "+l.Layer2)
	}
	if l.VRF != "" && l.Kind != KindVRF {
		attrs = append(attrs, "vrf "+l.VRF)
	}
	switch l.Kind {
	case KindVRF:
		attrs = append(attrs, fmt.Sprintf("table %d", l.Table))
	case KindVXLAN:
		if l.VXLAN != nil {
			attrs = append(attrs, l.VXLAN.String())
		}
	case KindVLAN:
		if l.VLAN != nil {
			attrs = append(attrs, fmt.Sprintf("id %d on %s", l.VLAN.ID, l.VLAN.Parent))
		}
	}
	if l.MTU != 0 {
		attrs = append(attrs, fmt.Sprintf("mtu %d", l.MTU))
	}
	if l.MAC != nil {
		attrs = append(attrs, "mac "+l.MAC.String())
	}
	if l.Master != "" {
		attrs = append(attrs, "master "+l.Master)
	}
	name := l.Name
	if l.Kind == KindVeth {
		name += " <-> " + l.Peer
	}
	return fmt.Sprintf("create %s %s (%s)", l.Kind, name, strings.Join(attrs, ", "))
}

// deleteLink deletes an owned link (for a veth, the pair).
type deleteLink struct {
	Name   string
	Kind   LinkKind
	Reason string
	inPhase
}

// Effect says the link is deleted.
func (d *deleteLink) Effect() (string, LinkEffect) { return d.Name, LinkDeleted }

func (d *deleteLink) String() string {
	return fmt.Sprintf("delete %s %s (%s)", d.Kind, d.Name, d.Reason)
}

// setAlias marks a link as owned (a veth end whose alias was not set yet) or corrects its role.
type setAlias struct {
	Name, From, To string
	inPhase
}

func (s *setAlias) String() string {
	return fmt.Sprintf("set alias of %s %q -> %q", s.Name, s.From, s.To)
}

// setMTU changes a link's MTU.
type setMTU struct {
	Name     string
	From, To int
	inPhase
}

func (s *setMTU) String() string { return fmt.Sprintf("set mtu of %s %d -> %d", s.Name, s.From, s.To) }

// setMAC changes a link's MAC address.
type setMAC struct {
	Name     string
	From, To net.HardwareAddr
	inPhase
}

func (s *setMAC) String() string { return fmt.Sprintf("set mac of %s %s -> %s", s.Name, s.From, s.To) }

// setMaster enslaves a link ("" To: releases it).
type setMaster struct {
	Name, From, To string
	inPhase
}

func (s *setMaster) String() string {
	return fmt.Sprintf("set master of %s %s -> %s", s.Name, noneIfEmpty(s.From), noneIfEmpty(s.To))
}

// setPortFlags sets a bridge port's learning and neigh_suppress flags.
type setPortFlags struct {
	Name     string
	From, To PortFlags
	inPhase
}

func (s *setPortFlags) String() string {
	return fmt.Sprintf("set bridge port flags of %s: %s", s.Name, s.To)
}

// setUp brings a link administratively up.
type setUp struct {
	Name string
	inPhase
}

func (s *setUp) String() string { return fmt.Sprintf("set %s up", s.Name) }

// addAddr adds (or replaces, to change flags) an address.
type addAddr struct {
	Link string
	Addr Address
	inPhase
}

func (a *addAddr) String() string { return fmt.Sprintf("add address %s to %s", a.Addr, a.Link) }

// delAddr removes an address from an owned link.
type delAddr struct {
	Link string
	Addr Address
	inPhase
}

func (d *delAddr) String() string {
	return fmt.Sprintf("delete address %s from %s (no longer desired)", d.Addr.Prefix, d.Link)
}

// replaceRoute adds or replaces a route (From is the observed route it replaces, nil when new).
type replaceRoute struct {
	Route RouteSpec
	From  *RouteSpec
	inPhase
}

func (r *replaceRoute) String() string {
	if r.From != nil {
		return fmt.Sprintf("replace route %s (was %s)", r.Route, r.From)
	}
	return fmt.Sprintf("add route %s", r.Route)
}

// delRoute deletes an owned route.
type delRoute struct {
	Route RouteSpec
	inPhase
}

func (d *delRoute) String() string {
	return fmt.Sprintf("delete route %s (no longer desired)", d.Route)
}

// addRule adds a policy routing rule.
type addRule struct {
	Rule RuleSpec
	inPhase
}

func (a *addRule) String() string { return fmt.Sprintf("add rule %s", a.Rule) }

// delRule deletes an owned rule.
type delRule struct {
	Rule RuleSpec
	inPhase
}

func (d *delRule) String() string { return fmt.Sprintf("delete rule %s (no longer desired)", d.Rule) }

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// setSegmentation turns segmentation offload features of a link off (Off) or on again, and records in the
// link's alias what it turned off (turning on clears the record).
type setSegmentation struct {
	Name string
	Off  bool
	// Features are those to switch: tso, gso, gro (turning on: those nodenet turned off).
	Features []string
	inPhase
}

func (s *setSegmentation) String() string {
	if s.Off {
		return fmt.Sprintf("set segmentation off on %s (%s)", s.Name, strings.Join(s.Features, ", "))
	}
	if len(s.Features) == 0 {
		return fmt.Sprintf("forget segmentation off on %s (nothing to turn on again)", s.Name)
	}
	return fmt.Sprintf("set segmentation on again on %s (%s, turned off by the agent)", s.Name, strings.Join(s.Features, ", "))
}

// addFlood adds a peer VTEP to a VXLAN's static flooding: "bridge fdb append 00:00:00:00:00:00 dev <vxlan> dst
// <peer> self permanent".
type addFlood struct {
	Link string
	Peer netip.Addr
	inPhase
}

func (a *addFlood) String() string {
	return fmt.Sprintf("add flood entry %s dst %s to %s (static flooding)", zeroMAC, a.Peer, a.Link)
}

// delFlood removes a peer VTEP from a VXLAN's static flooding.
type delFlood struct {
	Link string
	Peer netip.Addr
	inPhase
}

func (d *delFlood) String() string {
	return fmt.Sprintf("delete flood entry %s dst %s from %s (no longer a peer)", zeroMAC, d.Peer, d.Link)
}

// zeroMAC is the FDB address of a VXLAN's flood entries: the destinations of broadcast, multicast and unknown
// unicast frames.
var zeroMAC = net.HardwareAddr{0, 0, 0, 0, 0, 0}
