package app_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// The L3 core of BGP-EVPN to the host, on two nodes each run by the real agent (standalone, from a node file,
// with real FRR) in VRF device mode:
//
//	wa (10.1.1.2, lo 10.77.0.1) --wA-- [l2br.300] na ==eth0 (192.168.0.0/24, iBGP + EVPN)== eth0 nb [l2br.301] --wB-- wb (10.1.2.2)
//	                                              na --mC-- col (10.250.0.2)                  nb --cB-- kc (10.200.2.2, lo 10.200.9.1)
//
// Both nodes have tenant VRF red (L3VNI 100); each has its own layer-2 network in red with an anycast gateway
// (l2a on na, l2b on nb), into whose bridge the test plugs the workload as a CNI would. wa peers with na's BGP
// in red and announces 10.77.0.1/32; kc peers with nb's BGP in the cluster VRF and announces 10.200.9.1/32; nb
// leaks between red and the cluster VRF. na mirrors what red receives from the fabric into a GRE tunnel to col.
const (
	l3TableRed   = 1100
	l3VNIRed     = 100
	l3ASN        = 65000
	l3WorkloadAS = 65100
	l3ClusterAS  = 65200
	l3GREKey     = 7
)

var (
	l3WorkloadPrefix = netip.MustParseAddr("10.77.0.1")  // announced by wa in red on na
	l3ClusterPrefix  = netip.MustParseAddr("10.200.9.1") // announced by kc in the cluster VRF on nb
	l3HostWB         = netip.MustParseAddr("10.1.2.2")
	l3Collector      = netip.MustParseAddr("10.250.0.2")
)

// l3Node is one node of the fabric: its namespace, FRR, agent and files.
type l3Node struct {
	name   string
	ns     *lab.Netns
	frr    *frrproc.Instance
	agent  *agent
	dir    string
	pinDir string
}

func (n *l3Node) configFile() string { return filepath.Join(n.dir, "node.yaml") }
func (n *l3Node) statusFile() string { return filepath.Join(n.dir, "status.yaml") }

// workloadFRR is the BGP speaker of a workload: it announces one address of its loopback to its gateway and
// installs nothing it learns, so the workload sends everything by its default route (with the source address
// the test chose).
func workloadFRR(asn int, routerID, gateway string, announce netip.Addr) []byte {
	return fmt.Appendf(nil, `frr defaults datacenter
bgp no-rib
!
router bgp %d
 bgp router-id %s
 no bgp ebgp-requires-policy
 no bgp default ipv4-unicast
 neighbor %s remote-as %d
 !
 address-family ipv4 unicast
  network %s/32
  neighbor %s activate
 exit-address-family
exit
`, asn, routerID, gateway, l3ASN, announce, gateway)
}

func permit(cidr string, le int32) v1.NodePrefixItem {
	return v1.NodePrefixItem{CIDR: cidr, Seq: 10, LE: &le, Action: v1.PrefixActionPermit}
}

