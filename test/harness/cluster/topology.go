package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/test/harness/kubenodes"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// Underlay facts shared by the topology, the operator's flags and the route reflector.
const (
	// UnderlayASN is the AS of the nodes and the route reflector (iBGP).
	UnderlayASN = 65000
	// Uplink is each node's interface to the fabric.
	Uplink = "up0"
	// JumboMTU is the uplink MTU of the nodes that carry jumbo overlay frames; SmallMTU carries 1500-byte
	// frames plus the 50 bytes of VXLAN encapsulation, not more.
	JumboMTU = 9100
	SmallMTU = 1550
	// reflectorID is the route reflector's router id.
	reflectorID = "10.0.0.254"
)

// Node is one namespace node: its namespace, FRR, agent and Kubernetes name.
type Node struct {
	// Name is the Kubernetes Node name (node-1 ...); Index is 1-based.
	Name  string
	Index int
	NS    *lab.Netns
	// Address is the node's loopback address: router id, VTEP and InternalIP.
	Address   netip.Addr
	UplinkMTU int
	// FRR is the node's FRR process (processes form; in the helm form FRR runs in the agent pod).
	FRR *frrproc.Instance
	// MetricsAddr is the agent's /metrics address (host namespace loopback).
	MetricsAddr string
	PinDir      string
	Dir         string

	agent *proc
	kube  *kubenodes.Node
}

// Workload is a tenant workload: a namespace with one interface plugged into a node's L2 network bridge.
type Workload struct {
	// Name is the tenant letter and the node index, e.g. a1.
	Name    string
	VRF     string
	Network Network
	Node    *Node
	NS      *lab.Netns
	Addr    netip.Addr
	// Port is the node-side end of the workload's veth (enslaved to Network.Bridge()).
	Port string
}

// Label is how matrices name the workload, e.g. "a1 10.100.0.11".
func (w *Workload) Label() string { return fmt.Sprintf("%s %s", w.Name, w.Addr) }

// nodeAddr is node i's loopback address.
func nodeAddr(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}) }

// workloadAddr is the address of the workload of node i on network n: host .10+i of its subnet.
func workloadAddr(n Network, i int) netip.Addr {
	a := n.Gateway.Masked().Addr().As4()
	a[3] = byte(10 + i)
	return netip.AddrFrom4(a)
}

// planWorkloads places one workload per tenant on every node; a tenant's workloads alternate between its
// networks, so the matrix has same-network pairs (bridged) and cross-network pairs (routed) on different nodes.
func (c *Cluster) planWorkloads() {
	for i := 1; i <= c.opts.Nodes; i++ {
		for t, vrf := range c.samples.VRFs {
			nets := c.samples.networksOf(vrf)
			n := nets[(i-1)%len(nets)]
			name := fmt.Sprintf("%c%d", 'a'+t, i)
			c.loads = append(c.loads, &Workload{Name: name, VRF: vrf, Network: n, Node: c.nodes[i-1],
				Addr: workloadAddr(n, i), Port: "ve-" + name})
		}
	}
}

// FlowPair is a sender and a receiver on one node, in two networks of one VRF: their traffic is routed by that
// node's eBPF router alone (both networks have their gateway on every node), so a flow between them crosses the
// router of exactly that node, whatever FRR does meanwhile.
type FlowPair struct {
	Node     *Node
	From, To *Workload
}

// planFlows places a flow pair on every node, in the first VRF with two networks (host .100+i of each).
func (c *Cluster) planFlows() {
	for _, vrf := range c.samples.VRFs {
		nets := c.samples.networksOf(vrf)
		if len(nets) < 2 {
			continue
		}
		for _, n := range c.nodes {
			at := func(nw Network) netip.Addr {
				a := nw.Gateway.Masked().Addr().As4()
				a[3] = byte(100 + n.Index)
				return netip.AddrFrom4(a)
			}
			from := &Workload{Name: fmt.Sprintf("u%d", n.Index), VRF: vrf, Network: nets[0], Node: n, Addr: at(nets[0]), Port: fmt.Sprintf("ve-u%d", n.Index)}
			to := &Workload{Name: fmt.Sprintf("v%d", n.Index), VRF: vrf, Network: nets[1], Node: n, Addr: at(nets[1]), Port: fmt.Sprintf("ve-v%d", n.Index)}
			c.flows = append(c.flows, FlowPair{Node: n, From: from, To: to})
		}
		return
	}
}

// allLoads are the workloads of the matrix and the ends of the flow pairs.
func (c *Cluster) allLoads() []*Workload {
	out := slices.Clone(c.loads)
	for _, f := range c.flows {
		out = append(out, f.From, f.To)
	}
	return out
}

