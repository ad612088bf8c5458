package netconf

import (
	"net"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/internal/lab"
)

// TestWatchOverflow: notifications lost to a full socket buffer count as a change, even when none of the lost
// ones concerned Observe; once drained, the watch is quiet again.
func TestWatchOverflow(t *testing.T) {
	l := lab.New(t)
	ns, err := l.AddNamespace("wo")
	if err != nil {
		t.Fatal(err)
	}
	w, err := newChangeWatch(ns.NsHandle(), DefaultRouteProtocol, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lo, err := ns.Handle().LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Handle().LinkSetUp(lo); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Quiet(); err != nil {
		t.Fatal(err)
	}
	route := func(i int) *netlink.Route {
		return &netlink.Route{Dst: &net.IPNet{IP: net.IPv4(198, 51, byte(i/256), byte(i%256)), Mask: net.CIDRMask(32, 32)},
			Table: 100, Type: unix.RTN_UNREACHABLE, Protocol: unix.RTPROT_BGP}
	}
	// One route of another protocol: not a change.
	if err := ns.Handle().RouteAdd(route(0)); err != nil {
		t.Fatal(err)
	}
	if q, err := w.Quiet(); err != nil || !q {
		t.Fatalf("one foreign route: quiet %v, %v; want quiet", q, err)
	}
	// Far more than 4 KiB of them: the kernel drops notifications.
	for i := 1; i < 500; i++ {
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
}
