package mirror

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// greKeyFlag is GRE_KEY (the key field is present).
const greKeyFlag = 0x2000

// link builds the netlink device of a tunnel; master and underlay are ifindexes (0: none).
func (t Tunnel) link(master, underlay int) netlink.Link {
	attrs := netlink.LinkAttrs{Name: t.Device, MasterIndex: master}
	remote := net.IP(t.Remote.AsSlice())
	// Without a source address the local end is the remote's family's unspecified address, never nil: netlink
	// takes a nil local for IPv6 (ip6gretap, ip6gre), which the kernel refuses for an IPv4 remote (ERANGE).
	local := net.IPv6unspecified
	if t.Remote.Is4() {
		local = net.IPv4zero.To4()
	}
	if t.Local.IsValid() {
		local = net.IP(t.Local.AsSlice())
	}
	var key uint32
	var flags uint16
	if t.Key != nil {
		key, flags = *t.Key, greKeyFlag
	}
	if t.Kind == "gretap" || t.Kind == "ip6gretap" {
		return &netlink.Gretap{LinkAttrs: attrs, Local: local, Remote: remote, Link: uint32(underlay),
			IKey: key, OKey: key, IFlags: flags, OFlags: flags}
	}
	return &netlink.Gretun{LinkAttrs: attrs, Local: local, Remote: remote, Link: uint32(underlay),
		IKey: key, OKey: key, IFlags: flags, OFlags: flags}
}

// underlay is the device that routes the tunnel's outer packets, besides its VRF device: in a VRF the source
// loopback (a slave of the VRF device, so the VRF's table routes them). In the default VRF none: the kernel sends
// a tunnel's packets out of its underlay device when the main table has no route through it, and the loopback is a
// dummy that drops them; without one the main table picks the egress. The source address is Local either way.
func (t Tunnel) underlay() string {
	if t.VRF == "" {
		return ""
	}
	return t.Loopback
}

// ensureTunnel (re-)creates the tunnel with its alias and sets it up. A kernel without the tunnel kind gives
// ErrNotSupported (remembered: later plans leave the kind's mirrors out without trying again).
func (m *Manager) ensureTunnel(t Tunnel) error {
	if old, err := m.h.LinkByName(t.Device); err == nil {
		if err := m.h.LinkDel(old); err != nil {
			return fmt.Errorf("replace tunnel %s: %w", t.Device, err)
		}
	}
	master, underlay := 0, 0
	if t.VRF != "" {
		l, err := m.h.LinkByName(t.VRF)
		if err != nil {
			return fmt.Errorf("tunnel %s: VRF device %s: %w", t.Device, t.VRF, err)
		}
		master, underlay = l.Attrs().Index, l.Attrs().Index
	}
	if lo := t.underlay(); lo != "" {
		if l, err := m.h.LinkByName(lo); err == nil {
			underlay = l.Attrs().Index
		}
	}
	if err := m.h.LinkAdd(t.link(master, underlay)); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			err = fmt.Errorf("%w: %s tunnels (creating %s: %w)", ErrNotSupported, t.Kind, t.Device, err)
			m.mu.Lock()
			m.unsupported[t.Kind] = err
			m.mu.Unlock()
			return err
		}
		return fmt.Errorf("create %s: %w", t, err)
	}
	l, err := m.h.LinkByName(t.Device)
	if err != nil {
		return fmt.Errorf("tunnel %s: %w", t.Device, err)
	}
	if err := m.h.LinkSetAlias(l, t.alias()); err != nil {
		_ = m.h.LinkDel(l)
		return fmt.Errorf("tunnel %s: set alias: %w", t.Device, err)
	}
	if err := m.h.LinkSetUp(l); err != nil {
		return fmt.Errorf("tunnel %s: set up: %w", t.Device, err)
	}
	return nil
}
