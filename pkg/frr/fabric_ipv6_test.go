package frr_test

import (
	"context"
	"encoding/json"
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

// An IPv6 underlay: the route reflector and the nodes have no IPv4 address on their links, every BGP session runs
// over IPv6 and carries ipv4 unicast (the VTEP /32s, RFC 8950 extended next hops) and l2vpn evpn. The VTEPs stay
// IPv4 (10.0.0.N on the loopback): FRR before 10.6 cannot run EVPN with IPv6 VTEPs.
const (
	// Numbered: one segment, fd00:ff::/64; the route reflector is fd00:ff::254, node N fd00:ff::N.
	rr6Addr   = "fd00:ff::254"
	rr6Prefix = "fd00:ff::/64"

	// rr6NumberedConfig takes the nodes as dynamic neighbours of the segment, with extended next hops.
	rr6NumberedConfig = `frr defaults datacenter
!
router bgp 65000
 bgp router-id 10.0.0.254
 bgp cluster-id 10.0.0.254
 no bgp default ipv4-unicast
 neighbor nodes peer-group
 neighbor nodes remote-as internal
 neighbor nodes capability extended-nexthop
 bgp listen range ` + rr6Prefix + ` peer-group nodes
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
	// rr6UnnumberedConfig peers over the link-local addresses of its point-to-point links p1 and p2 to the nodes.
	rr6UnnumberedConfig = `frr defaults datacenter
!
router bgp 65000
 bgp router-id 10.0.0.254
 bgp cluster-id 10.0.0.254
 no bgp default ipv4-unicast
 neighbor nodes peer-group
 neighbor nodes remote-as internal
 neighbor p1 interface peer-group nodes
 neighbor p2 interface peer-group nodes
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

// ipv6NodeConfig is node id's config for an IPv6 underlay: iBGP to the route reflector over IPv6, numbered (the
// reflector's global address, the peer group with extended next hops) or unnumbered (the uplink eth0).
func ipv6NodeConfig(id int, unnumbered bool, v frr.Version) frr.NodeConfig {
	ip := netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", id))
	u := frr.Underlay{ASN: fabricASN, RouterID: ip, VTEPSource: ip,
		PeerGroups: []frr.PeerGroup{{Name: "fabric", RemoteAS: frr.RemoteASInternal}}}
	if unnumbered {
		u.Neighbors = []frr.Neighbor{{Interface: "eth0", PeerGroup: "fabric"}}
	} else {
		u.PeerGroups[0].ExtendedNextHop = true
		u.Neighbors = []frr.Neighbor{{Address: netip.MustParseAddr(rr6Addr), PeerGroup: "fabric"}}
	}
	return frr.NodeConfig{FRR: v, Underlay: u, L2VNIs: []frr.L2VNI{{VNI: 100}}}
}

// hostIP6 is the IPv6 address of node's host in a VNI (hostIP's IPv4 twin).
func hostIP6(node int, vni uint32) string { return fmt.Sprintf("fd00:%d::%d", vni, node) }

// newIPv6Fabric makes the underlay without IPv4 on any link and two nodes with their VTEP address, VNI 100 (addVNI)
// and a dual-stack host in it. Numbered: the links are veths into a bridge in the fabric's namespace, which holds
// the route reflector's address. Unnumbered: point-to-point veths p<N> (the reflector's end) to each node's eth0,
// link-local addresses only; the reflector forwards IPv4 between them (the VTEP routes point at it).
func newIPv6Fabric(t *testing.T, ctx context.Context, prefix string, unnumbered bool, v frr.Version) (*frrproc.Netns, []*fabricNode) {
	t.Helper()
	fab := frrtest.Netns(t, prefix+"fab-")
	if unnumbered {
		must(t, fab.Sysctl(ctx, "net.ipv4.ip_forward", "1"))
	} else {
		must(t, fab.IP(ctx, "link", "add", "fabric", "type", "bridge"))
		must(t, fab.IP(ctx, "link", "set", "fabric", "up"))
		must(t, fab.IP(ctx, "addr", "add", rr6Addr+"/64", "dev", "fabric", "nodad"))
	}
	nodes := make([]*fabricNode, 2)
	for i := range nodes {
		n := &fabricNode{id: i + 1, hosts: map[uint32]*frrproc.Netns{}, cfg: ipv6NodeConfig(i+1, unnumbered, v)}
		n.ns = frrtest.Netns(t, fmt.Sprintf("%sn%d-", prefix, n.id))
		port := fmt.Sprintf("p%d", n.id)
		must(t, fab.IP(ctx, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", n.ns.Name))
		if unnumbered {
			must(t, fab.IP(ctx, "link", "set", port, "up"))
		} else {
			must(t, fab.IP(ctx, "link", "set", port, "master", "fabric", "up"))
			must(t, n.ns.IP(ctx, "addr", "add", fmt.Sprintf("fd00:ff::%d/64", n.id), "dev", "eth0", "nodad"))
		}
		must(t, n.ns.IP(ctx, "link", "set", "eth0", "up"))
		must(t, n.ns.IP(ctx, "addr", "add", n.vtep()+"/32", "dev", "lo"))
		addVNI(t, ctx, n, 100)
		must(t, n.hosts[100].IP(ctx, "addr", "add", hostIP6(n.id, 100)+"/64", "dev", "eth0", "nodad"))
		nodes[i] = n
	}
	return fab, nodes
}

// TestEVPNFabricIPv6Underlay runs EVPN over an IPv6 underlay with real zebra + bgpd: a route reflector and two
// nodes whose BGP sessions run over IPv6 only, numbered (global addresses, "capability extended-nexthop" rendered
// from the peer group's ExtendedNextHop) and unnumbered (link-local, "neighbor eth0 interface"). The nodes'
// configs are rendered and applied through the Reloader. The IPv4 VTEPs reach each other through routes with IPv6
// next hops (RFC 8950), the type-2/type-3 routes of VNI 100 are exchanged, zebra floods to the remote VTEP, and
// the dual-stack hosts ping each other over IPv4 and IPv6 through VXLAN. Against the FRR that ships and the host's
// FRR 8.4.
func TestEVPNFabricIPv6Underlay(t *testing.T) {
	t.Parallel() // independent namespaces and FRR instances; mostly waiting on FRR
	for _, f := range []frrtest.FRR{frrtest.Shipped(t), frrtest.Host(t)} {
		for _, unnumbered := range []bool{false, true} {
			name := f.Name + "/numbered"
			if unnumbered {
				name = f.Name + "/unnumbered"
			}
			t.Run(name, func(t *testing.T) { ipv6UnderlayFabric(t, f, unnumbered) })
		}
	}
}

func ipv6UnderlayFabric(t *testing.T, f frrtest.FRR, unnumbered bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	v := frr.Version{Major: f.Major}
	start := time.Now()
	fab, nodes := newIPv6Fabric(t, ctx, "frr6", unnumbered, v)
	rrConf, rrPeer := rr6NumberedConfig, rr6Addr
	if unnumbered {
		rrConf, rrPeer = rr6UnnumberedConfig, "eth0"
	}
	frrtest.Router(t, frrproc.Options{Tools: f.Tools, Netns: fab.Name, Config: []byte(rrConf)})
	for _, n := range nodes {
		n.frr = frrtest.Router(t, frrproc.Options{Tools: f.Tools, Netns: n.ns.Name})
		n.target = frrvty.Target{VtySocket: n.frr.Dir, ConfDir: n.frr.ConfDir, Tools: n.frr.Tools(), Version: v}
		n.stateDir = t.TempDir()
		n.rel = newReloader(t, frrreload.Options{Target: n.target, StateDir: n.stateDir})
	}
	daemonsUp := time.Now()

	// The rendered config: no IPv4 session, the VTEP announced in ipv4 unicast over the IPv6 one.
	conf, err := frr.Render(&nodes[0].cfg)
	must(t, err)
	if want := " address-family ipv4 unicast\n  network 10.0.0.1/32\n  neighbor fabric activate\n"; !strings.Contains(string(conf), want) {
		t.Errorf("rendered config lacks %q:\n%s", want, conf)
	}
	for _, l := range strings.Split(string(conf), "\n") {
		if fields := strings.Fields(l); len(fields) > 1 && fields[0] == "neighbor" {
			if a, err := netip.ParseAddr(fields[1]); err == nil && a.Is4() {
				t.Errorf("rendered config has an IPv4 session: %q", l)
			}
		}
	}
	wantSession := " neighbor " + rr6Addr + " peer-group fabric\n"
	if unnumbered {
		wantSession = " neighbor eth0 interface peer-group fabric\n"
	} else if !strings.Contains(string(conf), " neighbor fabric capability extended-nexthop\n") {
		t.Errorf("numbered IPv6 session without extended next hops:\n%s", conf)
	}
	if !strings.Contains(string(conf), wantSession) {
		t.Errorf("rendered config lacks %q:\n%s", wantSession, conf)
	}
	for _, n := range nodes {
		n.apply(t, ctx)
	}
	configured := time.Now()

	// Sessions up over IPv6, each node holds the other's type-3 (IMET) route, valid and best: its next hop, the
	// other's IPv4 VTEP, resolves through the VTEP route learnt over the IPv6 session.
	waitType3(t, nodes, rrPeer, func(r frrvty.EVPNRoute, other *fabricNode) bool {
		return strings.Contains(r.Prefix, "["+other.vtep()+"]") && strings.Contains(r.RTs, "RT:65000:100") && r.Best &&
			r.NextHop == other.vtep()
	})
	converged := time.Now()

	// Each session's transport is IPv6: the local and remote addresses bgpd reports. The uplinks have no IPv4.
	// The addresses of each node's session: its own (localOf) and the route reflector's (remoteOf).
	localOf, remoteOf := map[int]netip.Addr{}, map[int]netip.Addr{}
	for _, n := range nodes {
		if out, err := n.ns.Exec(ctx, "ip", "-4", "-o", "addr", "show", "dev", "eth0"); err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("node %d: eth0 has IPv4 addresses (%v): %s", n.id, err, out)
		}
		var nbrs map[string]struct {
			State     string `json:"bgpState"`
			LocalHost string `json:"hostLocal"`
			Foreign   string `json:"hostForeign"`
		}
		must(t, n.target.ShowJSON(ctx, "show bgp neighbors json", &nbrs))
		if len(nbrs) != 1 {
			t.Fatalf("node %d: want one BGP neighbour, got %+v", n.id, nbrs)
		}
		for peer, s := range nbrs {
			local, lerr := netip.ParseAddr(s.LocalHost)
			remote, rerr := netip.ParseAddr(s.Foreign)
			if lerr != nil || rerr != nil || !local.Is6() || !remote.Is6() || local.Is4In6() || remote.Is4In6() {
				t.Errorf("node %d: session %s runs over %q -> %q, want IPv6 both ends", n.id, peer, s.LocalHost, s.Foreign)
			}
			if unnumbered && !remote.IsLinkLocalUnicast() {
				t.Errorf("node %d: unnumbered session %s reaches %s, want a link-local address", n.id, peer, remote)
			}
			localOf[n.id], remoteOf[n.id] = local, remote
			t.Logf("%s node %d: session %s %s over %s -> %s", f.Name, n.id, peer, s.State, s.LocalHost, s.Foreign)
		}
	}

	// The VTEP routes: the other node's /32 learnt over the IPv6 session, installed by zebra with an IPv6 next hop
	// (RFC 8950): numbered, the other node's address on the segment, its session's own (the reflector passes the
	// next hop on unchanged; it can be an address the node took from the router advertisements FRR sends on the
	// links of extended-next-hop sessions, hence not fd00:ff::N itself); unnumbered, the reflector's link-local address (it puts itself as the next hop in
	// place of a link-local one from another link, and forwards the VXLAN packets between its links).
	for _, n := range nodes {
		other := nodes[2-n.id]
		wantVia := localOf[other.id].String()
		if unnumbered {
			wantVia = remoteOf[n.id].String()
		}
		frrtest.Eventually(t, 20*time.Second, fmt.Sprintf("node %d: kernel route to VTEP %s", n.id, other.vtep()), func(ctx context.Context) (bool, string) {
			out, err := n.ns.Exec(ctx, "ip", "-j", "route", "show", other.vtep()+"/32")
			if err != nil {
				return false, err.Error()
			}
			var routes []struct {
				Via      struct{ Family, Host string }
				Dev      string   `json:"dev"`
				Protocol string   `json:"protocol"`
				Flags    []string `json:"flags"`
			}
			if err := json.Unmarshal(out, &routes); err != nil {
				return false, fmt.Sprintf("%v: %s", err, out)
			}
			if len(routes) != 1 || routes[0].Protocol != "bgp" || routes[0].Dev != "eth0" {
				return false, string(out)
			}
			r := routes[0]
			ok := r.Via.Family == "inet6" && r.Via.Host == wantVia
			if ok && n.id == 1 {
				t.Logf("%s: node 1's route to VTEP %s: %s", f.Name, other.vtep(), strings.TrimSpace(string(out)))
			}
			return ok, fmt.Sprintf("want via inet6 %s: %s", wantVia, out)
		})
	}

	// zebra floods VNI 100 to the other VTEP, IPv4 (head-end replication from the type-3 route): in its VNI and in
	// the kernel's flood entry on the VXLAN device.
	for _, n := range nodes {
		other := nodes[2-n.id]
		frrtest.Eventually(t, 20*time.Second, fmt.Sprintf("node %d: remote VTEP of VNI 100 in zebra and the kernel", n.id), func(ctx context.Context) (bool, string) {
			out, err := n.target.Show(ctx, "show evpn vni 100 json")
			if err != nil {
				return false, err.Error()
			}
			local, remote, err := zebraVTEPs(out)
			if err != nil || local != n.vtep() || len(remote) != 1 || remote[0] != other.vtep() {
				return false, fmt.Sprintf("%v: %s", err, out)
			}
			fdb, err := n.ns.Exec(ctx, "bridge", "fdb", "show", "dev", "vx100")
			if err != nil {
				return false, err.Error()
			}
			for _, l := range strings.Split(string(fdb), "\n") {
				if strings.HasPrefix(l, "00:00:00:00:00:00 ") && strings.Contains(l, "dst "+other.vtep()) {
					return true, ""
				}
			}
			return false, "fdb: " + string(fdb)
		})
	}

	// Data plane: the hosts on VNI 100 reach each other over IPv4 and IPv6 through VXLAN between the IPv4 VTEPs.
	n1, n2 := nodes[0], nodes[1]
	for _, dst := range []string{hostIP(2, 100), hostIP6(2, 100)} {
		frrtest.Eventually(t, 20*time.Second, "ping "+dst+" over VNI 100", func(ctx context.Context) (bool, string) {
			return ping(ctx, n1.hosts[100], dst)
		})
	}
	for _, dst := range []string{hostIP(1, 100), hostIP6(1, 100)} {
		if ok, out := ping(ctx, n2.hosts[100], dst); !ok {
			t.Errorf("ping %s from node 2's host: %s", dst, out)
		}
	}
	pinged := time.Now()

	// Type-2 routes: each host's MAC, learnt by the other node with the other's VTEP as next hop, and zebra's FDB
	// entry for it on the VXLAN device pointing at that VTEP.
	for _, n := range nodes {
		other := nodes[2-n.id]
		mac := hostMAC(t, ctx, other.hosts[100])
		frrtest.Eventually(t, 20*time.Second, fmt.Sprintf("node %d: type-2 route and FDB entry for node %d's host", n.id, other.id), func(ctx context.Context) (bool, string) {
			routes, err := n.target.EVPNRoutes(ctx, "macip")
			if err != nil {
				return false, err.Error()
			}
			found := false
			for _, r := range routes {
				found = found || strings.Contains(r.Prefix, mac) && strings.Contains(r.RTs, "RT:65000:100") && r.Best && r.NextHop == other.vtep()
			}
			if !found {
				return false, fmt.Sprintf("no type-2 for %s: %+v", mac, routes)
			}
			fdb, err := n.ns.Exec(ctx, "bridge", "fdb", "show", "dev", "vx100")
			if err != nil {
				return false, err.Error()
			}
			for _, l := range strings.Split(string(fdb), "\n") {
				if strings.HasPrefix(l, mac+" ") && strings.Contains(l, "dst "+other.vtep()) {
					return true, ""
				}
			}
			return false, "fdb: " + string(fdb)
		})
	}
	t.Logf("%s: namespaces and 3 routers up in %v; configs applied in %v; sessions and type-3 routes %v after apply; "+
		"pings over IPv4 and IPv6 %v later", f.Name, daemonsUp.Sub(start).Round(time.Millisecond), configured.Sub(daemonsUp).Round(time.Millisecond),
		converged.Sub(configured).Round(time.Millisecond), pinged.Sub(converged).Round(time.Millisecond))
}

// zebraVTEPs reads the local and the remote VTEPs of "show evpn vni N json". FRR 10 lists the remote ones as
// remoteVteps [{ip, flood}]; FRR 8.4 as a list of addresses under the key numRemoteVteps.
func zebraVTEPs(out []byte) (local string, remote []string, err error) {
	var vni struct {
		VTEP       string          `json:"vtepIp"`
		Remote     json.RawMessage `json:"remoteVteps"`
		NumRemote8 json.RawMessage `json:"numRemoteVteps"`
	}
	if err := json.Unmarshal(out, &vni); err != nil {
		return "", nil, err
	}
	if len(vni.Remote) > 0 {
		var vteps []struct {
			IP string `json:"ip"`
		}
		if err := json.Unmarshal(vni.Remote, &vteps); err != nil {
			return "", nil, fmt.Errorf("remoteVteps: %w", err)
		}
		for _, v := range vteps {
			remote = append(remote, v.IP)
		}
		return vni.VTEP, remote, nil
	}
	if len(vni.NumRemote8) > 0 && vni.NumRemote8[0] == '[' {
		if err := json.Unmarshal(vni.NumRemote8, &remote); err != nil {
			return "", nil, fmt.Errorf("numRemoteVteps: %w", err)
		}
	}
	return vni.VTEP, remote, nil
}
