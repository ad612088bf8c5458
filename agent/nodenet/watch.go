package nodenet

import (
	"bytes"
	"syscall"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// observeGroups are the rtnetlink groups of what Observe reads: links (with bridge port flags and offload
// features, which the kernel reports as link changes), addresses, routes, rules, and FDB entries (flood entries
// of learning VXLANs).
func observeGroups() []uint {
	return []uint{
		unix.RTNLGRP_LINK, unix.RTNLGRP_NEIGH,
		unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV6_IFADDR,
		unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE,
		unix.RTNLGRP_IPV4_RULE, unix.RTNLGRP_IPV6_RULE,
	}
}

// concernsObserve reports whether a notification may change what Observe would read: any link or rule, a
// global address; a route of nodenet's protocol (or one replacing another, which may have been ours); an FDB entry
// with the all-zero MAC (flood entries). Other routes (zebra's) and neighbours (ARP, learnt MACs) are not read.
func concernsObserve(m *syscall.NetlinkMessage, routeProtocol uint8) bool {
	switch m.Header.Type {
	case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
		if len(m.Data) < unix.SizeofRtMsg {
			return true
		}
		const protocolOffset = 5 // rtmsg: family, dst_len, src_len, tos, table, protocol
		return m.Data[protocolOffset] == routeProtocol || m.Header.Flags&unix.NLM_F_REPLACE != 0
	case unix.RTM_NEWADDR, unix.RTM_DELADDR:
		if len(m.Data) < unix.SizeofIfAddrmsg {
			return true
		}
		const scopeOffset = 3                                // ifaddrmsg: family, prefixlen, flags, scope
		return m.Data[scopeOffset] == unix.RT_SCOPE_UNIVERSE // Observe reads global addresses only
	case unix.RTM_NEWNEIGH, unix.RTM_DELNEIGH:
		return zeroMACBridgeEntry(m.Data)
	}
	return true
}

// zeroMACBridgeEntry reports whether a neighbour message is an AF_BRIDGE entry whose MAC is all zeros.
func zeroMACBridgeEntry(data []byte) bool {
	if len(data) < unix.SizeofNdMsg {
		return true
	}
	if data[0] != unix.AF_BRIDGE {
		return false
	}
	attrs, err := nl.ParseRouteAttr(data[unix.SizeofNdMsg:])
	if err != nil {
		return true
	}
	for _, a := range attrs {
		if a.Attr.Type == unix.NDA_LLADDR {
			return bytes.Equal(a.Value, zeroMAC)
		}
	}
	return false
}