// l3Specs are the two nodes' NodeNetworkConfigs: na (workload peering in red, GRE mirror of red's fabric
// ingress) and nb (cluster peering, leaking between red and the cluster VRF).
func l3Specs() (na, nb v1.NodeNetworkConfigSpec) {
	red := v1.NodeVRF{Name: "red", ID: 1, TableID: l3TableRed, VNI: l3VNIRed}
	underlay := func(vtep, peer string) v1.UnderlaySpec {
		return v1.UnderlaySpec{ASN: l3ASN, RouterID: vtep, VTEPAddress: vtep,
			Neighbors: []v1.UnderlayNeighbor{{Address: peer, RemoteASN: "internal"}}}
	}
	layer2 := func(name string, vlan int32, gw, mac string) v1.NodeLayer2 {
		return v1.NodeLayer2{Name: name, VLAN: vlan, VNI: vlan * 10, MTU: 1500, VRF: "red", AnycastMAC: mac, AnycastGateways: []string{gw}}
	}
	route := func(name, vrf string) v1.DataPlaneInterface {
		return v1.DataPlaneInterface{Name: name, VRF: vrf, Mode: v1.ModeRoute, Hook: v1.HookAuto}
	}
	key := int64(l3GREKey)

	na = v1.NodeNetworkConfigSpec{Revision: "l3-a-1", Underlay: underlay("10.255.0.1", "192.168.0.2"),
		VRFs: []v1.NodeVRF{
			// The default VRF holds the mirror tunnel's source loopback; its id counts nothing here.
			{Name: v1.DefaultVRFName, ID: 2, TableID: 254, Loopbacks: []v1.NodeLoopback{{Name: "lo.mir", Subnet: "10.250.9.0/24",
				Address: "10.250.9.1/32"}}},
			red,
		},
		Layer2s: []v1.NodeLayer2{layer2("l2a", 300, "10.1.1.1/24", "02:00:00:00:03:00")},
		BGPPeers: []v1.NodeBGPPeer{{Name: "workload", VRF: "red", RemoteASN: l3WorkloadAS, Addresses: []string{"10.1.1.2"},
			Import: []v1.NodePrefixItem{permit("10.77.0.0/16", 32)}, Export: []v1.NodePrefixItem{permit("0.0.0.0/0", 32)}}},
		Mirrors: []v1.NodeMirror{{Name: "red-from-fabric", VRF: "red", Direction: v1.MirrorIngress,
			Target: v1.NodeMirrorTarget{Name: "collector", Type: v1.MirrorTargetL2GRE, DestinationIP: l3Collector.String(),
				Key: &key, VRF: v1.DefaultVRFName, SourceLoopback: "lo.mir"}}},
		DataPlane: v1.DataPlaneSpec{Interfaces: []v1.DataPlaneInterface{route("br.red", "red"), route("l2br.300", "red")}},
	}

	redB := red
	redB.Leaks = []v1.VRFLeak{{Source: "red-cluster", Seq: 10,
		Import: []v1.NodePrefixItem{permit("10.1.0.0/16", 32)},   // red -> cluster
		Export: []v1.NodePrefixItem{permit("10.200.0.0/16", 32)}, // cluster -> red
	}}
	nb = v1.NodeNetworkConfigSpec{Revision: "l3-b-1", Underlay: underlay("10.255.0.2", "192.168.0.1"),
		VRFs:    []v1.NodeVRF{{Name: v1.DefaultVRFName, ID: 2, TableID: 254}, redB},
		Layer2s: []v1.NodeLayer2{layer2("l2b", 301, "10.1.2.1/24", "02:00:00:00:03:01")},
		BGPPeers: []v1.NodeBGPPeer{{Name: "cluster-workload", RemoteASN: l3ClusterAS, Addresses: []string{"10.200.2.2"},
			Import: []v1.NodePrefixItem{permit("10.200.0.0/16", 32)}, Export: []v1.NodePrefixItem{permit("0.0.0.0/0", 32)}}},
		DataPlane: v1.DataPlaneSpec{Interfaces: []v1.DataPlaneInterface{route("br.red", "red"), route("cB", v1.DefaultVRFName),
			route("l2br.301", "red")}},
	}
	return na, nb
}

