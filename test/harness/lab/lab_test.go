package lab

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// line builds a -- r -- b with kernel forwarding in r (the harness test checks the harness, not the eBPF router),
// r's routes to the end hosts only in table 100, selected by an ip rule.
func line() Topology {
	return Topology{
		Namespaces: []Namespace{
			{Name: "a"},
			{Name: "r", Sysctls: []Sysctl{
				{"net.ipv4.conf.all.forwarding", "1"},
				{"net.ipv6.conf.all.forwarding", "1"},
			}},
			{Name: "b"},
		},
		Veths: []Veth{
			{A: Port{NS: "a", Name: "eth0", Addrs: []string{"10.0.1.2/24", "fd00:1::2/64"}},
				B: Port{NS: "r", Name: "ra", Addrs: []string{"10.0.1.1/24", "fd00:1::1/64"}, NoPrefixRoute: true}},
			{A: Port{NS: "b", Name: "eth0", Addrs: []string{"10.0.2.2/24", "fd00:2::2/64"}},
				B: Port{NS: "r", Name: "rb", Addrs: []string{"10.0.2.1/24", "fd00:2::1/64"}, NoPrefixRoute: true}},
		},
		Devices: []Device{{Port: Port{NS: "r", Name: "fwd0"}}},
		Routes: []Route{
			{NS: "a", Dst: "default", Via: "10.0.1.1", Dev: "eth0"},
			{NS: "a", Dst: "default6", Via: "fd00:1::1", Dev: "eth0"},
			{NS: "b", Dst: "default", Via: "10.0.2.1", Dev: "eth0"},
			{NS: "b", Dst: "default6", Via: "fd00:2::1", Dev: "eth0"},
			{NS: "r", Table: 100, Dst: "10.0.1.0/24", Dev: "ra"},
			{NS: "r", Table: 100, Dst: "10.0.2.0/24", Dev: "rb"},
			{NS: "r", Table: 100, Dst: "fd00:1::/64", Dev: "ra"},
			{NS: "r", Table: 100, Dst: "fd00:2::/64", Dev: "rb"},
			{NS: "r", Table: 100, Dst: "10.0.1.1/32", Dev: "ra", Type: Local},
			{NS: "r", Table: 100, Dst: "10.9.0.0/16", Via: "10.0.2.2", Dev: "rb"},
		},
		Neighbours: []Neighbour{
			{NS: "a", Dev: "eth0", IP: "10.0.1.1", MACOf: "r/ra"},
			{NS: "a", Dev: "eth0", IP: "fd00:1::1", MACOf: "r/ra"},
			{NS: "b", Dev: "eth0", IP: "10.0.2.1", MACOf: "r/rb"},
			{NS: "b", Dev: "eth0", IP: "fd00:2::1", MACOf: "r/rb"},
			{NS: "r", Dev: "ra", IP: "10.0.1.2", MACOf: "a/eth0"},
			{NS: "r", Dev: "ra", IP: "fd00:1::2", MACOf: "a/eth0"},
			{NS: "r", Dev: "rb", IP: "10.0.2.2", MACOf: "b/eth0"},
			{NS: "r", Dev: "rb", IP: "fd00:2::2", MACOf: "b/eth0"},
		},
	}
}

