package mirror_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	tc "github.com/florianl/go-tc"
	"github.com/florianl/go-tc/core"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/cleanup"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// The mirroring path, with a veth into a "collector" namespace standing in for the GRE tunnel: peer (10.0.0.2)
// -- node:src (10.0.0.1, the mirror source) ; node:tgt -- col:cap (the collector, counting frames with an
// AF_PACKET socket). IPv6 is off in node and col, so every frame col receives is a copy.
func newLab(t *testing.T) *lab.Lab {
	t.Helper()
	l := lab.New(t)
	noV6 := []lab.Sysctl{{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"}, {Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l.MustBuild(ctx, lab.Topology{
		Namespaces: []lab.Namespace{{Name: "peer"},
			{Name: "node", Sysctls: append([]lab.Sysctl{{Key: "net.ipv4.icmp_ratelimit", Value: "0"}}, noV6...)},
			{Name: "col", Sysctls: noV6}},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "peer", Name: "eth0", Addrs: []string{"10.0.0.2/24"}}, B: lab.Port{NS: "node", Name: "src", Addrs: []string{"10.0.0.1/24"}}},
			{A: lab.Port{NS: "node", Name: "tgt"}, B: lab.Port{NS: "col", Name: "cap"}},
		},
	})
	return l
}

// desiredWithSource is nodenet's view of a node whose layer-2 network "l2a" has its VXLAN port named src.
func desiredWithSource() *nodenet.Desired {
	return &nodenet.Desired{Links: []nodenet.LinkSpec{{Name: "src", Kind: nodenet.KindVXLAN, Alias: nodenet.Alias(nodenet.RoleL2VXLAN, "l2a")}}}
}

func ptr[T any](v T) *T { return &v }

// capture counts the frames arriving at col:cap until stop.
type capture struct {
	fd int
}

func startCapture(t *testing.T, col *lab.Netns) *capture {
	t.Helper()
	var c capture
	err := col.Do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		idx, err := col.Ifindex("cap")
		if err != nil {
			unix.Close(fd)
			return err
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: idx}); err != nil {
			unix.Close(fd)
			return err
		}
		c.fd = fd
		return nil
	})
	if err != nil {
		t.Fatalf("AF_PACKET socket in col: %v", err)
	}
	t.Cleanup(func() { unix.Close(c.fd) })
	return &c
}

// frames reads what arrived within wait: the copies, as (IP protocol, destination port) strings.
func (c *capture) frames(t *testing.T, wait time.Duration) []string {
	t.Helper()
	tv := unix.NsecToTimeval(int64(wait))
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	var out []string
	buf := make([]byte, 2048)
	for {
		n, from, err := unix.Recvfrom(c.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return out
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		out = append(out, describe(buf[:n]))
	}
}

func describe(f []byte) string {
	if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:]) != unix.ETH_P_IP {
		return "non-ip"
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	switch ip[9] {
	case 17:
		return "udp:" + strconv.Itoa(int(binary.BigEndian.Uint16(ip[ihl+2:])))
	case 1:
		return "icmp:" + strconv.Itoa(int(ip[ihl]))
	}
	return "ip:" + strconv.Itoa(int(ip[9]))
}

func htons(v uint16) uint16 { return v>>8 | v<<8 }

// sendUDP sends one datagram from peer to 10.0.0.1:port; options are IPv4 options (a longer header).
func sendUDP(t *testing.T, peer *lab.Netns, port int, options []byte) {
	t.Helper()
	err := peer.Do(func() error {
		c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: port})
		if err != nil {
			return err
		}
		defer c.Close()
		if options != nil {
			rc, err := c.SyscallConn()
			if err != nil {
				return err
			}
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptString(int(fd), unix.IPPROTO_IP, unix.IP_OPTIONS, string(options))
			}); err != nil {
				return err
			}
			if serr != nil {
				return serr
			}
		}
		_, err = c.Write([]byte("mirror-test"))
		return err
	})
	if err != nil {
		t.Fatalf("send udp to %d: %v", port, err)
	}
}

func apply(t *testing.T, m *mirror.Manager, rules []mirror.Rule) *mirror.Plan {
	t.Helper()
	ctx := context.Background()
	p, err := m.PlanFor(ctx, nil, rules)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := m.Apply(ctx, p); err != nil {
		t.Fatalf("apply: %v\nplan: %s", err, strings.Join(p.Steps(), "\n"))
	}
	again, err := m.PlanFor(ctx, nil, rules)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Empty() {
		t.Fatalf("not converged, still to do:\n%s", strings.Join(again.Steps(), "\n"))
	}
	return p
}