// l3Topology is the fabric's namespaces and links. IPv6 is off everywhere, so every packet counted is one the
// test sent (or BGP's); the nodes forward (bpf_fib_lookup checks the lookup device's flag; the VRF devices the
// agent creates inherit "default").
func l3Topology() lab.Topology {
	node := func(name, vtep string) lab.Namespace {
		return lab.Namespace{Name: name, Loopback: []string{vtep + "/32"}, Sysctls: []lab.Sysctl{
			{Key: "net.ipv4.conf.all.forwarding", Value: "1"}, {Key: "net.ipv4.conf.default.forwarding", Value: "1"},
			{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"}, {Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"}}}
	}
	host := func(name string, loopback ...string) lab.Namespace {
		ns := hostNS(name)
		ns.Loopback = loopback
		return ns
	}
	port := func(ns, name string, addrs ...string) lab.Port { return lab.Port{NS: ns, Name: name, Addrs: addrs} }
	return lab.Topology{
		Namespaces: []lab.Namespace{node("na", "10.255.0.1"), node("nb", "10.255.0.2"),
			host("wa", l3WorkloadPrefix.String()+"/32"), host("wb"), host("kc", l3ClusterPrefix.String()+"/32"), host("col")},
		Veths: []lab.Veth{
			{A: port("na", "eth0", "192.168.0.1/24"), B: port("nb", "eth0", "192.168.0.2/24")},
			{A: port("wa", "eth0", "10.1.1.2/24"), B: port("na", "wA")}, // plugged into l2br.300 once it exists
			{A: port("wb", "eth0", "10.1.2.2/24"), B: port("nb", "wB")}, // plugged into l2br.301
			{A: port("kc", "eth0", "10.200.2.2/24"), B: port("nb", "cB", "10.200.2.1/24")},
			{A: port("col", "eth0", l3Collector.String()+"/24"), B: port("na", "mC", "10.250.0.1/24")},
		},
		Routes: []lab.Route{
			{NS: "wa", Dst: "default", Via: "10.1.1.1", Dev: "eth0"},
			{NS: "wb", Dst: "default", Via: "10.1.2.1", Dev: "eth0"},
			// kc speaks from the address it announces: the cluster VRF leaks that one into red, not its link.
			{NS: "kc", Dst: "default", Via: "10.200.2.1", Dev: "eth0", Src: l3ClusterPrefix.String()},
		},
		// The mirror's copies leave na without waiting for ARP.
		Neighbours: []lab.Neighbour{{NS: "na", Dev: "mC", IP: l3Collector.String(), MACOf: "col/eth0"}},
	}
}

