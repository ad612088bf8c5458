package netnstest

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestMirrorSeesRoutedIngress: a mirror of r's ingress interface ra copies exactly the selected packets to a
// collector although the eBPF router redirects every one of them. tcx (and XDP) run before clsact's filters,
// so with the router on tcx the collector gets nothing; the attach plan moves the router of a mirrored
// interface to a clsact filter behind the mirror's filters, and then every selected packet is copied and
// still forwarded. The collector col sits behind r:tgt (standing in for the GRE tunnel) and has IPv6 off, so
// every frame it receives is a copy.
func TestMirrorSeesRoutedIngress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l := lab.New(t)
	topo := lineTopology(lineOptions{v4only: true})
	topo.Namespaces = append(topo.Namespaces, lab.Namespace{Name: "col", Sysctls: []lab.Sysctl{
		{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"}, {Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"}}})
	topo.Veths = append(topo.Veths, lab.Veth{A: lab.Port{NS: "r", Name: "tgt"}, B: lab.Port{NS: "col", Name: "cap"}})
	l.MustBuild(ctx, topo)
	a, r, b, col := l.NS("a"), l.NS("r"), l.NS("b"), l.NS("col")

	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	rt.attach(t, loader.ModeTCX, "ra", "rb") // the first phase is tcx before the mirror's filters
	rt.apply(t, lineTables(t, r, tableMain, "ra", "rb"), "mirror-1")

	// The mirror: UDP to port 5001 arriving on ra.
	spec := &v1.NodeNetworkConfigSpec{Mirrors: []v1.NodeMirror{{Name: "sel", Layer2: "l2a", Direction: v1.MirrorIngress,
		Match:  v1.TrafficMatch{Protocol: new("udp"), DstPort: new(int32(5001))},
		Target: v1.NodeMirrorTarget{Name: "collector", Type: v1.MirrorTargetL2GRE, DestinationIP: "192.0.2.9"}}}}
	source := &nodenet.Desired{Links: []nodenet.LinkSpec{{Name: "ra", Kind: nodenet.KindVXLAN,
		Alias: nodenet.Alias(nodenet.RoleL2VXLAN, "l2a")}}}
	rules, probs := mirror.Rules(spec, source, map[string]string{"collector": "tgt"})
	if len(probs) > 0 || len(rules) == 0 {
		t.Fatalf("rules %v, problems %v", rules, probs)
	}
	m := mirror.New(r.Handle(), r.NsHandle())
	mp, err := m.PlanFor(ctx, nil, rules)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(ctx, mp); err != nil {
		t.Fatalf("apply mirror: %v", err)
	}

	// b listens on both ports, so it answers with no ICMP error that r would forward too.
	for _, port := range []int{5001, 5002} {
		listenUDP(t, b, port)
	}
	// send sends n datagrams to b for each port and returns how many frames the collector got and how many
	// packets the router forwarded meanwhile. The mirror's filter copies a packet (into the veth, whose peer
	// counts it at once) before the router's filter counts it, so once the router has counted every packet,
	// every copy there will be is counted too: no settling time.
	send := func(n int, ports ...int) (copies, forwarded uint64) {
		t.Helper()
		fwd := func() uint64 { return rt.counter(t, vrfID, maps.ReasonForwardedFib).Packets }
		before, fwdBefore := rxPackets(t, col, "cap"), fwd()
		for _, port := range ports {
			sendUDPTo(t, a, netip.AddrPortFrom(hostB4, uint16(port)), n)
		}
		want := fwdBefore + uint64(n*len(ports))
		waittest.Must(t, 10*time.Millisecond, 5*time.Second, "router forwards the datagrams", waittest.Check(func() (bool, error) {
			return fwd() >= want, nil
		}))
		return rxPackets(t, col, "cap") - before, fwd() - fwdBefore
	}

	if copies, fwd := send(4, 5001, 5002); copies != 0 || fwd != 8 {
		t.Fatalf("router on tcx: collector got %d copies (want 0: tcx runs before the mirror filter), router forwarded %d of 8", copies, fwd)
	}

	// The attach plan for a mirrored ingress, executed by the loader as the agent does.
	plan := dataplane.PlanAttach(dataplane.AttachInput{
		Want:     []v1.DataPlaneInterface{{Name: "ra", VRF: "red", Hook: v1.HookAuto}, {Name: "rb", VRF: "red", Hook: v1.HookAuto}},
		Attached: rt.ldr.Attachments(), Ifindex: ifindexes(t, r, "ra", "rb"),
		MirroredIngress: map[string]string{"ra": "sel"},
	})
	for _, s := range plan.Attach {
		switch {
		case s.Interface == "ra" && (s.Action != dataplane.ActionMove || len(s.Modes) != 1 || s.Modes[0] != loader.ModeTC):
			t.Fatalf("plan for the mirrored ra: %+v, want a move to tc", s)
		case s.Interface == "rb" && s.Changes():
			t.Fatalf("plan for rb (not mirrored): %+v, want keep", s)
		case s.Changes():
			if _, err := rt.ldr.Attach(ctx, s.Interface, s.Modes[0]); err != nil {
				t.Fatalf("move %s to %s: %v", s.Interface, s.Modes[0], err)
			}
		}
	}

	if copies, fwd := send(4, 5001, 5002); copies != 4 || fwd != 8 {
		t.Fatalf("router behind the mirror: collector got %d copies, want exactly the 4 to port 5001; router forwarded %d of 8", copies, fwd)
	}
}

// sendUDPTo sends n datagrams from ns to dst.
func sendUDPTo(t *testing.T, ns *lab.Netns, dst netip.AddrPort, n int) {
	t.Helper()
	err := ns.Do(func() error {
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(dst))
		if err != nil {
			return err
		}
		defer c.Close()
		for range n {
			if _, err := c.Write([]byte("mirror-test")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("send to %s: %v", dst, err)
	}
}

func rxPackets(t *testing.T, ns *lab.Netns, dev string) uint64 {
	t.Helper()
	link, err := ns.Link(dev)
	if err != nil {
		t.Fatal(err)
	}
	return link.Attrs().Statistics.RxPackets
}

// listenUDP opens a UDP socket on port in ns until the test ends.
func listenUDP(t *testing.T, ns *lab.Netns, port int) {
	t.Helper()
	var c *net.UDPConn
	err := ns.Do(func() error {
		var err error
		c, err = net.ListenUDP("udp4", &net.UDPAddr{Port: port})
		return err
	})
	if err != nil {
		t.Fatalf("listen on udp %d: %v", port, err)
	}
	t.Cleanup(func() { c.Close() })
}

func ifindexes(t *testing.T, ns *lab.Netns, devs ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, d := range devs {
		idx, err := ns.Ifindex(d)
		if err != nil {
			t.Fatal(err)
		}
		out[d] = idx
	}
	return out
}