func count(frames []string) map[string]int {
	m := map[string]int{}
	for _, f := range frames {
		m[f]++
	}
	return m
}

func TestMirrorSelectedTrafficOnly(t *testing.T) {
	testreq.Root(t)
	l := newLab(t)
	node, peer, col := l.NS("node"), l.NS("peer"), l.NS("col")
	m := mirror.New(node.Handle(), node.NsHandle())
	devices := map[string]string{"collector": "tgt"} // the GRE step's device, here a veth to the collector

	// Ingress, UDP from 10.0.0.2/32 to port 5001.
	spec := &v1.NodeNetworkConfigSpec{Mirrors: []v1.NodeMirror{{Name: "sel", Layer2: "l2a", Direction: v1.MirrorIngress,
		Match:  v1.TrafficMatch{SrcPrefix: ptr("10.0.0.2/32"), Protocol: ptr("udp"), DstPort: ptr(int32(5001))},
		Target: v1.NodeMirrorTarget{Name: "collector", Type: v1.MirrorTargetL2GRE, DestinationIP: "192.0.2.9", VRF: "default"}}}}
	rules, probs := mirror.Rules(spec, desiredWithSource(), devices)
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	apply(t, m, rules)
	capt := startCapture(t, col)
	for range 3 {
		sendUDP(t, peer, 5001, nil)
	}
	sendUDP(t, peer, 5001, []byte{1, 1, 1, 0}) // IPv4 options: header length 24, still selected
	for range 2 {
		sendUDP(t, peer, 5002, nil) // other port
	}
	got := count(capt.frames(t, 500*time.Millisecond))
	if len(got) != 1 || got["udp:5001"] != 4 {
		t.Fatalf("collector got %v, want exactly 4 udp:5001 (ingress, 3 plain + 1 with IP options)", got)
	}

	// Egress, ICMP: the node's port unreachables for those datagrams, and nothing else.
	spec.Mirrors[0].Direction, spec.Mirrors[0].Match = v1.MirrorEgress, v1.TrafficMatch{Protocol: ptr("icmp")}
	rules, _ = mirror.Rules(spec, desiredWithSource(), devices)
	p := apply(t, m, rules)
	if len(p.DelRules) == 0 || len(p.AddRules) == 0 {
		t.Fatalf("changed match: want the old filters replaced, plan:\n%s", strings.Join(p.Steps(), "\n"))
	}
	capt = startCapture(t, col)
	for _, port := range []int{6001, 6002, 6003} {
		sendUDP(t, peer, port, nil)
	}
	got = count(capt.frames(t, 500*time.Millisecond))
	if len(got) != 1 || got["icmp:3"] != 3 {
		t.Fatalf("collector got %v, want exactly 3 icmp:3 (port unreachable, egress)", got)
	}

	// Removal: nothing of ours is left, not even the clsact qdisc.
	apply(t, m, nil)
	capt = startCapture(t, col)
	sendUDP(t, peer, 6001, nil)
	if got := capt.frames(t, 300*time.Millisecond); len(got) != 0 {
		t.Fatalf("after removal the collector still got %v", got)
	}
	if q := clsact(t, node, "src"); q {
		t.Fatalf("clsact qdisc left on src after removal")
	}
}

func TestMirrorLeavesForeignFilters(t *testing.T) {
	testreq.Root(t)
	l := newLab(t)
	node := l.NS("node")
	m := mirror.New(node.Handle(), node.NsHandle())
	addForeign(t, node, "src")
	spec := &v1.NodeNetworkConfigSpec{Mirrors: []v1.NodeMirror{{Name: "all", Layer2: "l2a", Direction: v1.MirrorIngress,
		Target: v1.NodeMirrorTarget{Name: "collector", Type: v1.MirrorTargetL2GRE, DestinationIP: "192.0.2.9"}}}}
	rules, _ := mirror.Rules(spec, desiredWithSource(), map[string]string{"collector": "tgt"})
	if len(rules) != 2 {
		t.Fatalf("match-all: want one IPv4 and one IPv6 rule, got %v", rules)
	}
	apply(t, m, rules)
	if n := filters(t, node, "src"); n < 3 {
		t.Fatalf("want the foreign filter and ours, found %d filter entries", n)
	}
	apply(t, m, nil)
	if !clsact(t, node, "src") {
		t.Fatal("the clsact qdisc holding a foreign filter was removed")
	}
	if n := filters(t, node, "src"); n == 0 {
		t.Fatal("the foreign filter was removed")
	}
	obs, err := m.Observe(context.Background())
	if err != nil || len(obs.Filters) != 0 {
		t.Fatalf("observed after removal: %+v, %v", obs, err)
	}
}

