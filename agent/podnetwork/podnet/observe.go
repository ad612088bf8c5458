package podnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// target is where one pod's objects are: the host's netlink handle, and the pod's namespace with a handle in it
// (none when the pod's namespace is gone).
type target struct {
	host      *netlink.Handle
	pod       *netlink.Handle
	podNS     netns.NsHandle
	sysctlDir string
	proto     uint8
}

// observe reads what one pod has of the agent's, and what the plan needs to decide: every link of the pod, its
// main-table routes, the sysctls desired or remembered, the host links that are the pod's (or hold a name it
// needs) and the bridges it joins, and the host's neighbour and FDB entries of the pod's MACs.
func observe(ctx context.Context, t target, d *Desired, rec *podrecords.Record) (*Observed, error) {
	o := &Observed{Record: rec, HasNetns: t.pod != nil}
	if t.pod != nil {
		if err := observePod(ctx, t, o); err != nil {
			return nil, err
		}
		keys := map[string]bool{}
		for _, s := range d.Sysctls {
			keys[s.Name] = true
		}
		if rec != nil {
			for k := range rec.Sysctls {
				keys[k] = true
			}
		}
		var err error
		if o.Sysctls, err = readSysctls(t, slices.Sorted(maps.Keys(keys))); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := observeHost(t, d, rec, o); err != nil {
		return nil, err
	}
	return o, nil
}

func observePod(ctx context.Context, t target, o *Observed) error {
	links, err := t.pod.LinkList()
	if err != nil {
		return fmt.Errorf("observe pod: list links: %w", err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	addrs, err := t.pod.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return fmt.Errorf("observe pod: list addresses: %w", err)
	}
	byLink := map[int][]netip.Prefix{}
	for _, a := range addrs {
		if a.Scope != unix.RT_SCOPE_UNIVERSE || a.IPNet == nil {
			continue // link-local and host addresses are the kernel's
		}
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		bits, _ := a.Mask.Size()
		byLink[a.LinkIndex] = append(byLink[a.LinkIndex], netip.PrefixFrom(ip.Unmap(), bits))
	}
	for _, l := range links {
		a := l.Attrs()
		pl := PodLink{Name: a.Name, Kind: l.Type(), Alias: a.Alias, Index: a.Index, MTU: a.MTU, TxQueueLen: a.TxQLen,
			Master: names[a.MasterIndex], Up: a.Flags&net.FlagUp != 0, ParentIndex: a.ParentIndex, Addrs: byLink[a.Index]}
		if len(a.HardwareAddr) > 0 {
			pl.MAC = slices.Clone(a.HardwareAddr)
		}
		switch v := l.(type) {
		case *netlink.Vlan:
			pl.VLAN = v.VlanId
			if a.NetNsID < 0 {
				pl.ParentName = names[a.ParentIndex]
			}
		case *netlink.Macvlan:
			pl.Mode = macvlanMode(v.Mode)
		}
		slices.SortFunc(pl.Addrs, func(x, y netip.Prefix) int { return strings.Compare(x.String(), y.String()) })
		o.PodLinks = append(o.PodLinks, pl)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	routes, err := t.pod.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("observe pod: list routes: %w", err)
	}
	for _, r := range routes {
		rt, ok := podRoute(r, names)
		if !ok {
			continue
		}
		if r.Protocol == netlink.RouteProtocol(t.proto) {
			o.Routes = append(o.Routes, rt)
		} else {
			o.Foreign = append(o.Foreign, rt)
		}
	}
	return nil
}

// macvlanModes pairs the API's macvlan modes with the kernel's: the one translation, both ways.
func macvlanModes() []struct {
	api v1.MACVLANMode
	nl  netlink.MacvlanMode
} {
	return []struct {
		api v1.MACVLANMode
		nl  netlink.MacvlanMode
	}{
		{v1.MACVLANBridge, netlink.MACVLAN_MODE_BRIDGE},
		{v1.MACVLANPrivate, netlink.MACVLAN_MODE_PRIVATE},
		{v1.MACVLANVEPA, netlink.MACVLAN_MODE_VEPA},
		{v1.MACVLANPassthru, netlink.MACVLAN_MODE_PASSTHRU},
	}
}

func macvlanMode(m netlink.MacvlanMode) v1.MACVLANMode {
	for _, p := range macvlanModes() {
		if p.nl == m {
			return p.api
		}
	}
	return v1.MACVLANMode(fmt.Sprintf("mode-%d", m))
}

// nlMacvlanMode is bridge for an unset mode (the API's default).
func nlMacvlanMode(m v1.MACVLANMode) netlink.MacvlanMode {
	for _, p := range macvlanModes() {
		if p.api == m {
			return p.nl
		}
	}
	return netlink.MACVLAN_MODE_BRIDGE
}

func podRoute(r netlink.Route, names map[int]string) (Route, bool) {
	var dst netip.Prefix
	if r.Dst == nil {
		if r.Family == unix.AF_INET6 {
			dst = netip.MustParsePrefix("::/0")
		} else {
			dst = netip.MustParsePrefix("0.0.0.0/0")
		}
	} else {
		ip, ok := netip.AddrFromSlice(r.Dst.IP)
		if !ok {
			return Route{}, false
		}
		bits, _ := r.Dst.Mask.Size()
		dst = netip.PrefixFrom(ip.Unmap(), bits)
	}
	rt := Route{Dst: dst, Dev: names[r.LinkIndex], Metric: uint32(r.Priority)}
	if gw, ok := netip.AddrFromSlice(r.Gw); ok {
		rt.Gateway = gw.Unmap()
	}
	return rt, true
}

// sysctlPath is the file of a sysctl below dir.
func sysctlPath(dir, name string) string {
	_, parts := sysctlDevice(name)
	return filepath.Join(append([]string{dir}, parts...)...)
}

// readSysctls reads the sysctls from a thread inside the pod's namespace (/proc/sys/net shows the reader's
// namespace); a key that does not exist is left out.
func readSysctls(t target, keys []string) (map[string]string, error) {
	out := map[string]string{}
	if len(keys) == 0 {
		return out, nil
	}
	err := netnsrun.Run(t.podNS, func() error {
		for _, k := range keys {
			b, err := os.ReadFile(sysctlPath(t.sysctlDir, k))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("read sysctl %s: %w", k, err)
			}
			out[k] = strings.TrimSpace(string(b))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("observe pod: %w", err)
	}
	return out, nil
}

// observeHost reads the host links of the pod (by alias), those holding a desired veth's host name, the bridges
// of the desired and remembered interfaces, and the neighbour and FDB entries there of the remembered MACs.
func observeHost(t target, d *Desired, rec *podrecords.Record, o *Observed) error {
	links, err := t.host.LinkList()
	if err != nil {
		return fmt.Errorf("observe host: list links: %w", err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	want := map[string]bool{}
	for _, l := range d.Links {
		want[l.HostName], want[l.Bridge] = true, true
	}
	macs := map[string]bool{}
	if rec != nil {
		for _, in := range rec.Interfaces {
			want[in.Bridge], want[in.HostName] = true, true
			if in.MAC != "" {
				macs[in.MAC] = true
			}
		}
	}
	delete(want, "")
	bridges := map[int]string{}
	for _, l := range links {
		a := l.Attrs()
		uid, _, ours := ParseAlias(a.Alias)
		if !(ours && uid == d.Pod.UID) && !want[a.Name] {
			continue
		}
		o.HostLinks = append(o.HostLinks, HostLink{Name: a.Name, Kind: l.Type(), Alias: a.Alias, Index: a.Index, MTU: a.MTU,
			Master: names[a.MasterIndex], Up: a.Flags&net.FlagUp != 0})
		if l.Type() == "bridge" && want[a.Name] {
			bridges[a.Index] = a.Name
		}
	}
	if len(macs) == 0 {
		return nil
	}
	for idx, br := range bridges {
		for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
			ns, err := t.host.NeighList(idx, fam)
			if err != nil {
				return fmt.Errorf("observe host: neighbours on %s: %w", br, err)
			}
			for _, n := range ns {
				if !macs[n.HardwareAddr.String()] || n.Flags&netlink.NTF_EXT_LEARNED != 0 || n.State&(netlink.NUD_PERMANENT|netlink.NUD_NOARP) != 0 {
					continue
				}
				ip, ok := netip.AddrFromSlice(n.IP)
				if !ok {
					continue
				}
				o.Neighbours = append(o.Neighbours, Neighbour{Dev: br, IP: ip.Unmap(), MAC: slices.Clone(n.HardwareAddr)})
			}
		}
	}
	fdb, err := t.host.NeighListExecute(netlink.Ndmsg{Family: unix.AF_BRIDGE})
	if err != nil {
		return fmt.Errorf("observe host: bridge fdb: %w", err)
	}
	for _, f := range fdb {
		br, ok := bridges[f.MasterIndex]
		if !ok || !macs[f.HardwareAddr.String()] || f.Flags&netlink.NTF_EXT_LEARNED != 0 || f.State&netlink.NUD_PERMANENT != 0 {
			continue
		}
		o.FDB = append(o.FDB, FDBEntry{Port: names[f.LinkIndex], Bridge: br, MAC: slices.Clone(f.HardwareAddr), VLAN: f.Vlan,
			Static: f.State&netlink.NUD_NOARP != 0})
	}
	sortHost(o)
	return nil
}

func sortHost(o *Observed) {
	slices.SortFunc(o.HostLinks, func(a, b HostLink) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(o.Neighbours, func(a, b Neighbour) int {
		if c := strings.Compare(a.Dev, b.Dev); c != 0 {
			return c
		}
		return a.IP.Compare(b.IP)
	})
	slices.SortFunc(o.FDB, func(a, b FDBEntry) int {
		if c := strings.Compare(a.Port, b.Port); c != 0 {
			return c
		}
		return bytes.Compare(a.MAC, b.MAC)
	})
}
