// Package netnstest holds the data-plane integration tests: real namespaces, veths, routing tables and the real
// eBPF router, loaded and attached by pkg/loader and programmed through pkg/maps. Kernel forwarding is off in
// the router namespace, so everything that crosses it went through the eBPF path.
package netnstest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// Addresses of the line topology a -- r -- b.
var (
	hostA4, hostA6 = netip.MustParseAddr("10.0.1.2"), netip.MustParseAddr("fd00:1::2")
	hostB4, hostB6 = netip.MustParseAddr("10.0.2.2"), netip.MustParseAddr("fd00:2::2")
	// serviceB lives on b's lo and is reached over either of r's two links to b (swap test).
	serviceB = netip.MustParseAddr("10.0.9.9")
)

const (
	vrfID      = 1
	tableMain  = 100 // the VRF's table: r's routes live only here
	tableAlt   = 200 // the same, but serviceB via the second link (swap test)
	standInDev = "fwd0"
)

// routerSysctls turn kernel forwarding off everywhere in r except on the stand-in device whose forwarding flag
// bpf_fib_lookup checks (the VRF entry's lookup_ifindex), in place of the VRF device this kernel lacks.
func routerSysctls(trafficDevs ...string) []lab.Sysctl {
	s := []lab.Sysctl{
		{Key: "net.ipv4.conf.all.forwarding", Value: "0"},
		{Key: "net.ipv4.conf.default.forwarding", Value: "0"},
		{Key: "net.ipv6.conf.all.forwarding", Value: "0"},
		{Key: "net.ipv6.conf.default.forwarding", Value: "0"},
	}
	for _, d := range trafficDevs {
		s = append(s, lab.Sysctl{Key: "net.ipv4.conf." + d + ".forwarding", Value: "0"},
			lab.Sysctl{Key: "net.ipv6.conf." + d + ".forwarding", Value: "0"})
	}
	return append(s, lab.Sysctl{Key: "net.ipv4.conf." + standInDev + ".forwarding", Value: "1"},
		lab.Sysctl{Key: "net.ipv6.conf." + standInDev + ".forwarding", Value: "1"})
}

// hostSysctls: loose reverse-path filtering, since in the swap test b receives on one link and answers on another.
var hostSysctls = []lab.Sysctl{
	{Key: "net.ipv4.conf.all.rp_filter", Value: "0"},
	{Key: "net.ipv4.conf.default.rp_filter", Value: "0"},
}

type lineOptions struct {
	// secondPath adds b.eth1 <-> r.rb2 and serviceB on b's lo, routed via rb in tableMain and via rb2 in
	// tableAlt.
	secondPath bool
	// v4only disables IPv6 in r, so r's own stack sends nothing (no MLD/ND) and link counters count only the
	// test's traffic.
	v4only   bool
	hostOffl map[string]bool // ethtool features of a.eth0 and b.eth0 (XDP modes)
}