// BuildTopology creates the namespaces (fabric, nodes, workloads), the underlay veths and the workloads'
// veths, and starts FRR: a route reflector in the fabric, empty daemons on every node (the agents configure
// them).
func (c *Cluster) BuildTopology(ctx context.Context) error {
	for i := 1; i <= c.opts.Nodes; i++ {
		n := &Node{Name: fmt.Sprintf("node-%d", i), Index: i, Address: nodeAddr(i), UplinkMTU: JumboMTU,
			Dir: filepath.Join(c.workDir, fmt.Sprintf("node-%d", i))}
		if i == c.opts.SmallMTUNode {
			n.UplinkMTU = SmallMTU
		}
		if err := os.MkdirAll(n.Dir, 0o755); err != nil {
			return fmt.Errorf("node directory: %w", err)
		}
		c.nodes = append(c.nodes, n)
	}
	c.planWorkloads()
	if c.opts.Install == InstallHelm {
		c.planFlows()
	}

	noIPv6 := []lab.Sysctl{{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"}, {Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"}}
	topo := lab.Topology{Namespaces: []lab.Namespace{{Name: "fab", Sysctls: []lab.Sysctl{
		{Key: "net.ipv4.ip_forward", Value: "1"}, {Key: "net.ipv6.conf.all.forwarding", Value: "1"},
	}}}}
	for _, n := range c.nodes {
		sysctls := []lab.Sysctl{
			// A node forwards (as Kubernetes nodes do); bpf_fib_lookup also checks the forwarding flag of the
			// ingress device, and the bridges the agent creates inherit "default".
			{Key: "net.ipv4.conf.all.forwarding", Value: "1"},
			{Key: "net.ipv4.conf.default.forwarding", Value: "1"},
			{Key: "net.ipv6.conf.all.forwarding", Value: "1"},
			// The uplink keeps IPv6 (BGP unnumbered runs over its link-local address); devices created later
			// (the agent's bridges and VXLANs) get none, so no router solicitations or MLD reports blur the
			// per-VRF counters of this IPv4 demo.
			{Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"},
		}
		topo.Namespaces = append(topo.Namespaces, lab.Namespace{Name: fmt.Sprintf("n%d", n.Index), Sysctls: sysctls,
			Loopback: []string{n.Address.String() + "/32"}})
		topo.Veths = append(topo.Veths, lab.Veth{
			A: lab.Port{NS: fmt.Sprintf("n%d", n.Index), Name: Uplink, MTU: n.UplinkMTU},
			B: lab.Port{NS: "fab", Name: n.Name, MTU: n.UplinkMTU},
		})
	}
	for _, w := range c.allLoads() {
		nodeNS := fmt.Sprintf("n%d", w.Node.Index)
		topo.Namespaces = append(topo.Namespaces, lab.Namespace{Name: w.Name, Sysctls: noIPv6})
		topo.Veths = append(topo.Veths, lab.Veth{
			A: lab.Port{NS: w.Name, Name: "eth0", Addrs: []string{netip.PrefixFrom(w.Addr, w.Network.Gateway.Bits()).String()}},
			B: lab.Port{NS: nodeNS, Name: w.Port},
		})
		topo.Routes = append(topo.Routes, lab.Route{NS: w.Name, Dst: "default", Via: w.Network.Gateway.Addr().String(), Dev: "eth0"})
	}
	if err := c.lab.Build(ctx, topo); err != nil {
		return fmt.Errorf("build topology: %w", err)
	}
	var ok bool
	if c.fabricN, ok = c.lab.Namespace("fab"); !ok {
		return errors.New("fabric namespace missing after build")
	}
	for _, n := range c.nodes {
		if n.NS, ok = c.lab.Namespace(fmt.Sprintf("n%d", n.Index)); !ok {
			return fmt.Errorf("namespace of %s missing after build", n.Name)
		}
		// The node-side ends of the workloads' veths stay without IPv6 too (they were created before
		// default.disable_ipv6 was set).
		for _, w := range c.allLoads() {
			if w.Node == n {
				if err := n.NS.Sysctl("net.ipv6.conf."+w.Port+".disable_ipv6", "1"); err != nil {
					return err
				}
			}
		}
		dir, err := c.lab.PinDir()
		if err != nil {
			return fmt.Errorf("pin directory of %s: %w", n.Name, err)
		}
		n.PinDir = dir
	}
	for _, w := range c.allLoads() {
		if w.NS, ok = c.lab.Namespace(w.Name); !ok {
			return fmt.Errorf("namespace of workload %s missing after build", w.Name)
		}
	}
	c.logf("  fabric    %s: route reflector (AS %d), one point-to-point uplink per node", c.fabricN.Name, UnderlayASN)
	for _, n := range c.nodes {
		var names []string
		for _, w := range c.loads {
			if w.Node == n {
				names = append(names, w.Name)
			}
		}
		c.logf("  %-9s %s: loopback/VTEP %s, uplink MTU %d, workloads %s", n.Name, n.NS.Name, n.Address, n.UplinkMTU, strings.Join(names, " "))
	}
	return c.startFRR(ctx)
}

// reflectorConfig is the fabric's FRR: an iBGP route reflector for IPv4 (the node loopbacks, next hop
// rewritten to itself, so it also forwards the underlay) and EVPN (next hops kept: the VTEPs).
func (c *Cluster) reflectorConfig() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "frr defaults datacenter\n!\nrouter bgp %d\n bgp router-id %s\n bgp cluster-id %s\n", UnderlayASN, reflectorID, reflectorID)
	b.WriteString(" no bgp default ipv4-unicast\n neighbor nodes peer-group\n neighbor nodes remote-as internal\n")
	for _, n := range c.nodes {
		fmt.Fprintf(&b, " neighbor %s interface peer-group nodes\n", n.Name)
	}
	b.WriteString(` !
 address-family ipv4 unicast
  neighbor nodes activate
  neighbor nodes route-reflector-client
  neighbor nodes next-hop-self force
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor nodes activate
  neighbor nodes route-reflector-client
 exit-address-family
exit
`)
	return []byte(b.String())
}

