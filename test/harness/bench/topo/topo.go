// Package topo builds the benchmark's namespaces: three paths between a client and a server namespace, side by
// side in one lab so every figure of a run is measured under the same machine load.
//
//	direct:  da (10.10.0.1) ---------------------------- db (10.10.0.2)            the limit: one veth, no router
//	kernel:  ka (10.0.1.2) -- ra [kr] rb -- kb (10.0.2.2)                           kernel IP forwarding, main table
//	ebpf:    ea (10.0.1.2) -- ra [er] rb -- eb (10.0.2.2)                           tc router, routes in table 100
//
// In er forwarding is off on ra and rb and on only on the stand-in fwd0 (the VRF's lookup interface), so only the
// eBPF router can forward there: a broken attach shows as failed runs, never as kernel figures labelled eBPF.
// Neighbours are permanent, so no ARP/ND happens while measuring.
package topo

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/network-operator/network-operator/test/harness/lab"
)

// Table is the routing table of the eBPF path's VRF.
const Table = 100

// Addresses of the client/server pairs (the kernel and eBPF paths reuse them, as tenants would).
var (
	DirectClient = netip.MustParseAddr("10.10.0.1")
	DirectServer = netip.MustParseAddr("10.10.0.2")
	Server4      = netip.MustParseAddr("10.0.2.2")
	Client4      = netip.MustParseAddr("10.0.1.2")
	Server6      = netip.MustParseAddr("fd00:2::2")
	Client6      = netip.MustParseAddr("fd00:1::2")
)

// Router interface names (in kr and er).
const (
	In     = "ra"   // towards the client
	Out    = "rb"   // towards the server
	Lookup = "fwd0" // er only: the device whose forwarding flag bpf_fib_lookup checks
)

// Paths are the built namespaces.
type Paths struct {
	DirectClient, DirectServer               *lab.Netns
	KernelClient, KernelRouter, KernelServer *lab.Netns
	EBPFClient, EBPFRouter, EBPFServer       *lab.Netns
}

// Build creates every namespace of the benchmark in l.
func Build(ctx context.Context, l *lab.Lab) (Paths, error) {
	t := lab.Topology{
		Namespaces: []lab.Namespace{
			{Name: "da"}, {Name: "db"},
			{Name: "ka"}, {Name: "kb"},
			{Name: "kr", Sysctls: []lab.Sysctl{
				{Key: "net.ipv4.conf.all.forwarding", Value: "1"},
				{Key: "net.ipv6.conf.all.forwarding", Value: "1"},
			}},
			{Name: "ea"}, {Name: "eb"},
			{Name: "er", Sysctls: []lab.Sysctl{
				{Key: "net.ipv4.conf.all.forwarding", Value: "0"},
				{Key: "net.ipv4.conf." + Lookup + ".forwarding", Value: "1"},
				{Key: "net.ipv6.conf." + Lookup + ".forwarding", Value: "1"},
			}},
		},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "da", Name: "eth0", Addrs: []string{"10.10.0.1/24"}},
				B: lab.Port{NS: "db", Name: "eth0", Addrs: []string{"10.10.0.2/24"}}},
		},
		Devices: []lab.Device{{Port: lab.Port{NS: "er", Name: Lookup}}},
	}
	for _, p := range []struct{ client, router, server string }{{"ka", "kr", "kb"}, {"ea", "er", "eb"}} {
		ebpf := p.router == "er"
		t.Veths = append(t.Veths,
			lab.Veth{A: lab.Port{NS: p.client, Name: "eth0", Addrs: []string{"10.0.1.2/24", "fd00:1::2/64"}},
				B: lab.Port{NS: p.router, Name: In, Addrs: []string{"10.0.1.1/24", "fd00:1::1/64"}, NoPrefixRoute: ebpf}},
			lab.Veth{A: lab.Port{NS: p.server, Name: "eth0", Addrs: []string{"10.0.2.2/24", "fd00:2::2/64"}},
				B: lab.Port{NS: p.router, Name: Out, Addrs: []string{"10.0.2.1/24", "fd00:2::1/64"}, NoPrefixRoute: ebpf}},
		)
		t.Routes = append(t.Routes,
			lab.Route{NS: p.client, Dst: "default", Via: "10.0.1.1", Dev: "eth0"},
			lab.Route{NS: p.client, Dst: "default6", Via: "fd00:1::1", Dev: "eth0"},
			lab.Route{NS: p.server, Dst: "default", Via: "10.0.2.1", Dev: "eth0"},
			lab.Route{NS: p.server, Dst: "default6", Via: "fd00:2::1", Dev: "eth0"},
		)
		t.Neighbours = append(t.Neighbours,
			lab.Neighbour{NS: p.client, Dev: "eth0", IP: "10.0.1.1", MACOf: p.router + "/" + In},
			lab.Neighbour{NS: p.client, Dev: "eth0", IP: "fd00:1::1", MACOf: p.router + "/" + In},
			lab.Neighbour{NS: p.server, Dev: "eth0", IP: "10.0.2.1", MACOf: p.router + "/" + Out},
			lab.Neighbour{NS: p.server, Dev: "eth0", IP: "fd00:2::1", MACOf: p.router + "/" + Out},
			lab.Neighbour{NS: p.router, Dev: In, IP: "10.0.1.2", MACOf: p.client + "/eth0"},
			lab.Neighbour{NS: p.router, Dev: In, IP: "fd00:1::2", MACOf: p.client + "/eth0"},
			lab.Neighbour{NS: p.router, Dev: Out, IP: "10.0.2.2", MACOf: p.server + "/eth0"},
			lab.Neighbour{NS: p.router, Dev: Out, IP: "fd00:2::2", MACOf: p.server + "/eth0"},
		)
	}
	t.Neighbours = append(t.Neighbours,
		lab.Neighbour{NS: "da", Dev: "eth0", IP: "10.10.0.2", MACOf: "db/eth0"},
		lab.Neighbour{NS: "db", Dev: "eth0", IP: "10.10.0.1", MACOf: "da/eth0"},
	)
	for _, r := range []struct{ dst, dev string }{
		{"10.0.1.0/24", In}, {"10.0.2.0/24", Out}, {"fd00:1::/64", In}, {"fd00:2::/64", Out},
	} {
		t.Routes = append(t.Routes, lab.Route{NS: "er", Table: Table, Dst: r.dst, Dev: r.dev})
	}
	if err := l.Build(ctx, t); err != nil {
		return Paths{}, fmt.Errorf("build benchmark namespaces: %w", err)
	}
	ns := func(name string) *lab.Netns {
		n, _ := l.Namespace(name)
		return n
	}
	return Paths{
		DirectClient: ns("da"), DirectServer: ns("db"),
		KernelClient: ns("ka"), KernelRouter: ns("kr"), KernelServer: ns("kb"),
		EBPFClient: ns("ea"), EBPFRouter: ns("er"), EBPFServer: ns("eb"),
	}, nil
}
