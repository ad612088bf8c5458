package frr_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// addStaticVNI creates the kernel side of a layer-2 network with static flooding, as the agent's nodenet does: a
// VXLAN that learns, in a bridge, with one all-zero-MAC flood entry to the peer VTEP, and a host behind the bridge.
func addStaticVNI(t *testing.T, ctx context.Context, n *fabricNode, vni uint32, peer string) {
	t.Helper()
	br, vx := fmt.Sprintf("br%d", vni), fmt.Sprintf("vx%d", vni)
	for _, args := range [][]string{
		{"link", "add", br, "type", "bridge"},
		{"link", "set", br, "addrgenmode", "none"},
		{"link", "add", vx, "type", "vxlan", "id", fmt.Sprint(vni), "local", n.vtep(), "dstport", "4789", "learning"},
		{"link", "set", vx, "master", br, "addrgenmode", "none"},
		{"link", "set", vx, "up"},
		{"link", "set", br, "up"},
	} {
		must(t, n.ns.IP(ctx, args...))
	}
	_, err := n.ns.Exec(ctx, "bridge", "fdb", "append", "00:00:00:00:00:00", "dev", vx, "dst", peer, "self", "permanent")
	must(t, err)
	h := frrtest.Netns(t, fmt.Sprintf("frrh%d-%d-", n.id, vni))
	port := fmt.Sprintf("h%d", vni)
	must(t, h.IP(ctx, "link", "add", "eth0", "type", "veth", "peer", "name", port, "netns", n.ns.Name))
	must(t, n.ns.IP(ctx, "link", "set", port, "master", br, "up"))
	must(t, h.IP(ctx, "link", "set", "eth0", "up"))
	must(t, h.IP(ctx, "addr", "add", hostIP(n.id, vni)+"/24", "dev", "eth0"))
	n.hosts[vni] = h
}

// TestIsolatedVNIStaysOutOfEVPN runs real zebra + bgpd (a route reflector and two nodes) with an EVPN VNI (100) and
// a static-flooding VNI (300) on both nodes. zebra takes VNI 300's VXLAN too (advertise-all-vni takes every VXLAN
// in a bridge; without Isolated the nodes import each other's type-3 and type-2 routes and zebra installs a
// remote VTEP flood entry and extern_learn MACs on it). Declared Isolated, its routes carry only the node's own
// route target: while VNI 100 works through EVPN, neither node imports anything of VNI 300, zebra knows no remote
// VTEP or MAC of it, and its FDB holds only the static flood entry and what the kernel learnt from the data path;
// the hosts reach each other over it.
func TestIsolatedVNIStaysOutOfEVPN(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	fab, nodes := newFabric(t, ctx, "frr", func(n *fabricNode) {
		n.cfg.L2VNIs = append(n.cfg.L2VNIs, frr.L2VNI{VNI: 300, Isolated: true})
		addStaticVNI(t, ctx, n, 300, fmt.Sprintf("10.0.0.%d", 3-n.id))
	})
	frrtest.Router(t, frrproc.Options{Netns: fab.Name, Config: []byte(rrConfig)})
	for _, n := range nodes {
		n.frr = frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})
		n.target = frrvty.Target{VtySocket: n.frr.Dir, ConfDir: n.frr.ConfDir, Tools: n.frr.Tools()}
		n.stateDir = t.TempDir()
		rel := newReloader(t, frrreload.Options{Target: n.target, StateDir: n.stateDir})
		n.rel = rel
		n.apply(t, ctx)
	}

	// The hosts of both VNIs reach each other, so each node has learnt the other's host MACs: VNI 100's through
	// EVPN, VNI 300's from the data path.
	n1, n2 := nodes[0], nodes[1]
	for _, vni := range []uint32{100, 300} {
		frrtest.Eventually(t, 60*time.Second, fmt.Sprintf("ping over VNI %d", vni), func(ctx context.Context) (bool, string) {
			return ping(ctx, n1.hosts[vni], hostIP(2, vni))
		})
	}
	// Node 1 holds node 2's type-2 routes of both VNIs and has imported VNI 100's into zebra (a remote MAC):
	// BGP has passed on everything by now, VNI 300's routes with node 2's own route target only.
	mac100, mac300 := hostMAC(t, ctx, n2.hosts[100]), hostMAC(t, ctx, n2.hosts[300])
	frrtest.Eventually(t, 30*time.Second, "node 2's type-2 routes at node 1, VNI 100's imported", func(ctx context.Context) (bool, string) {
		routes, err := n1.target.EVPNRoutes(ctx, "macip")
		if err != nil {
			return false, err.Error()
		}
		if !hasRoute(routes, "", mac100, "RT:65000:100") || !hasRoute(routes, "", mac300, "RT:"+frr.IsolatedRouteTarget(netip.MustParseAddr(n2.vtep()))) {
			return false, fmt.Sprintf("type-2 routes: %+v", routes)
		}
		out, err := n1.target.Vtysh(ctx, "show evpn mac vni 100")
		return err == nil && strings.Contains(string(out), mac100), string(out)
	})
	all, err := n1.target.EVPNRoutes(ctx, "")
	must(t, err)
	for _, r := range all {
		if strings.Contains(r.RTs, "RT:65000:300") {
			t.Errorf("a route of VNI 300 with the automatic route target: %+v", r)
		}
	}

	for _, n := range nodes {
		other := nodes[2-n.id]
		vni, err := n.target.Vtysh(ctx, "show evpn vni 300")
		must(t, err)
		if !strings.Contains(string(vni), "No remote VTEPs known for this VNI") {
			t.Errorf("node %d: zebra knows remote VTEPs of VNI 300:\n%s", n.id, vni)
		}
		macs, err := n.target.Vtysh(ctx, "show evpn mac vni 300")
		must(t, err)
		if strings.Contains(string(macs), " remote ") {
			t.Errorf("node %d: zebra has remote MACs on VNI 300:\n%s", n.id, macs)
		}
		fdb, err := n.ns.Exec(ctx, "bridge", "fdb", "show", "dev", "vx300")
		must(t, err)
		var flood []string
		for _, l := range strings.Split(strings.TrimSpace(string(fdb)), "\n") {
			if strings.Contains(l, "extern_learn") {
				t.Errorf("node %d: vx300 has an entry zebra installed: %s", n.id, l)
			}
			if strings.HasPrefix(l, "00:00:00:00:00:00 ") {
				flood = append(flood, l)
			}
		}
		if want := "00:00:00:00:00:00 dst " + other.vtep() + " self permanent"; len(flood) != 1 || flood[0] != want {
			t.Errorf("node %d: vx300 flood entries %q, want only %q", n.id, flood, want)
		}
		if mac := hostMAC(t, ctx, other.hosts[300]); !strings.Contains(string(fdb), mac+" dst "+other.vtep()+" self") {
			t.Errorf("node %d: vx300 did not learn node %d's host %s from the data path:\n%s", n.id, other.id, mac, fdb)
		}
	}
}
