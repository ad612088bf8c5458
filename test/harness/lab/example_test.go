package lab_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/network-operator/network-operator/test/harness/lab"
)

// Two hosts around a router whose routes live only in table 100, with permanent neighbours, a flow checked for
// loss, and a ping. (Compiled as documentation; the package's own tests run the same calls.)
func Example() {
	var t *testing.T // in a test: the test's *testing.T
	ctx := context.Background()
	l := lab.New(t) // skips when not root; everything is removed in t.Cleanup
	l.MustBuild(ctx, lab.Topology{
		Namespaces: []lab.Namespace{{Name: "a"}, {Name: "r", Sysctls: []lab.Sysctl{
			{Key: "net.ipv4.conf.all.forwarding", Value: "1"}}}, {Name: "b"}},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "a", Name: "eth0", Addrs: []string{"10.0.1.2/24"}},
				B: lab.Port{NS: "r", Name: "ra", Addrs: []string{"10.0.1.1/24"}, NoPrefixRoute: true}},
			{A: lab.Port{NS: "b", Name: "eth0", Addrs: []string{"10.0.2.2/24"}},
				B: lab.Port{NS: "r", Name: "rb", Addrs: []string{"10.0.2.1/24"}, NoPrefixRoute: true}},
		},
		Routes: []lab.Route{
			{NS: "a", Dst: "default", Via: "10.0.1.1", Dev: "eth0"},
			{NS: "b", Dst: "default", Via: "10.0.2.1", Dev: "eth0"},
			{NS: "r", Table: 100, Dst: "10.0.1.0/24", Dev: "ra"},
			{NS: "r", Table: 100, Dst: "10.0.2.0/24", Dev: "rb"},
			{NS: "r", Table: 100, Dst: "10.0.1.1/32", Dev: "ra", Type: lab.Local},
		},
		Neighbours: []lab.Neighbour{
			{NS: "a", Dev: "eth0", IP: "10.0.1.1", MACOf: "r/ra"},
			{NS: "r", Dev: "rb", IP: "10.0.2.2", MACOf: "b/eth0"},
		},
	})
	dst := netip.MustParseAddr("10.0.2.2")
	decision, _ := l.NS("r").RouteGet(dst, 100) // the kernel's answer from table 100 alone
	_ = decision
	flow, _ := lab.StartFlow(ctx, lab.FlowOptions{From: l.NS("a"), To: l.NS("b"), Dst: dst, Rate: 2000})
	_ = flow.WaitReceived(ctx, 100, 5*time.Second)
	res, _ := flow.Stop(ctx)
	_ = res.Clean() // no UDP loss or duplicate, TCP echo healthy
	ping, _ := l.NS("a").Ping(ctx, dst, lab.PingOptions{Count: 3})
	_ = ping.Loss()
}
