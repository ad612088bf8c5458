package netnstest

import (
	"context"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestModeFIB: interfaces in mode fib (a VRF the provisioning set up, das-schiff's skipVRFConfig) are routed
// by the eBPF router in the table of their own VRF device; without one (this kernel has no VRF devices), the
// main table. r's routes are in main only and the tables hold no VRF: the router still forwards every ping,
// counted under VRF id 0, and the kernel forwards none although forwarding is on (the lookup checks the
// ingress device's flag). In mode route with the same tables the interfaces would need a VRF entry.
func TestModeFIB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := lab.New(t)
	topo := lineTopology(lineOptions{v4only: true})
	topo.Routes = append(topo.Routes,
		lab.Route{NS: "r", Dst: "10.0.1.0/24", Dev: "ra"},
		lab.Route{NS: "r", Dst: "10.0.2.0/24", Dev: "rb"})
	for _, dev := range []string{"ra", "rb"} {
		topo.Namespaces[1].Sysctls = append(topo.Namespaces[1].Sysctls, lab.Sysctl{Key: "net.ipv4.conf." + dev + ".forwarding", Value: "1"})
	}
	l.MustBuild(ctx, topo)
	a, r := l.NS("a"), l.NS("r")

	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	rt.attach(t, tcHook(t, r), "ra", "rb")
	var tb maps.Tables
	for _, dev := range []string{"ra", "rb"} {
		idx, err := r.Ifindex(dev)
		if err != nil {
			t.Fatal(err)
		}
		tb.Interfaces = append(tb.Interfaces, maps.Interface{Ifindex: uint32(idx), Mode: maps.ModeFIB})
	}
	rt.apply(t, tb, "fib-1")

	kernelBefore := kernelForwarded(t, r)
	const pings = 10
	pingOK(ctx, t, a, hostB4, pings)
	if got := rt.counter(t, 0, maps.ReasonForwardedFib).Packets; got != 2*pings {
		t.Errorf("router forwarded %d packets under VRF 0, want %d (requests and replies)", got, 2*pings)
	}
	if got := kernelForwarded(t, r) - kernelBefore; got != 0 {
		t.Errorf("the kernel forwarded %d packets: the router should have carried them all", got)
	}
}
