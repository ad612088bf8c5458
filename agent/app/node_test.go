package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// The node topology: namespace "node" is the node the agent configures; tenant hosts hang off it on veths.
//
//	ha (10.1.1.2) --nA-- node --nB-- hb (10.1.2.2)     VRF red  (VNI 100)
//	hc (10.2.1.2) --nC-- node --nD-- hd (10.2.2.2)     VRF blue (VNI 200)
//	hl (10.1.9.2) --nL-- [l2br.300]                     L2 network l2a (VLAN 300, VNI 3000) routed in red
//
// The node's VRF tables carry the tenant subnets (routes the test owns: the agent must leave them alone);
// nL is enslaved by the test to the bridge the agent creates for l2a. Neighbours are permanent, so traffic
// needs no ARP and flows are lossless from their first packet.
const (
	tableRed   = 1_000_000_100
	tableBlue  = 1_000_000_200
	tableGreen = 1_000_000_500
	l2Bridge   = "l2br.300"
	anycastMAC = "02:00:00:00:03:00"
	vtep       = "10.255.0.1"
)

var (
	addrA = netip.MustParseAddr("10.1.1.2")
	addrB = netip.MustParseAddr("10.1.2.2")
	addrC = netip.MustParseAddr("10.2.1.2")
	addrD = netip.MustParseAddr("10.2.2.2")
	addrL = netip.MustParseAddr("10.1.9.2")
)

type node struct {
	lab    *lab.Lab
	ns     *lab.Netns
	pinDir string
	dir    string // config, state and status files
}

func (n *node) host(name string) *lab.Netns { return n.lab.NS(name) }

func (n *node) configFile() string { return filepath.Join(n.dir, "node.yaml") }
func (n *node) statusFile() string { return filepath.Join(n.dir, "status.yaml") }
func (n *node) stateFile() string  { return filepath.Join(n.dir, "state", "last-good.yaml") }

// agentArgs are the flags of a standalone agent on this node without FRR.
func (n *node) agentArgs(extra ...string) []string {
	return append([]string{"--config-file", n.configFile(), "--status-file", n.statusFile(),
		"--netns", n.ns.Path, "--pin-dir", n.pinDir, "--state-file", n.stateFile(),
		"--frr", "none", "--resync", "2s", "--vrf-mode", "table-only"}, extra...)
}

