package frr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// The fabric: a route reflector (iBGP, AS 65000) and two nodes on one
// underlay segment; node loopbacks 10.0.0.N are the VTEPs. Hosts hang off
// each node's per-VNI bridge in their own namespaces.
const (
	fabricASN = 65000
	rrAddr    = "192.168.0.254"
	rrConfig  = `frr defaults datacenter
!
router bgp 65000
 bgp router-id 192.168.0.254
 bgp cluster-id 192.168.0.254
 no bgp default ipv4-unicast
 neighbor nodes peer-group
 neighbor nodes remote-as internal
 bgp listen range 192.168.0.0/24 peer-group nodes
 !
 address-family ipv4 unicast
  neighbor nodes activate
  neighbor nodes route-reflector-client
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor nodes activate
  neighbor nodes route-reflector-client
 exit-address-family
exit
`
)

type fabricNode struct {
	id       int
	ns       *frrproc.Netns
	frr      *frrproc.Instance
	target   frrvty.Target
	stateDir string
	rel      *frrreload.Reloader
	cfg      frr.NodeConfig
	hosts    map[uint32]*frrproc.Netns // per VNI
}

func (n *fabricNode) vtep() string { return fmt.Sprintf("10.0.0.%d", n.id) }

// nodeConfig is what the agent would derive from a NodeNetworkConfig.
func nodeConfig(id int) frr.NodeConfig {
	ip := netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", id))
	return frr.NodeConfig{
		DisableIPv6Forwarding: true,
		Underlay: frr.Underlay{
			ASN: fabricASN, RouterID: ip, VTEPSource: ip,
			PeerGroups: []frr.PeerGroup{{Name: "fabric", RemoteAS: frr.RemoteASInternal}},
			Neighbors:  []frr.Neighbor{{Address: netip.MustParseAddr(rrAddr), PeerGroup: "fabric"}},
		},
		L2VNIs: []frr.L2VNI{{VNI: 100}},
		Peerings: []frr.Peering{{
			Name: "workloads", ListenRanges: []netip.Prefix{netip.MustParsePrefix(fmt.Sprintf("10.250.%d.0/24", id))}, RemoteASN: 64512,
			MaximumPrefixes: 100,
			Import:          []frr.PrefixItem{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), LE: 32, Action: frr.Permit}},
			Export:          []frr.PrefixItem{{CIDR: netip.MustParsePrefix("0.0.0.0/0"), Action: frr.Permit}},
		}},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// addVNI creates the kernel side of a L2VNI on a node (what the agent's
// netlink part does): bridge, VXLAN device bound to the VTEP address without
// learning (EVPN fills the FDB), and one host namespace on the bridge.
func addVNI(t *testing.T, ctx context.Context, n *fabricNode, vni uint32) {
	t.Helper()
	br, vx := fmt.Sprintf("br%d", vni), fmt.Sprintf("vx%d", vni)
	for _, args := range [][]string{
		{"link", "add", br, "type", "bridge"},
		{"link", "set", br, "addrgenmode", "none"},
		{"link", "add", vx, "type", "vxlan", "id", fmt.Sprint(vni), "local", n.vtep(), "dstport", "4789", "nolearning"},
		{"link", "set", vx, "master", br, "addrgenmode", "none"},
		{"link", "set", vx, "type", "bridge_slave", "neigh_suppress", "off", "learning", "off"},
		{"link", "set", vx, "up"},
		{"link", "set", br, "up"},
	} {
		must(t, n.ns.IP(ctx, args...))
	}
	h := frrtest.Netns(t, fmt.Sprintf("frrh%d-%d-", n.id, vni))
	port := fmt.Sprintf("h%d", vni)
	must(t, h.IP(ctx, "link", "add", "eth0", "type", "veth", "peer", "name", port, "netns", n.ns.Name))
	must(t, n.ns.IP(ctx, "link", "set", port, "master", br, "up"))
	must(t, h.IP(ctx, "link", "set", "eth0", "up"))
	must(t, h.IP(ctx, "addr", "add", hostIP(n.id, vni)+"/24", "dev", "eth0"))
	n.hosts[vni] = h
}