// TestL3CoreWithVRFDevices runs the L3 core end to end on a kernel with VRF devices (the kernel lane): a prefix
// a workload announces over BGP in tenant VRF red on node A is reached from node B's workload through both
// nodes' eBPF routers over the L3VNI (symmetric IRB), counted per VRF in both; leaking between red and the
// cluster VRF carries traffic both ways; the GRE mirror delivers its copies to a collector.
func TestL3CoreWithVRFDevices(t *testing.T) {
	frrtest.Require(t)
	frrtest.RequireVRF(t, "tenant VRFs with an L3VNI, type-5 routes and leaking to the cluster VRF")
	l := lab.New(t)
	ctx := context.Background()
	bctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	mustf(t, l.Build(bctx, l3Topology()), "build the fabric")

	specA, specB := l3Specs()
	nodes := map[string]*l3Node{}
	for _, c := range []struct {
		name string
		spec v1.NodeNetworkConfigSpec
	}{{"na", specA}, {"nb", specB}} {
		n := &l3Node{name: c.name, ns: l.NS(c.name), dir: tempDir(t), pinDir: l.MustPinDir()}
		n.frr = frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})
		writeSpecFile(t, n.configFile(), c.spec)
		n.agent = startAgent(t, freePort(t), "--config-file", n.configFile(), "--status-file", n.statusFile(),
			"--netns", n.ns.Path, "--pin-dir", n.pinDir, "--state-file", filepath.Join(n.dir, "state", "last-good.yaml"),
			"--vrf-mode", "device", "--resync", "5s", "--frr", "reload", "--frr-vty-socket", n.frr.Dir,
			"--frr-conf-dir", n.frr.Dir, "--frr-root", n.frr.Tools().Root, "--frr-state-dir", filepath.Join(n.dir, "frr-state"),
			// The guest is slow: no second pair of daemons per node to validate in (vtysh -C still checks).
			"--frr-scratch=false")
		nodes[c.name] = n
	}
	na, nb := nodes["na"], nodes["nb"]
	for _, c := range []struct {
		node   *l3Node
		rev    string
		bridge string
		port   string
	}{{na, specA.Revision, "l2br.300", "wA"}, {nb, specB.Revision, "l2br.301", "wB"}} {
		waitStatus(t, c.node.agent, c.node.statusFile(), 5*time.Minute, c.node.name+" applies "+c.rev, func(s *v1.NodeNetworkConfig) bool {
			return s.Status.AppliedRevision == c.rev && isReady(s)
		})
		plug(t, c.node.ns, c.port, c.bridge)
	}
	frrtest.Router(t, frrproc.Options{Netns: l.NS("wa").Name, Config: workloadFRR(l3WorkloadAS, "10.1.1.2", "10.1.1.1", l3WorkloadPrefix)})
	frrtest.Router(t, frrproc.Options{Netns: l.NS("kc").Name, Config: workloadFRR(l3ClusterAS, "10.200.2.2", "10.200.2.1", l3ClusterPrefix)})

	// The routes each direction needs, as the kernel (and so bpf_fib_lookup) has them: wa's prefix learnt over
	// BGP in red on na and as a type-5 route on nb; nb's workload subnet as a type-5 route on na; kc's prefix
	// leaked into red and red's subnet leaked into the cluster VRF on nb.
	for _, r := range []struct {
		node *l3Node
		vrf  string // VRF device; "" main (the cluster VRF)
		dst  netip.Addr
		dev  string // "": any device
	}{
		{na, "vr.red", l3WorkloadPrefix, "l2br.300"},
		{nb, "vr.red", l3WorkloadPrefix, "br.red"},
		{na, "vr.red", l3HostWB, "br.red"},
		{nb, "vr.red", l3ClusterPrefix, "cB"},
		{nb, "", l3HostWB, ""},
	} {
		what := fmt.Sprintf("%s: route to %s in %q", r.node.name, r.dst, r.vrf)
		var last string
		err := lab.WaitFor(ctx, 4*time.Minute, 250*time.Millisecond, func() (bool, error) {
			if err := r.node.agent.running(); err != nil {
				return false, err
			}
			dev, err := routeDev(r.node.ns, r.vrf, r.dst)
			last = fmt.Sprintf("dev %q, %v", dev, err)
			return err == nil && (r.dev == "" || dev == r.dev), nil
		})
		if err != nil {
			t.Fatalf("%s: %v (last: %s)", what, err, last)
		}
		t.Logf("%s: %s", what, last)
	}
	wb, kc := l.NS("wb"), l.NS("kc")

	t.Run("symmetric IRB over the L3VNI", func(t *testing.T) {
		warmUp(t, wb, l3WorkloadPrefix)
		const count = 20
		before := snapshot(t, na, nb)
		pingOK(t, wb, l3WorkloadPrefix, count)
		d := snapshot(t, na, nb).minus(before)
		d.log(t, fmt.Sprintf("wb -> %s (wa's prefix on na), %d echo requests and %d replies", l3WorkloadPrefix, count, count))
		// Each request and each reply crosses both routers once in red: nb takes the request from l2br.301 and
		// the reply from br.red (the L3VNI), na the request from br.red and the reply from l2br.300.
		for _, name := range []string{"na", "nb"} {
			if got := d.forwarded[name]["red"]; got != 2*count {
				t.Errorf("%s: red forwarded %v packets, want %d", name, got, 2*count)
			}
			if got := d.kernel[name]; got != 0 {
				t.Errorf("%s: the kernel forwarded %d packets: traffic bypassed the eBPF router", name, got)
			}
		}
	})

	t.Run("leaking between the tenant and the cluster VRF", func(t *testing.T) {
		for _, c := range []struct {
			name     string
			from     *lab.Netns
			dst      netip.Addr
			fromVRF  string // the VRF of the ingress interface of the requests on nb
			replyVRF string
		}{
			{"tenant to cluster", wb, l3ClusterPrefix, "red", v1.DefaultVRFName},
			{"cluster to tenant", kc, l3HostWB, v1.DefaultVRFName, "red"},
		} {
			t.Run(c.name, func(t *testing.T) {
				warmUp(t, c.from, c.dst)
				const count = 20
				before := snapshot(t, nb)
				pingOK(t, c.from, c.dst, count)
				d := snapshot(t, nb).minus(before)
				d.log(t, fmt.Sprintf("%s -> %s, %d echo requests and %d replies", c.from.Logical, c.dst, count, count))
				// Requests enter nb's router in one VRF and replies in the other; each is forwarded once. What
				// else reaches nb's cluster VRF interfaces (kc's BGP session) is addressed to nb itself: the
				// router looks up the cluster VRF through the kernel's rules, table local first, and passes it.
				for _, vrf := range []string{c.fromVRF, c.replyVRF} {
					if got := d.forwarded["nb"][vrf]; got != count {
						t.Errorf("nb: %s forwarded %v packets, want %d", vrf, got, count)
					}
				}
				if got := d.kernel["nb"]; got != 0 {
					t.Errorf("nb: the kernel forwarded %d packets: traffic bypassed the eBPF router", got)
				}
			})
		}
	})

	t.Run("GRE mirror to a collector", func(t *testing.T) {
		st := waitStatus(t, na.agent, na.statusFile(), time.Minute, "na reports its mirror", func(s *v1.NodeNetworkConfig) bool {
			return len(s.Status.Mirrors) == 1
		})
		if m := st.Status.Mirrors[0]; !m.Applied {
			if m.Reason == v1.MirrorReasonNotSupported {
				testreq.KernelLacks(t, "GRE TAP tunnels (the mirror's target)", errors.New(m.Message))
			}
			t.Fatalf("mirror %s not applied: %s: %s", m.Name, m.Reason, m.Message)
		}
		warmUp(t, wb, l3WorkloadPrefix)
		capture := startGRECapture(t, l.NS("col"))
		const count = 10
		pingOK(t, wb, l3WorkloadPrefix, count)
		// na copies each request as it arrives from the fabric, before forwarding it, so the copies are on
		// their way once the replies are back; the replies leave na towards the fabric and are not copied.
		got := capture.wait(t, count, 30*time.Second)
		t.Logf("collector: %d GRE frames (key %d) from %s, %d of them wb's echo requests to %s; %d requests sent",
			got.frames, l3GREKey, "10.250.9.1", got.echoes, l3WorkloadPrefix, count)
		if got.echoes != count || got.frames != count {
			diag := ""
			for _, args := range [][]string{{"ip", "-s", "-d", "link", "show", "gm.collector"},
				{"tc", "-s", "filter", "show", "dev", "vx.red", "ingress"}, {"ip", "route", "get", l3Collector.String()}} {
				out, err := na.ns.Output(context.Background(), args[0], args[1:]...)
				diag += fmt.Sprintf("\n$ %s (%v)\n%s", strings.Join(args, " "), err, out)
			}
			t.Errorf("collector got %d GRE frames with %d echo requests, want exactly the %d requests%s", got.frames, got.echoes, count, diag)
		}
	})
}