func (c *Cluster) startFRR(ctx context.Context) error {
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	in, err := frrproc.Start(sctx, frrproc.Options{Tools: c.opts.frrTools(), Netns: c.fabricN.Name, Config: c.reflectorConfig()})
	if err != nil {
		return fmt.Errorf("route reflector: %w", err)
	}
	c.fabric = in
	c.onClose("FRR of the fabric", in.Stop)
	if err := c.recordDirs(in.Dir, in.ConfDir); err != nil {
		return err
	}
	if c.opts.Install == InstallHelm {
		c.logf("  FRR (zebra + bgpd) running in the fabric (%v); on the nodes FRR runs in its own DaemonSet", time.Since(start).Round(10*time.Millisecond))
		return nil
	}
	for _, n := range c.nodes {
		in, err := frrproc.Start(sctx, frrproc.Options{Tools: c.opts.frrTools(), Netns: n.NS.Name})
		if err != nil {
			return fmt.Errorf("FRR of %s: %w", n.Name, err)
		}
		n.FRR = in
		c.onClose("FRR of "+n.Name, in.Stop)
		if err := c.recordDirs(in.Dir, in.ConfDir); err != nil {
			return err
		}
	}
	c.logf("  FRR (zebra + bgpd) running in the fabric and in every node (%v)", time.Since(start).Round(10*time.Millisecond))
	return nil
}

// PlugWorkloads enslaves every workload's node-side port to its network's bridge on its node, as a CNI plugin
// would once the node's network is configured. The bridges exist once the first revision is applied.
func (c *Cluster) PlugWorkloads(ctx context.Context) error { return c.plug(ctx, c.loads) }

func (c *Cluster) plug(ctx context.Context, loads []*Workload) error {
	for _, w := range loads {
		h := w.Node.NS.Handle()
		err := wait.Poll(ctx, 100*time.Millisecond, 30*time.Second, "bridge "+w.Network.Bridge()+" on "+w.Node.Name,
			func(context.Context) (bool, string, error) {
				if _, err := h.LinkByName(w.Network.Bridge()); err != nil {
					return false, err.Error(), nil
				}
				return true, "", nil
			})
		if err != nil {
			return err
		}
		br, err := h.LinkByName(w.Network.Bridge())
		if err != nil {
			return fmt.Errorf("bridge %s on %s: %w", w.Network.Bridge(), w.Node.Name, err)
		}
		port, err := h.LinkByName(w.Port)
		if err != nil {
			return fmt.Errorf("port %s on %s: %w", w.Port, w.Node.Name, err)
		}
		if err := h.LinkSetMasterByIndex(port, br.Attrs().Index); err != nil {
			return fmt.Errorf("plug %s into %s on %s: %w", w.Port, w.Network.Bridge(), w.Node.Name, err)
		}
		if err := h.LinkSetUp(port); err != nil {
			return fmt.Errorf("set %s up on %s: %w", w.Port, w.Node.Name, err)
		}
	}
	return nil
}