// lineTopology is a -- r -- b. r has its addresses without connected routes in main, and its routes (connected
// subnets, its own addresses as local routes) only in tableMain. Every neighbour is permanent: no ARP/ND on the
// path, so flows start lossless from the first packet.
func lineTopology(o lineOptions) lab.Topology {
	v6 := func(addrs ...string) []string {
		if o.v4only {
			return nil
		}
		return addrs
	}
	rDevs := []string{"ra", "rb"}
	t := lab.Topology{
		Namespaces: []lab.Namespace{{Name: "a", Sysctls: hostSysctls}, {Name: "r"}, {Name: "b", Sysctls: hostSysctls}},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "a", Name: "eth0", Addrs: append([]string{"10.0.1.2/24"}, v6("fd00:1::2/64")...), Offloads: o.hostOffl},
				B: lab.Port{NS: "r", Name: "ra", Addrs: append([]string{"10.0.1.1/24"}, v6("fd00:1::1/64")...), NoPrefixRoute: true}},
			{A: lab.Port{NS: "b", Name: "eth0", Addrs: append([]string{"10.0.2.2/24"}, v6("fd00:2::2/64")...), Offloads: o.hostOffl},
				B: lab.Port{NS: "r", Name: "rb", Addrs: append([]string{"10.0.2.1/24"}, v6("fd00:2::1/64")...), NoPrefixRoute: true}},
		},
		Devices: []lab.Device{{Port: lab.Port{NS: "r", Name: standInDev}}},
		Routes: []lab.Route{
			{NS: "a", Dst: "default", Via: "10.0.1.1", Dev: "eth0"},
			{NS: "b", Dst: "default", Via: "10.0.2.1", Dev: "eth0"},
		},
		Neighbours: []lab.Neighbour{
			{NS: "a", Dev: "eth0", IP: "10.0.1.1", MACOf: "r/ra"},
			{NS: "b", Dev: "eth0", IP: "10.0.2.1", MACOf: "r/rb"},
			{NS: "r", Dev: "ra", IP: "10.0.1.2", MACOf: "a/eth0"},
			{NS: "r", Dev: "rb", IP: "10.0.2.2", MACOf: "b/eth0"},
		},
	}
	if !o.v4only {
		t.Routes = append(t.Routes,
			lab.Route{NS: "a", Dst: "default6", Via: "fd00:1::1", Dev: "eth0"},
			lab.Route{NS: "b", Dst: "default6", Via: "fd00:2::1", Dev: "eth0"})
		t.Neighbours = append(t.Neighbours,
			lab.Neighbour{NS: "a", Dev: "eth0", IP: "fd00:1::1", MACOf: "r/ra"},
			lab.Neighbour{NS: "b", Dev: "eth0", IP: "fd00:2::1", MACOf: "r/rb"},
			lab.Neighbour{NS: "r", Dev: "ra", IP: "fd00:1::2", MACOf: "a/eth0"},
			lab.Neighbour{NS: "r", Dev: "rb", IP: "fd00:2::2", MACOf: "b/eth0"})
	}
	vrfRoutes := func(table int) []lab.Route {
		rs := []lab.Route{
			{NS: "r", Table: table, Dst: "10.0.1.0/24", Dev: "ra"},
			{NS: "r", Table: table, Dst: "10.0.2.0/24", Dev: "rb"},
			{NS: "r", Table: table, Dst: "10.0.1.1/32", Dev: "ra", Type: lab.Local},
			{NS: "r", Table: table, Dst: "10.0.2.1/32", Dev: "rb", Type: lab.Local},
		}
		if o.v4only {
			return rs
		}
		return append(rs,
			lab.Route{NS: "r", Table: table, Dst: "fd00:1::/64", Dev: "ra"},
			lab.Route{NS: "r", Table: table, Dst: "fd00:2::/64", Dev: "rb"},
			lab.Route{NS: "r", Table: table, Dst: "fd00:1::1/128", Dev: "ra", Type: lab.Local},
			lab.Route{NS: "r", Table: table, Dst: "fd00:2::1/128", Dev: "rb", Type: lab.Local})
	}
	t.Routes = append(t.Routes, vrfRoutes(tableMain)...)
	if o.secondPath {
		rDevs = append(rDevs, "rb2")
		t.Namespaces[2].Loopback = []string{serviceB.String() + "/32"}
		t.Veths = append(t.Veths, lab.Veth{
			A: lab.Port{NS: "b", Name: "eth1", Addrs: []string{"10.0.3.2/24"}},
			B: lab.Port{NS: "r", Name: "rb2", Addrs: []string{"10.0.3.1/24"}, NoPrefixRoute: true}})
		t.Routes = append(t.Routes, vrfRoutes(tableAlt)...)
		t.Routes = append(t.Routes,
			lab.Route{NS: "r", Table: tableMain, Dst: serviceB.String() + "/32", Via: "10.0.2.2", Dev: "rb"},
			lab.Route{NS: "r", Table: tableAlt, Dst: "10.0.3.0/24", Dev: "rb2"},
			lab.Route{NS: "r", Table: tableAlt, Dst: serviceB.String() + "/32", Via: "10.0.3.2", Dev: "rb2"})
		t.Neighbours = append(t.Neighbours,
			lab.Neighbour{NS: "r", Dev: "rb2", IP: "10.0.3.2", MACOf: "b/eth1"},
			lab.Neighbour{NS: "b", Dev: "eth1", IP: "10.0.3.1", MACOf: "r/rb2"})
	}
	sys := routerSysctls(rDevs...)
	if o.v4only {
		// Before the links come up (Build applies sysctls first), so r never sends an IPv6 packet.
		sys = append([]lab.Sysctl{{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"},
			{Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"}}, sys...)
	}
	t.Namespaces[1].Sysctls = sys
	return t
}

// router is one loaded router: its loader and its maps, in namespace r of a lab.
type router struct {
	ns     *lab.Netns
	pinDir string
	ldr    *loader.Loader
	set    *maps.Set
}

func routerSpec(t testing.TB) *ebpf.CollectionSpec {
	t.Helper()
	spec, err := bpf.RouterSpec()
	if err != nil {
		t.Fatalf("load router spec: %v", err)
	}
	return spec
}

// loadRouter loads (or adopts) the router pinned in pinDir inside ns, and opens its maps. The loader's pins are
// removed at cleanup (before the lab removes the namespaces).
func loadRouter(t testing.TB, ns *lab.Netns, pinDir string, opts loader.Options) *router {
	t.Helper()
	ctx := context.Background()
	// The labs' VRFs are tables without devices (this machine has none): they route only where the kernel's
	// bpf_fib_lookup takes a table id; bpf's TestRouterThroughVRFDevice covers the others.
	if f, err := bpf.ProbeFeatures(); err != nil {
		t.Fatal(err)
	} else if !f.FIBTableID {
		testreq.KernelLacks(t, bpf.FeatureFIBTableID+" (the namespace tests route by table id)",
			errors.New("bpf_fib_lookup answers EINVAL to BPF_FIB_LOOKUP_TBID"))
	}
	if opts.Spec == nil {
		opts.Spec = routerSpec(t)
	}
	opts.PinDir = pinDir
	opts.NetNS = ns.NsHandle()
	ldr, err := loader.Load(ctx, opts)
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "a feature the router needs", err)
	}
	if err != nil {
		t.Fatalf("load router into %s: %v", pinDir, err)
	}
	set, err := maps.OpenPinned(pinDir)
	if err != nil {
		ldr.Close()
		t.Fatalf("open pinned maps: %v", err)
	}
	r := &router{ns: ns, pinDir: pinDir, ldr: ldr, set: set}
	t.Cleanup(func() {
		_ = r.set.Close()
		if err := r.ldr.Remove(context.Background()); err != nil && !errors.Is(err, loader.ErrClosed) {
			t.Errorf("remove router: %v", err)
		}
	})
	return r
}

// tcHook is the tc hook the router takes in ns: tcx, or legacy tc (clsact) on a kernel before 6.6, which answers
// EINVAL for the tcx attach type.
func tcHook(t testing.TB, ns *lab.Netns) loader.Mode {
	t.Helper()
	mode := loader.ModeTCX
	err := ns.Do(func() error {
		_, err := link.QueryPrograms(link.QueryOptions{Target: 1, Attach: ebpf.AttachTCXIngress})
		if errors.Is(err, unix.EINVAL) || errors.Is(err, link.ErrNotSupported) {
			mode, err = loader.ModeTC, nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("query tcx in %s: %v", ns.Name, err)
	}
	return mode
}

// attach attaches the router to the interfaces, skipping the test when the kernel lacks the mode.
func (r *router) attach(t testing.TB, mode loader.Mode, ifnames ...string) []loader.Attachment {
	t.Helper()
	var out []loader.Attachment
	for _, ifn := range ifnames {
		a, err := r.ldr.Attach(context.Background(), ifn, mode)
		if errors.Is(err, loader.ErrNotSupported) {
			testreq.KernelLacks(t, "attach mode "+string(mode), err)
		}
		if err != nil {
			t.Fatalf("attach %s to %s: %v", mode, ifn, err)
		}
		out = append(out, a)
	}
	return out
}

// lineTables routes everything arriving on ra and rb through the VRF's table. lookup is the stand-in device.
func lineTables(t testing.TB, ns *lab.Netns, table uint32, ifnames ...string) maps.Tables {
	t.Helper()
	fwd, err := ns.Ifindex(standInDev)
	if err != nil {
		t.Fatal(err)
	}
	tb := maps.Tables{VRFs: []maps.VRF{{ID: vrfID, TableID: table, LookupIfindex: uint32(fwd)}}}
	for _, ifn := range ifnames {
		idx, err := ns.Ifindex(ifn)
		if err != nil {
			t.Fatal(err)
		}
		tb.Interfaces = append(tb.Interfaces, maps.Interface{Ifindex: uint32(idx), VRF: vrfID, Mode: maps.ModeRoute})
	}
	return tb
}

func (r *router) apply(t testing.TB, tb maps.Tables, rev string) maps.Report {
	t.Helper()
	rep, err := r.set.Apply(context.Background(), tb, rev)
	if err != nil {
		t.Fatalf("apply %s: %v", rev, err)
	}
	return rep
}

// counter returns the VRF's counter for one reason (zero when the VRF saw nothing), from a Dump of the maps.
func (r *router) counter(t testing.TB, vrf uint32, reason maps.Reason) maps.Counter {
	t.Helper()
	snap, err := r.set.Dump(context.Background())
	if err != nil {
		t.Fatalf("dump maps: %v", err)
	}
	for _, c := range snap.Counters {
		if c.VRF == vrf {
			return c.ByReason[reason]
		}
	}
	return maps.Counter{}
}

// kernelForwarded is what the kernel itself forwarded in ns (IPv4 ForwDatagrams + IPv6 OutForwDatagrams): it
// must stay 0 in r, proving the eBPF path carried the traffic.
func kernelForwarded(t testing.TB, ns *lab.Netns) uint64 {
	t.Helper()
	ip, err := ns.SNMP("Ip")
	if err != nil {
		t.Fatal(err)
	}
	ip6, err := ns.SNMP("Ip6")
	if err != nil {
		t.Fatal(err)
	}
	return ip["ForwDatagrams"] + ip6["OutForwDatagrams"]
}

// assertKernelForwardingOff reads back every forwarding sysctl of r: off on all, default and the traffic devices.
func assertKernelForwardingOff(t testing.TB, ns *lab.Netns, devs ...string) {
	t.Helper()
	keys := []string{"net.ipv4.conf.all.forwarding", "net.ipv6.conf.all.forwarding",
		"net.ipv4.conf.default.forwarding", "net.ipv6.conf.default.forwarding"}
	for _, d := range devs {
		keys = append(keys, "net.ipv4.conf."+d+".forwarding", "net.ipv6.conf."+d+".forwarding")
	}
	for _, k := range keys {
		v, err := ns.ReadSysctl(k)
		if err != nil {
			t.Fatal(err)
		}
		if v != "0" {
			t.Fatalf("%s = %s in the router namespace, want 0", k, v)
		}
	}
}

// icmpEchoFrame is the Ethernet frame length of a default ping (56 bytes payload), as the program counts it.
func icmpEchoFrame(dst netip.Addr) uint64 {
	if dst.Is6() {
		return 14 + 40 + 8 + 56
	}
	return 14 + 20 + 8 + 56
}

func pingOK(ctx context.Context, t testing.TB, from *lab.Netns, dst netip.Addr, count int) {
	t.Helper()
	res, err := from.Ping(ctx, dst, lab.PingOptions{Count: count, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Received != count || res.Transmitted != count {
		t.Fatalf("ping %s from %s: %d/%d replies, want %d/%d\n%s", dst, from.Logical, res.Received,
			res.Transmitted, count, count, res.Output)
	}
}

func pingFails(ctx context.Context, t testing.TB, from *lab.Netns, dst netip.Addr) {
	t.Helper()
	res, err := from.Ping(ctx, dst, lab.PingOptions{Count: 3, Interval: 10 * time.Millisecond, Wait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Received != 0 || res.Transmitted != 3 {
		t.Fatalf("ping %s from %s: %d/%d replies, want 0/3\n%s", dst, from.Logical, res.Received, res.Transmitted, res.Output)
	}
}

func fmtCounter(c maps.Counter) string { return fmt.Sprintf("%d pkts/%d bytes", c.Packets, c.Bytes) }
