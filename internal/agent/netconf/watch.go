package netconf

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// changeWatch tells whether a namespace may have changed since the last read of it, from the kernel's own
// change notifications: one rtnetlink socket subscribed to every group whose objects Observe reads. A full read
// of a node with 4000 links costs ~150 ms, most of it the kernel building the link dump; a quiet node sends no
// notification, so the read before can be used again.
//
// The socket is drained only when asked (quiet): the kernel queues a notification on the socket before the
// change's netlink request returns, so every change that completed before quiet is seen by it. When the queue
// overflowed (ENOBUFS) notifications were lost, and quiet reports a change.
type changeWatch struct {
	mu    sync.Mutex
	sock  *nl.NetlinkSocket
	proto uint8 // route protocol of netconf's routes: other routes' notifications are not ours
	buf   []byte
}

// watchBuffer is the socket's receive buffer: room for the notifications of a busy second (zebra installing
// routes) so that a normal burst does not overflow it; an overflow only costs one full read.
const watchBuffer = 4 << 20

// newChangeWatch subscribes in namespace ns (0: the caller's) with a receive buffer of buffer bytes.
func newChangeWatch(ns netns.NsHandle, routeProtocol uint8, buffer int) (*changeWatch, error) {
	if ns == 0 {
		ns = netns.None()
	}
	// The groups of what Observe reads: links (with bridge port flags and offload features, which the kernel
	// reports as link changes), addresses, routes, rules, and FDB entries (flood entries of learning VXLANs).
	sock, err := nl.SubscribeAt(ns, netns.None(), unix.NETLINK_ROUTE,
		unix.RTNLGRP_LINK, unix.RTNLGRP_NEIGH,
		unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV6_IFADDR,
		unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE,
		unix.RTNLGRP_IPV4_RULE, unix.RTNLGRP_IPV6_RULE)
	if err != nil {
		return nil, fmt.Errorf("subscribe to netlink changes: %w", err)
	}
	fd := sock.GetFd()
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, buffer); err != nil {
		// Without CAP_NET_ADMIN the kernel caps the size at rmem_max; a smaller buffer overflows sooner.
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, buffer)
	}
	return &changeWatch{sock: sock, proto: routeProtocol, buf: make([]byte, 1<<16)}, nil
}

// quiet drains the queued notifications and reports whether none of them concerns what Observe reads. An error
// (the socket broke) counts as a change.
func (w *changeWatch) quiet() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	quiet := true
	for {
		n, _, err := unix.Recvfrom(w.sock.GetFd(), w.buf, unix.MSG_DONTWAIT)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return quiet, nil
		case errors.Is(err, unix.ENOBUFS):
			quiet = false // notifications were lost; the queue is usable again
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return false, fmt.Errorf("read netlink changes: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(w.buf[:n])
		if err != nil {
			return false, fmt.Errorf("parse netlink changes: %w", err)
		}
		for i := range msgs {
			if concernsObserve(&msgs[i], w.proto) {
				quiet = false
			}
		}
	}
}

// close stops the subscription (the socket holds a reference on its namespace).
func (w *changeWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sock.Close()
}

// concernsObserve reports whether a notification may change what Observe would read: any link or rule, a
// global address; a route of netconf's protocol (or one replacing another, which may have been ours); an FDB entry
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
	case unix.NLMSG_DONE, unix.NLMSG_NOOP:
		return false
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