func hostIP(node int, vni uint32) string { return fmt.Sprintf("10.%d.0.%d", vni%256, node) }

func hostMAC(t *testing.T, ctx context.Context, h *frrproc.Netns) string {
	t.Helper()
	out, err := h.Exec(ctx, "ip", "-j", "link", "show", "eth0")
	must(t, err)
	var links []struct {
		Address string `json:"address"`
	}
	must(t, json.Unmarshal(out, &links))
	if len(links) != 1 {
		t.Fatalf("eth0 in %s: %s", h.Name, out)
	}
	return links[0].Address
}

// newFabric makes the underlay - one segment on a bridge in the fabric's namespace, which holds the route
// reflector's address - and two nodes on it, each with its uplink, its VTEP address and VNI 100 (addVNI) with a
// host. edit, when set, changes a node's config or kernel before FRR starts. Namespaces are named prefix+"fab-"
// and prefix+"n<id>-".
func newFabric(t *testing.T, ctx context.Context, prefix string, edit func(*fabricNode)) (*frrproc.Netns, []*fabricNode) {
	t.Helper()
	fab := frrtest.Netns(t, prefix+"fab-")
	must(t, fab.IP(ctx, "link", "add", "fabric", "type", "bridge"))
	must(t, fab.IP(ctx, "link", "set", "fabric", "up"))
	must(t, fab.IP(ctx, "addr", "add", rrAddr+"/24", "dev", "fabric"))
	nodes := make([]*fabricNode, 2)
	for i := range nodes {
		n := &fabricNode{id: i + 1, hosts: map[uint32]*frrproc.Netns{}, cfg: nodeConfig(i + 1)}
		n.ns = frrtest.Netns(t, fmt.Sprintf("%sn%d-", prefix, n.id))
		port := fmt.Sprintf("p%d", n.id)
		must(t, fab.IP(ctx, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", n.ns.Name))
		must(t, fab.IP(ctx, "link", "set", port, "master", "fabric", "up"))
		must(t, n.ns.IP(ctx, "link", "set", "eth0", "up"))
		must(t, n.ns.IP(ctx, "addr", "add", fmt.Sprintf("192.168.0.%d/24", n.id), "dev", "eth0"))
		must(t, n.ns.IP(ctx, "addr", "add", n.vtep()+"/32", "dev", "lo"))
		addVNI(t, ctx, n, 100)
		if edit != nil {
			edit(n)
		}
		nodes[i] = n
	}
	return fab, nodes
}

// apply renders the node's config and applies it through the Reloader.
func (n *fabricNode) apply(t *testing.T, ctx context.Context) frrreload.Result {
	t.Helper()
	cfg, err := frr.Render(&n.cfg)
	must(t, err)
	res, err := n.rel.Apply(ctx, cfg)
	if err != nil {
		t.Fatalf("node %d: apply: %v", n.id, err)
	}
	if len(res.Residual) > 0 {
		t.Errorf("node %d: FRR still differs after reload: %q", n.id, res.Residual)
	}
	t.Logf("node %d: validate %v, reload %v (+%d -%d lines)", n.id, res.Validate.Round(time.Millisecond),
		res.Reload.Round(time.Millisecond), len(res.Diff.Add), len(res.Diff.Delete))
	return res
}

// session identifies one BGP session's life: a reset changes the counters
// and restarts the uptime.
type session struct {
	Established, Dropped uint64
	UptimeMsec           int64
}

func sessions(t *testing.T, ctx context.Context, tg frrvty.Target) map[string]session {
	t.Helper()
	ns, err := tg.Neighbors(ctx, "")
	must(t, err)
	out := map[string]session{}
	for peer, n := range ns {
		if n.State != frrvty.StateEstablished {
			t.Fatalf("peer %s is %s", peer, n.State)
		}
		out[peer] = session{n.ConnectionsEstablished, n.ConnectionsDropped, n.UptimeMsec}
	}
	return out
}

func assertNoReset(t *testing.T, ctx context.Context, what string, before map[string]map[string]session, targets map[string]frrvty.Target) {
	t.Helper()
	for name, tg := range targets {
		now := sessions(t, ctx, tg)
		for peer, s := range before[name] {
			n := now[peer]
			if n.Established != s.Established || n.Dropped != s.Dropped || n.UptimeMsec < s.UptimeMsec {
				t.Errorf("%s reset the BGP session %s -> %s: before %+v, after %+v", what, name, peer, s, n)
			}
		}
	}
}

// waitType3 waits until each of the two nodes has its EVPN session to peer established and holds a type-3 route
// of the other node that match accepts.
func waitType3(t *testing.T, nodes []*fabricNode, peer string, match func(r frrvty.EVPNRoute, other *fabricNode) bool) {
	t.Helper()
	for _, n := range nodes {
		other := nodes[2-n.id]
		frrtest.Eventually(t, 60*time.Second, fmt.Sprintf("node %d: EVPN session to %s and type-3 from node %d", n.id, peer, other.id),
			func(ctx context.Context) (bool, string) {
				sum, err := n.target.EVPNSummary(ctx)
				if err != nil {
					return false, err.Error()
				}
				if p, ok := sum.Peers[peer]; !ok || !p.Established() {
					return false, fmt.Sprintf("peer %s: %+v", peer, sum.Peers)
				}
				routes, err := n.target.EVPNRoutes(ctx, "multicast")
				if err != nil {
					return false, err.Error()
				}
				return slices.ContainsFunc(routes, func(r frrvty.EVPNRoute) bool { return match(r, other) }),
					fmt.Sprintf("type-3 routes: %+v", routes)
			})
	}
}

func hasRoute(routes []frrvty.EVPNRoute, rd, prefixPart, rt string) bool {
	for _, r := range routes {
		if (rd == "" || r.RD == rd) && strings.Contains(r.Prefix, prefixPart) && strings.Contains(r.RTs, rt) {
			return true
		}
	}
	return false
}

func ping(ctx context.Context, from *frrproc.Netns, ip string) (bool, string) {
	out, err := from.Exec(ctx, "ping", "-c1", "-W1", ip)
	if err != nil {
		return false, strings.TrimSpace(string(out))
	}
	return true, ""
}

// TestEVPNFabric runs real zebra + bgpd for a route reflector and two nodes
// in namespaces, configured by rendered configs through the Reloader. It
// checks EVPN L2VNI end to end, then that reloads which add a VNI or change
// a prefix-list keep the established sessions, that an invalid config is
// refused without touching FRR, and the cold-start path.
func TestEVPNFabric(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()                                                             // independent namespaces and FRR instances; mostly waiting on FRR
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // the kernel lane emulates the CPU
	defer cancel()

	fab, nodes := newFabric(t, ctx, "frr", nil)

	start := time.Now()
	rr := frrtest.Router(t, frrproc.Options{Netns: fab.Name, Config: []byte(rrConfig)})
	rrTarget := frrvty.Target{VtySocket: rr.Dir, ConfDir: rr.ConfDir, Tools: rr.Tools()}
	for _, n := range nodes {
		n.frr = frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})
		n.target = frrvty.Target{VtySocket: n.frr.Dir, ConfDir: n.frr.ConfDir, Tools: n.frr.Tools()}
		n.stateDir = t.TempDir()
		rel := newReloader(t, frrreload.Options{Target: n.target, StateDir: n.stateDir})
		n.rel = rel
	}
	daemonsUp := time.Now()
	for _, n := range nodes {
		n.apply(t, ctx)
	}
	configured := time.Now()

	// Sessions up and each node holds the other's type-3 (IMET) route.
	waitType3(t, nodes, rrAddr, func(r frrvty.EVPNRoute, other *fabricNode) bool {
		return strings.Contains(r.Prefix, "["+other.vtep()+"]") && strings.Contains(r.RTs, "RT:65000:100")
	})
	converged := time.Now()
	t.Logf("FRR daemons (3 routers) up in %v; configs applied in %v; sessions established and type-3 routes exchanged %v after apply (%v after start)",
		daemonsUp.Sub(start).Round(time.Millisecond), configured.Sub(daemonsUp).Round(time.Millisecond),
		converged.Sub(configured).Round(time.Millisecond), converged.Sub(start).Round(time.Millisecond))

	// Data plane: hosts on VNI 100 reach each other over VXLAN, and the
	// remote MAC is in the FDB pointing at the remote VTEP (zebra put it there).
	n1, n2 := nodes[0], nodes[1]
	frrtest.Eventually(t, 20*time.Second, "ping over VNI 100", func(ctx context.Context) (bool, string) {
		return ping(ctx, n1.hosts[100], hostIP(2, 100))
	})
	mac2 := hostMAC(t, ctx, n2.hosts[100])
	frrtest.Eventually(t, 10*time.Second, "type-2 route and FDB entry for the remote host", func(ctx context.Context) (bool, string) {
		routes, err := n1.target.EVPNRoutes(ctx, "macip")
		if err != nil {
			return false, err.Error()
		}
		if !hasRoute(routes, "", mac2, "RT:65000:100") {
			return false, fmt.Sprintf("no type-2 for %s: %+v", mac2, routes)
		}
		fdb, err := n1.ns.Exec(ctx, "bridge", "fdb", "show", "dev", "vx100")
		if err != nil {
			return false, err.Error()
		}
		for _, l := range strings.Split(string(fdb), "\n") {
			if strings.HasPrefix(l, mac2+" ") && strings.Contains(l, "dst "+n2.vtep()) {
				return true, ""
			}
		}
		return false, "fdb: " + string(fdb)
	})

	// Status for the agent: typed summary.
	sum, err := n1.target.Summary(ctx)
	must(t, err)
	peers := sum.Peers()
	var evpnPeer *frrvty.PeerStatus
	for i := range peers {
		if peers[i].VRF == "default" && peers[i].AddressFamily == frrvty.AFL2VPNEVPN && peers[i].Peer == rrAddr {
			evpnPeer = &peers[i]
		}
	}
	if evpnPeer == nil || !evpnPeer.Established() || evpnPeer.PrefixesReceived == 0 || evpnPeer.Uptime() <= 0 || evpnPeer.RemoteAS != fabricASN {
		t.Fatalf("summary of node 1 lacks an established EVPN peer with prefixes: %+v", peers)
	}

	targets := map[string]frrvty.Target{"node1": n1.target, "node2": n2.target, "rr": rrTarget}
	before := map[string]map[string]session{}
	for name, tg := range targets {
		before[name] = sessions(t, ctx, tg)
	}

	t.Run("reload adds a VNI without resetting sessions", func(t *testing.T) {
		for _, n := range nodes {
			addVNI(t, ctx, n, 200)
			n.cfg.L2VNIs = append(n.cfg.L2VNIs, frr.L2VNI{VNI: 200, RD: n.vtep() + ":200", RouteTargets: []string{"65000:9200"}})
			res := n.apply(t, ctx)
			for _, l := range res.Diff.Significant() {
				if !strings.Contains(l, "vni 200") && !strings.Contains(l, "65000:9200") && !strings.Contains(l, ":200") &&
					strings.TrimSpace(strings.TrimPrefix(l, "+ ")) != "router bgp 65000" && strings.TrimSpace(strings.TrimPrefix(l, "+ ")) != "address-family l2vpn evpn" {
					t.Errorf("node %d: adding VNI 200 changed more: %q", n.id, l)
				}
			}
		}
		frrtest.Eventually(t, 30*time.Second, "type-3 for VNI 200 with the configured RD and RT", func(ctx context.Context) (bool, string) {
			routes, err := n1.target.EVPNRoutes(ctx, "multicast")
			if err != nil {
				return false, err.Error()
			}
			return hasRoute(routes, n2.vtep()+":200", "["+n2.vtep()+"]", "RT:65000:9200"), fmt.Sprintf("%+v", routes)
		})
		frrtest.Eventually(t, 20*time.Second, "ping over VNI 200", func(ctx context.Context) (bool, string) {
			return ping(ctx, n1.hosts[200], hostIP(2, 200))
		})
		assertNoReset(t, ctx, "adding VNI 200", before, targets)
	})

	t.Run("reload changes a prefix-list without resetting sessions", func(t *testing.T) {
		n1.cfg.Peerings[0].Import = append(n1.cfg.Peerings[0].Import,
			frr.PrefixItem{CIDR: netip.MustParsePrefix("10.96.0.0/12"), LE: 32, Action: frr.Deny})
		res := n1.apply(t, ctx)
		want := "ip prefix-list pl_peer_workloads_in seq 20 deny 10.96.0.0/12 le 32"
		if got := res.Diff.Significant(); len(got) != 1 || strings.TrimSpace(strings.TrimPrefix(got[0], "+ ")) != want {
			t.Errorf("diff = %q, want only %q", got, want)
		}
		out, err := n1.target.Vtysh(ctx, "show ip prefix-list pl_peer_workloads_in")
		must(t, err)
		if !strings.Contains(string(out), "seq 20 deny 10.96.0.0/12 le 32") {
			t.Errorf("prefix-list not changed:\n%s", out)
		}
		assertNoReset(t, ctx, "changing a prefix-list", before, targets)
	})

	t.Run("identical config is skipped", func(t *testing.T) {
		cfg, err := frr.Render(&n1.cfg)
		must(t, err)
		res, err := n1.rel.Apply(ctx, cfg)
		must(t, err)
		if !res.Skipped {
			t.Errorf("identical config was applied again: %+v", res)
		}
	})

	t.Run("invalid config is refused and nothing changes", func(t *testing.T) {
		good, err := frr.Render(&n1.cfg)
		must(t, err)
		runningBefore, err := n1.target.RunningConfig(ctx)
		must(t, err)
		diskBefore, err := os.ReadFile(n1.target.ConfigPath())
		must(t, err)
		cases := []struct {
			name, marker, insert string
			wantCheck            string
		}{
			// A syntax error vtysh's parser finds.
			{"syntax", " neighbor fabric peer-group\n", " neighbor fabric remote-as sixty-five\n", "vtysh -C"},
			// A semantic error only the daemon finds: ge below the mask length.
			{"semantic", "ip prefix-list pl_peer_workloads_in seq 10 ", "ip prefix-list pl_bad seq 5 permit 10.0.0.0/16 ge 8\n", "scratch load"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				i := strings.Index(string(good), c.marker)
				if i < 0 {
					t.Fatalf("marker %q not in config", c.marker)
				}
				bad := string(good[:i]) + c.insert + string(good[i:])
				wantLine := strings.Count(bad[:i], "\n") + 1
				res, err := n1.rel.Apply(ctx, []byte(bad))
				var verr *frrreload.ValidationError
				if !errors.Is(err, frrreload.ErrRejected) || !errors.As(err, &verr) {
					t.Fatalf("Apply(invalid) = %+v, %v; want a ValidationError", res, err)
				}
				if verr.Check != c.wantCheck {
					t.Errorf("refused by %q, want %q", verr.Check, c.wantCheck)
				}
				found := false
				for _, l := range verr.Lines {
					found = found || l.Number == wantLine && l.Text == strings.TrimSuffix(c.insert, "\n")
				}
				if !found {
					t.Errorf("error does not carry line %d %q: %v", wantLine, c.insert, err)
				}
				t.Logf("refused: %v", err)
			})
		}
		runningAfter, err := n1.target.RunningConfig(ctx)
		must(t, err)
		diskAfter, err := os.ReadFile(n1.target.ConfigPath())
		must(t, err)
		if string(runningAfter) != string(runningBefore) {
			t.Errorf("running config changed after refused configs")
		}
		if string(diskAfter) != string(diskBefore) || string(diskAfter) != string(good) {
			t.Errorf("frr.conf changed after refused configs")
		}
		if info, err := os.Stat(n1.target.ConfigPath()); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("frr.conf mode = %v, %v; want 0600 (it holds secrets)", info.Mode().Perm(), err)
		}
		left, err := filepath.Glob(filepath.Join(n1.frr.ConfDir, ".frr.conf.candidate-*"))
		must(t, err)
		if len(left) > 0 {
			t.Errorf("candidate files left behind: %v", left)
		}
		assertNoReset(t, ctx, "refused configs", before, targets)
	})

	t.Run("L3VNI type-5 routes and leaking into the cluster VRF", func(t *testing.T) {
		// Without VRF devices FRR keeps such BGP instances inactive; the rendered L3VNI and leaking configs are
		// still checked against FRR by TestGoldenAcceptedByFRR.
		frrtest.RequireVRF(t, "L3VNI, type-5 routes and 'router bgp X vrf Y' need them")
		for _, n := range nodes {
			for _, args := range [][]string{
				{"link", "add", "tenant1", "type", "vrf", "table", "1001"},
				{"link", "set", "tenant1", "up"},
				{"link", "add", "br5001", "type", "bridge"},
				{"link", "set", "br5001", "master", "tenant1", "addrgenmode", "none"},
				{"link", "add", "vx5001", "type", "vxlan", "id", "5001", "local", n.vtep(), "dstport", "4789", "nolearning"},
				{"link", "set", "vx5001", "master", "br5001", "addrgenmode", "none"},
				{"link", "set", "vx5001", "up"},
				{"link", "set", "br5001", "up"},
				{"link", "add", "lo5001", "type", "dummy"},
				{"link", "set", "lo5001", "master", "tenant1", "up"},
				{"addr", "add", fmt.Sprintf("10.99.0.%d/32", n.id), "dev", "lo5001"},
			} {
				must(t, n.ns.IP(ctx, args...))
			}
			// A route target FRR does not derive itself (65000:5001 would be): rendered explicitly, it is the one the
			// type-5 route must carry. With auto-derived ones FRR 10.3 once exported node 2's route with RT 1:5001
			// (seen in the kernel lane), and node 1 never imported it.
			n.cfg.VRFs = []frr.VRF{{Name: "tenant1", VNI: 5001, RedistributeConnected: true, RouteTargets: []string{"65000:15001"},
				RouteConfigs: []frr.RouteConfig{{Seq: 10,
					Import: []frr.PrefixItem{{CIDR: netip.MustParsePrefix("10.99.0.0/16"), LE: 32, Action: frr.Permit}}}}}}
			n.apply(t, ctx)
		}
		frrtest.Eventually(t, 2*time.Minute, "type-5 route of node 2's VRF address on node 1", func(ctx context.Context) (bool, string) {
			routes, err := n1.target.EVPNRoutes(ctx, "prefix")
			if err != nil {
				return false, err.Error()
			}
			return hasRoute(routes, "", "[10.99.0.2]", "RT:65000:15001"), fmt.Sprintf("%+v", routes)
		})
		frrtest.Eventually(t, 2*time.Minute, "kernel route in VRF tenant1 and leaked into the cluster VRF", func(ctx context.Context) (bool, string) {
			vrf, err := n1.ns.Exec(ctx, "ip", "route", "show", "vrf", "tenant1")
			if err != nil {
				return false, err.Error()
			}
			leaked, err := n1.target.Vtysh(ctx, "show ip route 10.99.0.2/32")
			if err != nil {
				return false, err.Error()
			}
			return strings.Contains(string(vrf), "10.99.0.2") && strings.Contains(string(leaked), "10.99.0.2/32"),
				fmt.Sprintf("vrf table: %s; default: %s", vrf, leaked)
		})
		assertNoReset(t, ctx, "adding an L3VNI", before, targets)
	})

	t.Run("cold start restores the last applied config", func(t *testing.T) {
		good, err := frr.Render(&n1.cfg)
		must(t, err)
		rel := newReloader(t, frrreload.Options{Target: n1.target, StateDir: n1.stateDir})
		last, err := rel.LastApplied()
		must(t, err)
		if string(last) != string(good) {
			t.Fatalf("last applied config on disk differs from the last good one")
		}
		if res, err := rel.Apply(ctx, good); err != nil || !res.Skipped {
			t.Errorf("restarted reloader re-applied an unchanged config: %+v, %v", res, err)
		}
		res, err := rel.RestoreLastApplied(ctx)
		must(t, err)
		if len(res.Diff.Significant()) > 0 || len(res.Residual) > 0 {
			t.Errorf("restore of the running config changed something: %+v", res)
		}
		assertNoReset(t, ctx, "restoring the last applied config", before, targets)
	})
}