func TestBuildPingAndCleanup(t *testing.T) {
	ctx := context.Background()
	l := New(t)
	l.MustBuild(ctx, line())
	r := l.NS("r")
	// The harness routes only into table 100; steer traffic there with a rule for this test.
	if _, err := r.Output(ctx, "ip", "rule", "add", "pref", "100", "lookup", "100"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Output(ctx, "ip", "-6", "rule", "add", "pref", "100", "lookup", "100"); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{"10.0.2.2", "fd00:2::2"} {
		res, err := l.NS("a").Ping(ctx, netip.MustParseAddr(dst), PingOptions{Count: 3, Interval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if res.Loss() != 0 {
			t.Fatalf("ping %s: loss %.2f\n%s", dst, res.Loss(), res.Output)
		}
	}
	fwd, err := r.ReadSysctl("net.ipv4.conf.all.forwarding")
	if err != nil || fwd != "1" {
		t.Fatalf("sysctl forwarding = %q, %v; want 1", fwd, err)
	}
	// The main table must not have the end hosts' subnets (NoPrefixRoute).
	out, err := r.Output(ctx, "ip", "route", "show", "table", "main")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "10.0.1.0/24") {
		t.Fatalf("main table has a connected route despite NoPrefixRoute:\n%s", out)
	}

	// Cleanup removes namespaces and pin dirs and kills processes.
	pin := l.MustPinDir()
	p, err := l.NS("b").Start(ctx, "sleep", "300")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range l.Namespaces() {
		if len(ns.Name) > 15 || !strings.HasPrefix(ns.Name, NamePrefix+l.ID()) {
			t.Errorf("namespace name %q: want <=15 bytes with prefix %s", ns.Name, NamePrefix+l.ID())
		}
		names = append(names, ns.Path)
	}
	if errs := l.Close(); len(errs) > 0 {
		t.Fatalf("close: %v", errs)
	}
	for _, n := range append(names, pin) {
		if _, err := os.Stat(n); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Close (stat err %v)", n, err)
		}
	}
	select {
	case <-p.Done():
	default:
		t.Error("process still running after Close")
	}
	if err := syscall.Kill(p.Cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d still exists after Close: %v", p.Cmd.Process.Pid, err)
	}
}

func TestUniqueNames(t *testing.T) {
	l1, l2 := New(t), New(t)
	if l1.ID() == l2.ID() {
		t.Fatalf("two labs share id %s", l1.ID())
	}
	a, err := l1.AddNamespace("abcdef")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l2.AddNamespace("abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name == b.Name || len(a.Name) > 15 {
		t.Fatalf("names %q and %q: want distinct and <= 15 bytes", a.Name, b.Name)
	}
	if _, err := l1.AddNamespace("abcdef"); err == nil {
		t.Fatal("second namespace with the same logical name accepted")
	}
	if m1, m2 := l1.nextMAC(), l1.nextMAC(); string(m1) == string(m2) || m1[0]&1 != 0 || m1[0]&2 == 0 {
		t.Fatalf("macs %x %x: want distinct, unicast, locally administered", m1, m2)
	}
}

func TestValidate(t *testing.T) {
	base := func() Topology {
		return Topology{
			Namespaces: []Namespace{{Name: "a"}, {Name: "b"}},
			Veths:      []Veth{{A: Port{NS: "a", Name: "x"}, B: Port{NS: "b", Name: "y"}}},
		}
	}
	tests := []struct {
		name   string
		mutate func(*Topology)
		want   string
	}{
		{"ok", func(*Topology) {}, ""},
		{"long ifname", func(t *Topology) { t.Veths[0].A.Name = "abcdefghijklmnop" }, "interface name"},
		{"unknown ns", func(t *Topology) { t.Veths[0].B.NS = "c" }, `unknown namespace "c"`},
		{"bad addr", func(t *Topology) { t.Veths[0].A.Addrs = []string{"10.0.0.1"} }, `address "10.0.0.1"`},
		{"dup ns", func(t *Topology) { t.Namespaces = append(t.Namespaces, Namespace{Name: "a"}) }, "listed twice"},
		{"route dev", func(t *Topology) { t.Routes = []Route{{NS: "a", Dst: "default", Dev: "nope"}} }, "unknown device a/nope"},
		{"neigh both", func(t *Topology) {
			t.Neighbours = []Neighbour{{NS: "a", Dev: "x", IP: "10.0.0.1", MAC: "02:00:00:00:00:01", MACOf: "b/y"}}
		}, "exactly one of MAC and MACOf"},
		{"neigh macof", func(t *Topology) { t.Neighbours = []Neighbour{{NS: "a", Dev: "x", IP: "10.0.0.1", MACOf: "b/z"}} }, "unknown interface"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo := base()
			tc.mutate(&topo)
			err := topo.validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestSysctlPath(t *testing.T) {
	for key, want := range map[string]string{
		"net.ipv4.conf.all.forwarding":      "/proc/sys/net/ipv4/conf/all/forwarding",
		"net.ipv4.conf.eth0.1.rp_filter":    "/proc/sys/net/ipv4/conf/eth0.1/rp_filter",
		"net.ipv6.conf.ra.forwarding":       "/proc/sys/net/ipv6/conf/ra/forwarding",
		"net.core.rmem_max":                 "/proc/sys/net/core/rmem_max",
		"net.ipv4.neigh.eth0.gc_stale_time": "/proc/sys/net/ipv4/neigh/eth0/gc_stale_time",
	} {
		if got := sysctlPath(key); got != want {
			t.Errorf("sysctlPath(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestRouteGetTable checks the table-lookup oracle against routes with known answers.
func TestRouteGetTable(t *testing.T) {
	l := New(t)
	l.MustBuild(context.Background(), line())
	r := l.NS("r")
	tests := []struct {
		dst     string
		dev     string
		via     string
		typ     RouteType
		noRoute bool
	}{
		{dst: "10.0.2.77", dev: "rb"},
		{dst: "10.9.3.4", dev: "rb", via: "10.0.2.2"},
		{dst: "fd00:1::9", dev: "ra"},
		{dst: "10.0.1.1", typ: Local},
		{dst: "10.0.2.1", dev: "rb"},      // r's own address, but table 100 has no local route for it
		{dst: "192.0.2.1", noRoute: true}, // not in table 100, and must not fall through to main
	}
	for _, tc := range tests {
		d, err := r.RouteGet(netip.MustParseAddr(tc.dst), 100)
		if tc.noRoute {
			if !errors.Is(err, ErrNoRoute) {
				t.Errorf("%s: got %v, %v; want ErrNoRoute", tc.dst, d, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.dst, err)
			continue
		}
		if d.Type != tc.typ || d.Table != 100 || (tc.typ == Unicast && d.Dev != tc.dev) || d.Via.String() != viaString(tc.via) {
			t.Errorf("%s: got %s, want %s dev %s via %q table 100", tc.dst, d, tc.typ, tc.dev, tc.via)
		}
	}
}

func viaString(s string) string {
	if s == "" {
		return netip.Addr{}.String()
	}
	return s
}

// TestFlow checks the flow counts a clean path as clean and a broken one as lossy, so tests built on it can fail.
func TestFlow(t *testing.T) {
	ctx := context.Background()
	l := New(t)
	topo := line()
	l.MustBuild(ctx, topo)
	r := l.NS("r")
	if _, err := r.Output(ctx, "ip", "rule", "add", "pref", "100", "lookup", "100"); err != nil {
		t.Fatal(err)
	}
	dst := netip.MustParseAddr("10.0.2.2")
	f, err := StartFlow(ctx, FlowOptions{From: l.NS("a"), To: l.NS("b"), Dst: dst, Rate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WaitReceived(ctx, 200, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	res, err := f.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean path: %s", res)
	if !res.Clean() {
		t.Fatalf("clean path: %s", res)
	}

	// Break the path mid-flow: the flow must report loss.
	f, err = StartFlow(ctx, FlowOptions{From: l.NS("a"), To: l.NS("b"), Dst: dst, Rate: 1000, TCPRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WaitReceived(ctx, 100, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Sysctl("net.ipv4.conf.all.forwarding", "0"); err != nil {
		t.Fatal(err)
	}
	sentAtBreak := f.Sent()
	if err := WaitFor(ctx, 5*time.Second, 5*time.Millisecond, func() (bool, error) { return f.Sent() > sentAtBreak+100, nil }); err != nil {
		t.Fatal(err)
	}
	res, err = f.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("broken path: %s", res)
	if res.Lost < 100 || res.LongestGap < 100 {
		t.Fatalf("broken path: want >= 100 lost in one gap, got %s", res)
	}
}

func TestIperf3(t *testing.T) {
	ctx := context.Background()
	l := New(t)
	l.MustBuild(ctx, Topology{
		Namespaces: []Namespace{{Name: "a"}, {Name: "b"}},
		Veths: []Veth{{A: Port{NS: "a", Name: "eth0", Addrs: []string{"10.0.0.1/24"}},
			B: Port{NS: "b", Name: "eth0", Addrs: []string{"10.0.0.2/24"}}}},
	})
	res, err := Iperf3(ctx, l.NS("b"), l.NS("a"), netip.MustParseAddr("10.0.0.2"), IperfOptions{Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iperf3 over one veth: %.2f Gbit/s, %d retransmits", res.BitsPerSecond/1e9, res.Retransmits)
	if res.BitsPerSecond < 1e6 {
		t.Fatalf("iperf3: %.0f bit/s, want > 1 Mbit/s", res.BitsPerSecond)
	}
}

func TestDoRestoresNamespace(t *testing.T) {
	l := New(t)
	ns, err := l.AddNamespace("x")
	if err != nil {
		t.Fatal(err)
	}
	self := func() string {
		s, _ := os.Readlink("/proc/thread-self/ns/net")
		return s
	}
	before := self()
	var inside string
	if err := ns.Do(func() error { inside = self(); return nil }); err != nil {
		t.Fatal(err)
	}
	want, _ := os.Readlink(filepath.Join("/proc/self/fd", strconv.Itoa(int(ns.NsHandle()))))
	if inside != want || inside == before {
		t.Fatalf("inside Do: %s, want %s (outside %s)", inside, want, before)
	}
	if after := self(); after != before {
		t.Fatalf("after Do: thread in %s, want %s", after, before)
	}
}

func TestTCPTransferAndCounters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := New(t)
	l.MustBuild(ctx, Topology{
		Namespaces: []Namespace{{Name: "a"}, {Name: "b"}},
		Veths: []Veth{{A: Port{NS: "a", Name: "eth0", Addrs: []string{"10.0.0.1/24"}},
			B: Port{NS: "b", Name: "eth0", Addrs: []string{"10.0.0.2/24"}}}},
	})
	before, err := l.NS("b").LinkStats("eth0")
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	res, err := TCPTransfer(ctx, l.NS("a"), l.NS("b"), netip.MustParseAddr("10.0.0.2"), size)
	if err != nil {
		t.Fatal(err)
	}
	after, err := l.NS("b").LinkStats("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes != size || after.RxBytes-before.RxBytes < size {
		t.Fatalf("transfer %d bytes, link rx grew %d; want %d", res.Bytes, after.RxBytes-before.RxBytes, size)
	}
	if _, err := l.NS("a").Ping(ctx, netip.MustParseAddr("10.0.0.2"), PingOptions{Count: 2, Interval: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	icmp, err := l.NS("b").SNMP("Icmp")
	if err != nil {
		t.Fatal(err)
	}
	if icmp["InEchos"] != 2 {
		t.Fatalf("b Icmp InEchos = %d, want 2", icmp["InEchos"])
	}
	if _, err := l.NS("b").SNMP("Icmp6"); err != nil {
		t.Fatal(err)
	}
}