// writeSpecFile writes spec as a NodeNetworkConfig file.
func writeSpecFile(t *testing.T, path string, spec v1.NodeNetworkConfigSpec) {
	t.Helper()
	n := &node{dir: filepath.Dir(path)}
	n.writeSpec(t, spec)
}

// plug enslaves the workload's port (test-owned) to the bridge the agent created, as a CNI plugin would.
func plug(t *testing.T, ns *lab.Netns, port, bridge string) {
	t.Helper()
	h := ns.Handle()
	br, err := h.LinkByName(bridge)
	mustf(t, err, "bridge %s", bridge)
	p, err := h.LinkByName(port)
	mustf(t, err, "port %s", port)
	mustf(t, h.LinkSetMaster(p, br), "plug %s into %s", port, bridge)
}

// routeDev is the egress device of the kernel's route to dst in VRF device vrf ("": main).
func routeDev(ns *lab.Netns, vrf string, dst netip.Addr) (string, error) {
	routes, err := ns.Handle().RouteGetWithOptions(net.IP(dst.AsSlice()), &netlink.RouteGetOptions{VrfName: vrf})
	if err != nil {
		return "", err
	}
	if len(routes) == 0 {
		return "", errors.New("no route")
	}
	l, err := ns.Handle().LinkByIndex(routes[0].LinkIndex)
	if err != nil {
		return "", err
	}
	return l.Attrs().Name, nil
}

