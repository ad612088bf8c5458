package frr_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// TestGracefulRestartKeepsRoutes: a node's bgpd dies (a crash, an upgrade) - with graceful restart its route
// reflector keeps the routes learnt from it (stale) and in its kernel, so traffic towards the node keeps flowing
// until bgpd is back; without it, the reflector withdraws them at once.
func TestGracefulRestartKeepsRoutes(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	for _, gr := range []bool{true, false} {
		t.Run(fmt.Sprintf("graceful restart %v", gr), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			node, rr := nodeAndPeer(t, ctx, "frrgrn-", "frrgrr-")
			must(t, node.IP(ctx, "addr", "add", "10.0.0.1/32", "dev", "lo"))
			frrtest.Router(t, frrproc.Options{Netns: rr.Name, Config: []byte(rrConfig)})

			cfg := frr.NodeConfig{DisableIPv6Forwarding: true, Underlay: frr.Underlay{
				ASN: fabricASN, RouterID: netip.MustParseAddr("10.0.0.1"), VTEPSource: netip.MustParseAddr("10.0.0.1"),
				PeerGroups: []frr.PeerGroup{{Name: "fabric", RemoteAS: frr.RemoteASInternal}},
				Neighbors:  []frr.Neighbor{{Address: netip.MustParseAddr(rrAddr), PeerGroup: "fabric"}},
			}}
			if gr {
				cfg.Underlay.GracefulRestart = &frr.GracefulRestart{}
			}
			conf, err := frr.Render(&cfg)
			must(t, err)
			n := frrtest.Router(t, frrproc.Options{Netns: node.Name, Config: conf})

			routeAtRR := func(ctx context.Context) (bool, string) {
				out, err := rr.Exec(ctx, "ip", "route", "show", "10.0.0.1/32")
				return err == nil && len(out) > 0, fmt.Sprintf("%q %v", out, err)
			}
			frrtest.Eventually(t, 60*time.Second, "the node's VTEP route at the reflector", routeAtRR)

			must(t, n.Kill(ctx, "bgpd"))
			// The reflector sees the session go at once (the kernel resets the dead process's TCP connection).
			frrtest.Eventually(t, 10*time.Second, "the session down at the reflector", func(ctx context.Context) (bool, string) {
				out, err := rr.Exec(ctx, "ss", "-tnH", "state", "established", "( sport = :179 or dport = :179 )")
				return err == nil && len(out) == 0, fmt.Sprintf("%q %v", out, err)
			})
			if gr {
				// Kept as stale for the restart time (120 s): still there well after the session went (sampled: a
				// route that stays is a condition over time, not an event to wait for).
				deadline := time.Now().Add(3 * time.Second)
				for time.Now().Before(deadline) {
					if ok, why := routeAtRR(ctx); !ok {
						t.Fatalf("the reflector dropped the restarting node's route: %s", why)
					}
					time.Sleep(200 * time.Millisecond)
				}
			} else {
				frrtest.Eventually(t, 10*time.Second, "the route withdrawn without graceful restart", func(ctx context.Context) (bool, string) {
					ok, why := routeAtRR(ctx)
					return !ok, why
				})
			}
		})
	}
}

// nodeAndPeer makes a node's and its fabric peer's namespaces joined by one link: the node's "uplink"
// (192.168.0.1/24) and the peer's "node0" (rrAddr), both up with their loopbacks.
func nodeAndPeer(t *testing.T, ctx context.Context, nodePrefix, peerPrefix string) (node, peer *frrproc.Netns) {
	t.Helper()
	node, peer = frrtest.Netns(t, nodePrefix), frrtest.Netns(t, peerPrefix)
	must(t, node.IP(ctx, "link", "add", "uplink", "type", "veth", "peer", "name", "node0", "netns", peer.Name))
	must(t, node.IP(ctx, "addr", "add", "192.168.0.1/24", "dev", "uplink"))
	must(t, node.IP(ctx, "link", "set", "uplink", "up"))
	must(t, node.IP(ctx, "link", "set", "lo", "up"))
	must(t, peer.IP(ctx, "addr", "add", rrAddr+"/24", "dev", "node0"))
	must(t, peer.IP(ctx, "link", "set", "node0", "up"))
	must(t, peer.IP(ctx, "link", "set", "lo", "up"))
	return node, peer
}