func hostNS(name string) lab.Namespace {
	return lab.Namespace{Name: name, Sysctls: []lab.Sysctl{{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"},
		{Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"}}}
}

// newNode builds the topology; without root it skips.
func newNode(t *testing.T) *node {
	t.Helper()
	l := lab.New(t)
	ctx := context.Background()
	hostPort := func(ns, addr string) lab.Port { return lab.Port{NS: ns, Name: "eth0", Addrs: []string{addr}} }
	nodePort := func(name, addr string) lab.Port {
		return lab.Port{NS: "node", Name: name, Addrs: []string{addr}, NoPrefixRoute: true}
	}
	topo := lab.Topology{
		Namespaces: []lab.Namespace{
			{Name: "node", Loopback: []string{vtep + "/32"}, Sysctls: []lab.Sysctl{
				// bpf_fib_lookup checks the forwarding flag of the ingress device (table-only VRFs have no VRF
				// device); bridges the agent creates inherit "default". That the eBPF path - not the kernel -
				// forwarded is checked with the kernel's forwarding counter.
				{Key: "net.ipv4.conf.all.forwarding", Value: "1"},
				{Key: "net.ipv4.conf.default.forwarding", Value: "1"},
				{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"},
				{Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"},
			}},
			hostNS("ha"), hostNS("hb"), hostNS("hc"), hostNS("hd"), hostNS("hl"),
		},
		Veths: []lab.Veth{
			{A: hostPort("ha", "10.1.1.2/24"), B: nodePort("nA", "10.1.1.1/24")},
			{A: hostPort("hb", "10.1.2.2/24"), B: nodePort("nB", "10.1.2.1/24")},
			{A: hostPort("hc", "10.2.1.2/24"), B: nodePort("nC", "10.2.1.1/24")},
			{A: hostPort("hd", "10.2.2.2/24"), B: nodePort("nD", "10.2.2.1/24")},
			{A: hostPort("hl", "10.1.9.2/24"), B: lab.Port{NS: "node", Name: "nL"}},
		},
		// A link the agent does not own, to check it is left alone.
		Devices: []lab.Device{{Port: lab.Port{NS: "node", Name: "keep0", Addrs: []string{"192.0.2.1/24"}}}},
		Routes: []lab.Route{
			{NS: "ha", Dst: "default", Via: "10.1.1.1", Dev: "eth0"},
			{NS: "hb", Dst: "default", Via: "10.1.2.1", Dev: "eth0"},
			{NS: "hc", Dst: "default", Via: "10.2.1.1", Dev: "eth0"},
			{NS: "hd", Dst: "default", Via: "10.2.2.1", Dev: "eth0"},
			{NS: "hl", Dst: "default", Via: "10.1.9.1", Dev: "eth0"},
			{NS: "node", Table: tableRed, Dst: "10.1.1.0/24", Dev: "nA"},
			{NS: "node", Table: tableRed, Dst: "10.1.2.0/24", Dev: "nB"},
			{NS: "node", Table: tableRed, Dst: "10.2.2.0/24", Dev: "nD"}, // used once nD moves to red
			{NS: "node", Table: tableBlue, Dst: "10.2.1.0/24", Dev: "nC"},
			{NS: "node", Table: tableBlue, Dst: "10.2.2.0/24", Dev: "nD"},
			{NS: "node", Table: tableGreen, Dst: "10.2.2.0/24", Dev: "nD"},
		},
		Neighbours: []lab.Neighbour{
			{NS: "ha", Dev: "eth0", IP: "10.1.1.1", MACOf: "node/nA"},
			{NS: "hb", Dev: "eth0", IP: "10.1.2.1", MACOf: "node/nB"},
			{NS: "hc", Dev: "eth0", IP: "10.2.1.1", MACOf: "node/nC"},
			{NS: "hd", Dev: "eth0", IP: "10.2.2.1", MACOf: "node/nD"},
			{NS: "hl", Dev: "eth0", IP: "10.1.9.1", MAC: anycastMAC},
			{NS: "node", Dev: "nA", IP: "10.1.1.2", MACOf: "ha/eth0"},
			{NS: "node", Dev: "nB", IP: "10.1.2.2", MACOf: "hb/eth0"},
			{NS: "node", Dev: "nC", IP: "10.2.1.2", MACOf: "hc/eth0"},
			{NS: "node", Dev: "nD", IP: "10.2.2.2", MACOf: "hd/eth0"},
		},
	}
	if err := l.Build(ctx, topo); err != nil {
		t.Fatalf("build topology: %v", err)
	}
	return &node{lab: l, ns: l.NS("node"), pinDir: l.MustPinDir(), dir: tempDir(t)}
}

// attachL2Host enslaves nL (test-owned) to the bridge the agent created, and gives the node a permanent
// neighbour for hl on it.
func (n *node) attachL2Host(t *testing.T) {
	t.Helper()
	h := n.ns.Handle()
	br, err := h.LinkByName(l2Bridge)
	if err != nil {
		t.Fatalf("bridge %s: %v", l2Bridge, err)
	}
	port, err := h.LinkByName("nL")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetMaster(port, br); err != nil {
		t.Fatalf("enslave nL to %s: %v", l2Bridge, err)
	}
	mac, err := n.host("hl").MAC("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.ns.AddNeighbour(l2Bridge, addrL.String(), mac); err != nil {
		t.Fatal(err)
	}
}

// baseSpec is revision 1: VRFs red and blue, the L2 network in red, the router on the four host links, the
// L2 bridge and the L3 VNI links.
func baseSpec(rev string) v1.NodeNetworkConfigSpec {
	s := v1.NodeNetworkConfigSpec{
		Revision: rev,
		Underlay: v1.UnderlaySpec{ASN: 65000, RouterID: vtep, VTEPAddress: vtep},
		VRFs: []v1.NodeVRF{
			{Name: "blue", ID: 2, TableID: tableBlue, VNI: 200},
			{Name: "red", ID: 1, TableID: tableRed, VNI: 100},
		},
		Layer2s: []v1.NodeLayer2{{Name: "l2a", VLAN: 300, VNI: 3000, MTU: 1500, VRF: "red", AnycastMAC: anycastMAC,
			AnycastGateways: []string{"10.1.9.1/24"}}},
		DataPlane: v1.DataPlaneSpec{Interfaces: []v1.DataPlaneInterface{
			{Name: "br.blue", VRF: "blue", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: "br.red", VRF: "red", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: l2Bridge, VRF: "red", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: "nA", VRF: "red", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: "nB", VRF: "red", Mode: v1.ModeRoute, Hook: v1.HookTC},
			{Name: "nC", VRF: "blue", Mode: v1.ModeRoute, Hook: v1.HookAuto},
			{Name: "nD", VRF: "blue", Mode: v1.ModeRoute, Hook: v1.HookAuto},
		}},
	}
	s.ExpectedMapVersion = s.MapVersion()
	return s
}

// writeSpec writes spec as the node's NodeNetworkConfig file (atomically, as a config manager would).
func (n *node) writeSpec(t *testing.T, spec v1.NodeNetworkConfigSpec) {
	t.Helper()
	spec.ExpectedMapVersion = spec.MapVersion()
	doc := v1.NodeNetworkConfig{}
	doc.APIVersion, doc.Kind, doc.Name = v1.GroupVersion.String(), "NodeNetworkConfig", "node"
	doc.Spec = spec
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	writeFileAtomic(t, n.configFile(), data)
}

// appliedRev waits until the status says rev is applied and Ready.
func (n *node) appliedRev(t *testing.T, a *agent, rev string) *v1.NodeNetworkConfig {
	t.Helper()
	return waitStatus(t, a, n.statusFile(), 30*time.Second, "revision "+rev+" applied", func(s *v1.NodeNetworkConfig) bool {
		return s.Spec.Revision == rev && s.Status.AppliedRevision == rev && isReady(s)
	})
}

func isReady(s *v1.NodeNetworkConfig) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == v1.ConditionReady {
			return c.Status == "True"
		}
	}
	return false
}

// pingOK pings dst from host and fails the test on any loss.
func pingOK(t *testing.T, from *lab.Netns, dst netip.Addr, count int) {
	t.Helper()
	res, err := from.Ping(context.Background(), dst, lab.PingOptions{Count: count, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatalf("ping %s from %s: %v", dst, from.Logical, err)
	}
	if res.Received != count {
		t.Fatalf("ping %s from %s: %d of %d replies\n%s", dst, from.Logical, res.Received, count, res.Output)
	}
}

// pingFails checks that dst is not reachable from host.
func pingFails(t *testing.T, from *lab.Netns, dst netip.Addr) {
	t.Helper()
	res, err := from.Ping(context.Background(), dst, lab.PingOptions{Count: 3, Interval: 5 * time.Millisecond, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("ping %s from %s: %v", dst, from.Logical, err)
	}
	if res.Received != 0 {
		t.Fatalf("ping %s from %s: %d replies, want none", dst, from.Logical, res.Received)
	}
}

// linkIDs reads the IDs of the pinned tcx/XDP links of the agent.
func (n *node) linkIDs(t *testing.T) map[string]link.ID {
	t.Helper()
	ids := map[string]link.ID{}
	for _, kind := range []string{"tcx", "xdp"} {
		dir := filepath.Join(n.pinDir, "links", kind)
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			l, err := link.LoadPinnedLink(filepath.Join(dir, e.Name()), nil)
			if err != nil {
				t.Fatal(err)
			}
			info, err := l.Info()
			l.Close()
			if err != nil {
				t.Fatal(err)
			}
			ids[e.Name()] = info.ID
		}
	}
	return ids
}

// forwarded reads the kernel's IPv4 forwarding counter of the node: packets the kernel routed, not eBPF.
func (n *node) kernelForwarded(t *testing.T) uint64 {
	t.Helper()
	s, err := n.ns.SNMP("Ip")
	if err != nil {
		t.Fatal(err)
	}
	return s["ForwDatagrams"]
}

func (n *node) linkExists(name string) bool {
	_, err := n.ns.Handle().LinkByName(name)
	return err == nil
}

func ifindexOf(t *testing.T, ns *lab.Netns, name string) int {
	t.Helper()
	i, err := ns.Ifindex(name)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func mustf(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}