func openTC(t *testing.T, ns *lab.Netns) *tc.Tc {
	t.Helper()
	c, err := tc.Open(&tc.Config{NetNS: int(ns.NsHandle())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func clsact(t *testing.T, ns *lab.Netns, dev string) bool {
	t.Helper()
	idx, err := ns.Ifindex(dev)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := openTC(t, ns).Qdisc().Get()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Kind == "clsact" && int(q.Ifindex) == idx {
			return true
		}
	}
	return false
}

func filters(t *testing.T, ns *lab.Netns, dev string) int {
	t.Helper()
	idx, err := ns.Ifindex(dev)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := openTC(t, ns).Filter().Get(&tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(idx),
		Parent: core.BuildHandle(tc.HandleRoot, tc.HandleMinIngress)})
	if err != nil {
		t.Fatal(err)
	}
	return len(fs)
}

// addForeign puts somebody else's u32 filter (a classid, no action) on dev's clsact ingress, after ours.
func addForeign(t *testing.T, ns *lab.Netns, dev string) {
	t.Helper()
	idx, err := ns.Ifindex(dev)
	if err != nil {
		t.Fatal(err)
	}
	c := openTC(t, ns)
	if err := c.Qdisc().Add(&tc.Object{Msg: tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(idx),
		Handle: core.BuildHandle(tc.HandleRoot, 0), Parent: tc.HandleIngress}, Attribute: tc.Attribute{Kind: "clsact"}}); err != nil {
		t.Fatal(err)
	}
	classID := uint32(0x10001)
	if err := c.Filter().Add(&tc.Object{Msg: tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(idx),
		Parent: core.BuildHandle(tc.HandleRoot, tc.HandleMinIngress), Info: 0x7000<<16 | uint32(htons(unix.ETH_P_ALL))},
		Attribute: tc.Attribute{Kind: "u32", U32: &tc.U32{Sel: &tc.U32Sel{Flags: 1, NKeys: 1, Keys: []tc.U32Key{{}}}, ClassID: &classID}}}); err != nil {
		t.Fatal(err)
	}
}

// TestCleanupRemovesMirrors: `network-agent cleanup` (the uninstall) removes our mirror filters and keeps a
// foreign one.
func TestCleanupRemovesMirrors(t *testing.T) {
	testreq.Root(t)
	l := newLab(t)
	node := l.NS("node")
	m := mirror.New(node.Handle(), node.NsHandle())
	addForeign(t, node, "src")
	spec := &v1.NodeNetworkConfigSpec{Mirrors: []v1.NodeMirror{{Name: "all", Layer2: "l2a", Direction: v1.MirrorIngress,
		Target: v1.NodeMirrorTarget{Name: "collector", Type: v1.MirrorTargetL2GRE, DestinationIP: "192.0.2.9"}}}}
	rules, _ := mirror.Rules(spec, desiredWithSource(), map[string]string{"collector": "tgt"})
	apply(t, m, rules)
	nc, err := nodenet.New(node.Handle(), nodenet.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := cleanup.Options{Netlink: nc, Mirror: m}
	plan, err := cleanup.PlanCleanup(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Empty() || len(plan.Mirror.DelRules) != len(rules) || !strings.Contains(plan.String(), "mirror: delete filter") {
		t.Fatalf("cleanup plan does not remove our %d filters:\n%s", len(rules), plan)
	}
	var out strings.Builder
	if err := cleanup.Apply(ctx, o, plan, &out); err != nil {
		t.Fatal(err)
	}
	if after, err := cleanup.PlanCleanup(ctx, o); err != nil || !after.Empty() {
		t.Fatalf("after cleanup (%v):\n%s", err, after)
	}
	if n := filters(t, node, "src"); n == 0 {
		t.Fatal("cleanup removed the foreign filter")
	}
}