// warmUp pings until one reply comes back: neighbours along the path are resolved, so the measured pings are
// lossless from their first packet.
func warmUp(t *testing.T, from *lab.Netns, dst netip.Addr) {
	t.Helper()
	res, err := from.Ping(context.Background(), dst, lab.PingOptions{Count: 1, Deadline: 60 * time.Second})
	if err != nil || res.Received == 0 {
		t.Fatalf("no reply from %s to %s within a minute: %v\n%s", dst, from.Logical, err, res.Output)
	}
}

// counts are the nodes' eBPF counters per VRF (forwarded packets, and every action/reason) and the kernel's
// forwarded datagrams.
type counts struct {
	forwarded map[string]map[string]float64            // node -> VRF -> packets
	reasons   map[string]map[string]map[string]float64 // node -> VRF -> "action/reason" -> packets
	kernel    map[string]uint64                        // node -> ForwDatagrams
}

func snapshot(t *testing.T, nodes ...*l3Node) counts {
	t.Helper()
	c := counts{forwarded: map[string]map[string]float64{}, reasons: map[string]map[string]map[string]float64{},
		kernel: map[string]uint64{}}
	for _, n := range nodes {
		fams, err := n.agent.scrape()
		mustf(t, err, "scrape %s", n.name)
		c.forwarded[n.name], c.reasons[n.name] = map[string]float64{}, map[string]map[string]float64{}
		if f, ok := fams["network_operator_vrf_packets_total"]; ok {
			for _, m := range f.Metric {
				labels := map[string]string{}
				for _, lp := range m.Label {
					labels[lp.GetName()] = lp.GetValue()
				}
				vrf, v := labels["vrf"], m.GetCounter().GetValue()
				if c.reasons[n.name][vrf] == nil {
					c.reasons[n.name][vrf] = map[string]float64{}
				}
				c.reasons[n.name][vrf][labels["action"]+"/"+labels["reason"]] += v
				if labels["action"] == "forwarded" {
					c.forwarded[n.name][vrf] += v
				}
			}
		}
		s, err := n.ns.SNMP("Ip")
		mustf(t, err, "snmp of %s", n.name)
		c.kernel[n.name] = s["ForwDatagrams"]
	}
	return c
}

// minus is c - before, keeping only what moved.
func (c counts) minus(before counts) counts {
	d := counts{forwarded: map[string]map[string]float64{}, reasons: map[string]map[string]map[string]float64{},
		kernel: map[string]uint64{}}
	for node, vrfs := range c.reasons {
		d.forwarded[node], d.reasons[node] = map[string]float64{}, map[string]map[string]float64{}
		for vrf, rs := range vrfs {
			for r, v := range rs {
				if dv := v - before.reasons[node][vrf][r]; dv != 0 {
					if d.reasons[node][vrf] == nil {
						d.reasons[node][vrf] = map[string]float64{}
					}
					d.reasons[node][vrf][r] = dv
				}
			}
			d.forwarded[node][vrf] = c.forwarded[node][vrf] - before.forwarded[node][vrf]
		}
		d.kernel[node] = c.kernel[node] - before.kernel[node]
	}
	return d
}

