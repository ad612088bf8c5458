package netconf

import (
	"fmt"
	"net"
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
var Phases = [...]Phase{PhaseVRFs, PhaseInterfaces, PhaseRemovals}

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

// Action is one change to the kernel. String describes it for humans (dry-run output, errors).
type Action interface {
	Phase() Phase
	String() string
	apply(a *applier) error
	setPhase(Phase)
}

// inPhase is embedded by every action: the planner sets the phase from the action's step.
type inPhase struct{ phase Phase }

// Phase is the phase the action belongs to.
func (i *inPhase) Phase() Phase { return i.phase }

func (i *inPhase) setPhase(p Phase) { i.phase = p }

// CreateLink creates a link with its alias, MTU, MAC and master (a veth with its peer).
type CreateLink struct {
	Link LinkSpec
	inPhase
}

func (c *CreateLink) String() string {
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

// DeleteLink deletes an owned link (for a veth, the pair).
type DeleteLink struct {
	Name   string
	Kind   LinkKind
	Reason string
	inPhase
}

func (d *DeleteLink) String() string {
	return fmt.Sprintf("delete %s %s (%s)", d.Kind, d.Name, d.Reason)
}

// SetAlias marks a link as owned (a veth end whose alias was not set yet) or corrects its role.
type SetAlias struct {
	Name, From, To string
	inPhase
}

func (s *SetAlias) String() string {
	return fmt.Sprintf("set alias of %s %q -> %q", s.Name, s.From, s.To)
}

// SetMTU changes a link's MTU.
type SetMTU struct {
	Name     string
	From, To int
	inPhase
}

func (s *SetMTU) String() string { return fmt.Sprintf("set mtu of %s %d -> %d", s.Name, s.From, s.To) }

// SetMAC changes a link's MAC address.
type SetMAC struct {
	Name     string
	From, To net.HardwareAddr
	inPhase
}

func (s *SetMAC) String() string { return fmt.Sprintf("set mac of %s %s -> %s", s.Name, s.From, s.To) }

// SetMaster enslaves a link ("" To: releases it).
type SetMaster struct {
	Name, From, To string
	inPhase
}

func (s *SetMaster) String() string {
	return fmt.Sprintf("set master of %s %s -> %s", s.Name, noneIfEmpty(s.From), noneIfEmpty(s.To))
}

// SetPortFlags sets a bridge port's learning and neigh_suppress flags.
type SetPortFlags struct {
	Name     string
	From, To PortFlags
	inPhase
}

func (s *SetPortFlags) String() string {
	return fmt.Sprintf("set bridge port flags of %s: %s", s.Name, s.To)
}

// SetUp brings a link administratively up.
type SetUp struct {
	Name string
	inPhase
}

func (s *SetUp) String() string { return fmt.Sprintf("set %s up", s.Name) }

// AddAddr adds (or replaces, to change flags) an address.
type AddAddr struct {
	Link string
	Addr Address
	inPhase
}

func (a *AddAddr) String() string { return fmt.Sprintf("add address %s to %s", a.Addr, a.Link) }

// DelAddr removes an address from an owned link.
type DelAddr struct {
	Link string
	Addr Address
	inPhase
}

func (d *DelAddr) String() string {
	return fmt.Sprintf("delete address %s from %s (no longer desired)", d.Addr.Prefix, d.Link)
}

// ReplaceRoute adds or replaces a route (From is the observed route it replaces, nil when new).
type ReplaceRoute struct {
	Route RouteSpec
	From  *RouteSpec
	inPhase
}

func (r *ReplaceRoute) String() string {
	if r.From != nil {
		return fmt.Sprintf("replace route %s (was %s)", r.Route, r.From)
	}
	return fmt.Sprintf("add route %s", r.Route)
}

// DelRoute deletes an owned route.
type DelRoute struct {
	Route RouteSpec
	inPhase
}

func (d *DelRoute) String() string {
	return fmt.Sprintf("delete route %s (no longer desired)", d.Route)
}

// AddRule adds a policy routing rule.
type AddRule struct {
	Rule RuleSpec
	inPhase
}

func (a *AddRule) String() string { return fmt.Sprintf("add rule %s", a.Rule) }

// DelRule deletes an owned rule.
type DelRule struct {
	Rule RuleSpec
	inPhase
}

func (d *DelRule) String() string { return fmt.Sprintf("delete rule %s (no longer desired)", d.Rule) }

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
