package nlwatch

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/lab"
)

func route(i int) *netlink.Route {
	return &netlink.Route{Dst: &net.IPNet{IP: net.IPv4(198, 51, byte(i/256), byte(i%256)), Mask: net.CIDRMask(32, 32)},
		Table: 100, Type: unix.RTN_UNREACHABLE, Protocol: unix.RTPROT_BGP}
}

// ignoreAll concerns nothing: only an overflow makes a watch with it report a change.
func ignoreAll(*syscall.NetlinkMessage) bool { return false }

// TestWatchOverflow: notifications lost to a full socket buffer count as a change, even when none of the lost
// ones concerned the caller; once drained, the watch is quiet again; after Close it says so.
func TestWatchOverflow(t *testing.T) {
	ns, err := lab.New(t).AddNamespace("wo")
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(ns.NsHandle(), 4096, ignoreAll, unix.RTNLGRP_IPV4_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := ns.Handle().RouteAdd(route(0)); err != nil {
		t.Fatal(err)
	}
	if q, err := w.Quiet(); err != nil || !q {
		t.Fatalf("one route nobody cares about: quiet %v, %v; want quiet", q, err)
	}
	for i := 1; i < 500; i++ { // far more than 4 KiB of notifications: the kernel drops some
		if err := ns.Handle().RouteAdd(route(i)); err != nil {
			t.Fatal(err)
		}
	}
	if q, err := w.Quiet(); err != nil || q {
		t.Fatalf("overflowed: quiet %v, %v; want a change", q, err)
	}
	if q, err := w.Quiet(); err != nil || !q {
		t.Fatalf("after the drain: quiet %v, %v; want quiet", q, err)
	}
	w.Close()
	if _, err := w.Quiet(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// TestMemo: without Start every Read reads; with it a read is reused until a notification that concerns the
// caller, or while reusable says no; after stop every Read reads again.
func TestMemo(t *testing.T) {
	ns, err := lab.New(t).AddNamespace("memo")
	if err != nil {
		t.Fatal(err)
	}
	var m Memo[int]
	reads := 0
	read := func() (int, error) { reads++; return reads, nil }
	expect := func(what string, reusable func(int) bool, want int, wantReused bool) {
		t.Helper()
		v, reused, err := m.Read(read, reusable)
		if err != nil || v != want || reused != wantReused {
			t.Fatalf("%s: %d reused %v (%v), want %d reused %v", what, v, reused, err, want, wantReused)
		}
	}
	expect("no watch", nil, 1, false)
	expect("no watch, again", nil, 2, false)
	stop, err := m.Start(ns.NsHandle(), DefaultBuffer, func(msg *syscall.NetlinkMessage) bool {
		return msg.Header.Type == unix.RTM_NEWLINK || msg.Header.Type == unix.RTM_DELLINK
	}, unix.RTNLGRP_LINK, unix.RTNLGRP_IPV4_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	expect("first read with the watch", nil, 3, false)
	expect("quiet", nil, 3, true)
	if err := ns.Handle().RouteAdd(route(1)); err != nil {
		t.Fatal(err)
	}
	expect("a notification that does not concern", nil, 3, true)
	expect("not reusable", func(int) bool { return false }, 4, false)
	if err := ns.Handle().LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}); err != nil {
		t.Fatal(err)
	}
	expect("a link created", nil, 5, false)
	expect("quiet again", nil, 5, true)
	stop()
	stop()
	expect("stopped", nil, 6, false)
	expect("stopped, again", nil, 7, false)
}