func (c counts) log(t *testing.T, what string) {
	t.Helper()
	var b strings.Builder
	nodes := sortedKeys(c.reasons)
	for _, node := range nodes {
		fmt.Fprintf(&b, "\n  %s: kernel forwarded %d;", node, c.kernel[node])
		for _, vrf := range sortedKeys(c.reasons[node]) {
			rs := c.reasons[node][vrf]
			keys := sortedKeys(rs)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = fmt.Sprintf("%s +%v", k, rs[k])
			}
			fmt.Fprintf(&b, " vrf %s: %s;", vrf, strings.Join(parts, ", "))
		}
	}
	t.Logf("%s; eBPF counter deltas:%s", what, b.String())
}

// greCapture reads the frames arriving at the collector's eth0.
type greCapture struct{ fd int }

type greCount struct{ frames, echoes int }

func startGRECapture(t *testing.T, col *lab.Netns) *greCapture {
	t.Helper()
	c := &greCapture{fd: -1}
	err := col.Do(func() error {
		idx, err := col.Ifindex("eth0")
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: idx}); err != nil {
			unix.Close(fd)
			return err
		}
		c.fd = fd
		return nil
	})
	mustf(t, err, "packet socket at the collector")
	t.Cleanup(func() { unix.Close(c.fd) })
	return c
}

func htons(v uint16) uint16 { return v>>8 | v<<8 }

// wait reads until want echo requests were seen or timeout passed, then counts what else is already queued.
func (c *greCapture) wait(t *testing.T, want int, timeout time.Duration) greCount {
	t.Helper()
	var got greCount
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 4096)
	for {
		left := time.Until(deadline)
		if got.echoes >= want {
			left = 0 // drain only what is queued: a copy too many shows as an extra frame
		}
		tv := unix.NsecToTimeval(max(int64(left), int64(time.Millisecond)))
		mustf(t, unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv), "receive timeout")
		n, from, err := unix.Recvfrom(c.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			if got.echoes >= want || time.Now().After(deadline) {
				return got
			}
			continue
		}
		mustf(t, err, "receive at the collector")
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		if isGRE, echo := parseGRECopy(buf[:n]); isGRE {
			got.frames++
			if echo {
				got.echoes++
			}
		}
	}
}

// parseGRECopy says whether frame is a GRE TAP packet with the mirror's key, and whether the Ethernet frame it
// carries is an ICMP echo request from wb to wa's prefix.
func parseGRECopy(frame []byte) (isGRE, echo bool) {
	const greProtoTEB = 0x6558 // transparent Ethernet bridging: GRE TAP
	if len(frame) < 14+20 || binary.BigEndian.Uint16(frame[12:]) != unix.ETH_P_IP {
		return false, false
	}
	ip := frame[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != unix.IPPROTO_GRE || len(ip) < ihl+8 {
		return false, false
	}
	gre := ip[ihl:]
	flags, proto := binary.BigEndian.Uint16(gre), binary.BigEndian.Uint16(gre[2:])
	off := 4
	if flags&0x8000 != 0 { // checksum present: it comes before the key
		off += 4
	}
	if proto != greProtoTEB || flags&0x2000 == 0 || len(gre) < off+4 || binary.BigEndian.Uint32(gre[off:]) != l3GREKey {
		return false, false
	}
	off += 4
	if flags&0x1000 != 0 { // sequence number
		off += 4
	}
	if len(gre) < off {
		return true, false
	}
	inner := gre[off:]
	if len(inner) < 14+20+8 || binary.BigEndian.Uint16(inner[12:]) != unix.ETH_P_IP {
		return true, false
	}
	iip := inner[14:]
	iihl := int(iip[0]&0x0f) * 4
	src, _ := netip.AddrFromSlice(iip[12:16])
	dst, _ := netip.AddrFromSlice(iip[16:20])
	return true, iip[9] == unix.IPPROTO_ICMP && len(iip) > iihl && iip[iihl] == 8 && src == l3HostWB && dst == l3WorkloadPrefix
}
