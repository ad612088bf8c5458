package podnet

import (
	"fmt"
	"net"
	"net/netip"
)

// Action is one change in the pod or on the host. String describes it (the printed plan, errors); Config is
// the PodNetworkConfig it serves ("" for removals and restores).
type Action interface {
	String() string
	Config() string
	apply(r *runner) error
}

// side says where a link is: "pod" or "host".
type side bool

const (
	inPod  side = false
	onHost side = true
)

func (s side) String() string {
	if s == onHost {
		return "host"
	}
	return "pod"
}

type forConfig struct{ config string }

// Config is the PodNetworkConfig the action serves.
func (f forConfig) Config() string { return f.config }

// createLink makes a pod interface: a veth pair (pod end in the pod, host end a port of the network's bridge), a
// macvlan on the network's bridge moved into the pod, or a vlan or bridge inside the pod; then marks it (and a
// veth's host end) with the alias.
type createLink struct {
	Link  Link
	Alias string
	forConfig
}

func (c *createLink) String() string { return "create " + c.Link.describe() }

// deleteLink deletes an owned link (a veth through its host end when that exists: the pair goes together).
type deleteLink struct {
	Name   string
	Kind   string
	Side   side
	Reason string
	forConfig
}

func (d *deleteLink) String() string {
	return fmt.Sprintf("delete %s %s %s (%s)", d.Side, d.Kind, d.Name, d.Reason)
}

// setAlias marks a link (a veth's pod end whose alias was not set yet).
type setAlias struct {
	Name, To string
	Side     side
	forConfig
}

func (s *setAlias) String() string {
	return fmt.Sprintf("set alias of %s %s to %q", s.Side, s.Name, s.To)
}

// setMTU changes an owned link's MTU, or the primary interface's (Primary: the original value is remembered or,
// restoring, forgotten).
type setMTU struct {
	Name     string
	Side     side
	From, To int
	Note     string
	// Primary: the link is the primary interface (tuned, not owned).
	Primary bool
	forConfig
}

func (s *setMTU) String() string {
	return fmt.Sprintf("set mtu of %s %s %d -> %d%s", s.Side, s.Name, s.From, s.To, s.Note)
}

// setTxQueueLen changes the primary interface's transmit queue length.
type setTxQueueLen struct {
	Name     string
	From, To int
	Note     string
	forConfig
}

func (s *setTxQueueLen) String() string {
	return fmt.Sprintf("set txqueuelen of pod %s %d -> %d%s", s.Name, s.From, s.To, s.Note)
}

// setMAC changes an owned pod link's MAC address.
type setMAC struct {
	Name     string
	From, To net.HardwareAddr
	forConfig
}

func (s *setMAC) String() string {
	return fmt.Sprintf("set mac of pod %s %s -> %s", s.Name, s.From, s.To)
}

// setMaster enslaves an owned link to a bridge ("" To: releases it).
type setMaster struct {
	Name, From, To string
	Side           side
	forConfig
}

func (s *setMaster) String() string {
	return fmt.Sprintf("set master of %s %s %s -> %s", s.Side, s.Name, noneIfEmpty(s.From), noneIfEmpty(s.To))
}

// setUp brings an owned link up.
type setUp struct {
	Name string
	Side side
	forConfig
}

func (s *setUp) String() string { return fmt.Sprintf("set %s %s up", s.Side, s.Name) }

// addAddr adds an address to an owned pod link.
type addAddr struct {
	Link string
	Addr netip.Prefix
	forConfig
}

func (a *addAddr) String() string { return fmt.Sprintf("add address %s to pod %s", a.Addr, a.Link) }

// delAddr removes an address from an owned pod link.
type delAddr struct {
	Link string
	Addr netip.Prefix
	forConfig
}

func (d *delAddr) String() string {
	return fmt.Sprintf("delete address %s from pod %s (no longer allocated or desired)", d.Addr, d.Link)
}

// addRoute adds a route to the pod's main table (never replacing a route that is not the agent's), or replaces
// the agent's own route (From).
type addRoute struct {
	Route Route
	From  *Route
	forConfig
}

func (a *addRoute) String() string {
	if a.From != nil {
		return fmt.Sprintf("replace route %s in the pod (was %s)", a.Route, a.From)
	}
	return fmt.Sprintf("add route %s in the pod", a.Route)
}

// delRoute deletes the agent's route from the pod.
type delRoute struct {
	Route Route
	forConfig
}

func (d *delRoute) String() string {
	return fmt.Sprintf("delete route %s from the pod (no longer desired)", d.Route)
}

// setSysctl writes one sysctl of the pod's namespace.
type setSysctl struct {
	Name     string
	From, To string
	Note     string
	forConfig
}

func (s *setSysctl) String() string {
	if s.From == "" {
		return fmt.Sprintf("set sysctl %s = %s in the pod%s", s.Name, s.To, s.Note)
	}
	return fmt.Sprintf("set sysctl %s %s -> %s in the pod%s", s.Name, s.From, s.To, s.Note)
}

// delNeigh deletes a neighbour entry on a host bridge for a removed interface's MAC.
type delNeigh struct {
	Neighbour
	forConfig
}

func (d *delNeigh) String() string {
	return fmt.Sprintf("delete host neighbour %s lladdr %s dev %s (interface removed)", d.IP, d.MAC, d.Dev)
}

// addFDB adds a static bridge FDB entry on the host for a pod interface's MAC on its veth's host end.
type addFDB struct {
	FDBEntry
	forConfig
}

func (a *addFDB) String() string {
	return fmt.Sprintf("add host fdb %s dev %s master %s static", a.MAC, a.Port, a.Bridge)
}

// delFDB deletes a bridge FDB entry on the host for a removed interface's MAC.
type delFDB struct {
	FDBEntry
	forConfig
}

func (d *delFDB) String() string {
	v := ""
	if d.VLAN != 0 {
		v = fmt.Sprintf(" vlan %d", d.VLAN)
	}
	return fmt.Sprintf("delete host fdb %s dev %s master %s%s (interface removed)", d.MAC, d.Port, d.Bridge, v)
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
