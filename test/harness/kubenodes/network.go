package kubenodes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Address plan: the management network is 172.30.X.0/24 (the host .1, node i .10+i) and node i's pods get
// 172.31.X.16i/28, with X the first value no address or route of the host overlaps - so a test and a demo can
// run side by side.
var (
	mgmtBase = netip.MustParsePrefix("172.30.0.0/16")
	podBase  = netip.MustParsePrefix("172.31.0.0/16")
	// serviceCIDR holds the Services' cluster IPs (kube-proxy's, only inside the nodes).
	serviceCIDR = netip.MustParsePrefix("10.96.0.0/16")
)

// nodeMgmtAddr is node i's (1-based) address on the management network.
func (c *Cluster) nodeMgmtAddr(i int) netip.Addr {
	a := c.subnet.Addr().As4()
	a[3] = byte(10 + i)
	return netip.AddrFrom4(a)
}

// nodePodCIDR is node i's (1-based) pod subnet.
func (c *Cluster) nodePodCIDR(i int) netip.Prefix {
	a := podBase.Addr().As4()
	a[2] = c.subnet.Addr().As4()[2]
	a[3] = byte(16 * i)
	return netip.PrefixFrom(netip.AddrFrom4(a), 28)
}

// clusterPodCIDR covers every node's pod subnet.
func (c *Cluster) clusterPodCIDR() netip.Prefix {
	a := podBase.Addr().As4()
	a[2] = c.subnet.Addr().As4()[2]
	return netip.PrefixFrom(netip.AddrFrom4(a), 24)
}

// startNetwork picks a free subnet and makes the management bridge with the host's address.
func (c *Cluster) startNetwork(ctx context.Context) error {
	used, err := hostPrefixes()
	if err != nil {
		return err
	}
	for x := 0; x < 256 && !c.subnet.IsValid(); x++ {
		m := netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 30, byte(x), 0}), 24)
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 31, byte(x), 0}), 24)
		free := true
		for _, u := range used {
			if u.Overlaps(m) || u.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			c.subnet = m
		}
	}
	if !c.subnet.IsValid() {
		return fmt.Errorf("no free /24 in %s and %s on this host", mgmtBase, podBase)
	}
	a := c.subnet.Addr().As4()
	a[3] = 1
	c.host = netip.AddrFrom4(a)
	c.bridge = c.opts.Prefix + "mg"
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: c.bridge}}
	if err := netlink.LinkAdd(br); err != nil {
		return fmt.Errorf("management bridge %s: %w", c.bridge, err)
	}
	c.onClose(func() error {
		if l, err := netlink.LinkByName(c.bridge); err == nil {
			return netlink.LinkDel(l)
		}
		return nil
	})
	if err := netlink.AddrAdd(br, &netlink.Addr{IPNet: prefixNet(netip.PrefixFrom(c.host, 24))}); err != nil {
		return fmt.Errorf("address of %s: %w", c.bridge, err)
	}
	if err := netlink.LinkSetUp(br); err != nil {
		return err
	}
	c.logf("management network %s on bridge %s (API server %s), pods %s", c.subnet, c.bridge, c.host, c.clusterPodCIDR())
	return ctx.Err()
}

// hostPrefixes are the host's addresses and routes (any table).
func hostPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("host addresses: %w", err)
	}
	for _, a := range addrs {
		if p, ok := netPrefix(a.IPNet); ok {
			out = append(out, p.Masked())
		}
	}
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: 0}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("host routes: %w", err)
	}
	for _, r := range routes {
		if p, ok := netPrefix(r.Dst); ok && p.Bits() > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

func netPrefix(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	bits, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), bits), true
}

func prefixNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}

// errIgnoreExists treats EEXIST as success (a route added twice).
func errIgnoreExists(err error) error {
	if err != nil && errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}
