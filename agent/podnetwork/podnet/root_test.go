package podnet_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// podLab is a "node" namespace with the layer-2 network's bridge l2br.100 (gateway 10.40.0.1) and a host "peer"
// on it, and a "pod" namespace with a primary interface eth0 (the CNI's stand-in, a veth to the node).
type podLab struct {
	lab             *lab.Lab
	node, pod, peer *lab.Netns
	store           *podrecords.Store
	// qlen is eth0's original transmit queue length.
	qlen int
}

func newPodLab(t *testing.T) *podLab {
	t.Helper()
	l := lab.New(t)
	l.MustBuild(context.Background(), lab.Topology{
		Namespaces: []lab.Namespace{{Name: "node"}, {Name: "pod"}, {Name: "peer"}},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "pod", Name: "eth0", Addrs: []string{"10.244.1.5/24"}, MTU: 1500},
				B: lab.Port{NS: "node", Name: "cnih", Addrs: []string{"10.244.1.1/24"}}},
			{A: lab.Port{NS: "peer", Name: "eth0", Addrs: []string{"10.40.0.10/24", "fd00:40::10/64"}, MTU: 1450},
				B: lab.Port{NS: "node", Name: "peerh", MTU: 1450}},
		},
		Devices: []lab.Device{{Kind: lab.KindBridge, Port: lab.Port{NS: "node", Name: "l2br.100", MTU: 1450,
			Addrs: []string{"10.40.0.1/24", "fd00:40::1/64"}}}},
	})
	pl := &podLab{lab: l, node: l.NS("node"), pod: l.NS("pod"), peer: l.NS("peer"),
		store: podrecords.New(filepath.Join(t.TempDir(), "pods"))}
	h := pl.node.Handle()
	br, err := h.LinkByName("l2br.100")
	must(t, err)
	peer, err := h.LinkByName("peerh")
	must(t, err)
	must(t, h.LinkSetMaster(peer, br))
	return pl
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (pl *podLab) applier(t *testing.T) *podnet.Applier {
	t.Helper()
	a, err := podnet.New(pl.node.Handle(), podnet.Options{Store: pl.store, HostNS: pl.node.NsHandle()})
	must(t, err)
	return a
}

// apply plans and applies in, failing the test on an error; it returns the plan.
func (pl *podLab) apply(t *testing.T, a *podnet.Applier, in podnet.Input, ns netns.NsHandle) *podnet.Plan {
	t.Helper()
	ctx := context.Background()
	p, err := a.Plan(ctx, in, ns)
	must(t, err)
	t.Logf("plan:\n%s", p)
	if _, err := a.Apply(ctx, p, ns); err != nil {
		t.Fatalf("apply: %v", err)
	}
	return p
}

// config is full() with addresses for br0 too (so traffic through the macvlan shows on the host).
func config() v1.PodNetworkConfig {
	c := full()
	c.Status.Allocations = append(c.Status.Allocations, v1.PodAddressAllocation{Pod: "cnf-0", PodUID: uid, Interface: "br0", Address: "10.40.0.70/24"})
	c.Spec.Interfaces[0].Addresses = &v1.PodAddresses{Ranges: []string{"10.40.0.64/27"}}
	return c
}

// TestApplyInNamespaces applies a configuration with every interface kind into a pod's namespace from the
// node's, checks every object inside the pod and on the host, pings the network through the veth and the
// macvlan, removes one interface, restarts, and deletes everything, checking the host object by object.
func TestApplyInNamespaces(t *testing.T) {
	pl := newPodLab(t)
	ctx := context.Background()
	a := pl.applier(t)
	f, err := a.Features(ctx)
	must(t, err)
	in := podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{config()}, Node: node()}
	eth0, err := pl.pod.Link("eth0")
	must(t, err)
	pl.qlen = eth0.Attrs().TxQLen

	start := time.Now()
	p := pl.apply(t, a, in, pl.pod.NsHandle())
	t.Logf("apply of %d actions: %v", len(p.Actions), time.Since(start))
	outcomes := podnet.Outcomes(p, &podnet.Result{Done: p.Actions}, nil)
	if len(outcomes) != 1 {
		t.Fatalf("outcomes %+v", outcomes)
	}
	o := outcomes[0]
	wantIfs := []string{"br0", "net1", "mv1"}
	if f.VLAN {
		wantIfs = append(wantIfs, "net1.7")
	}
	if !slices.Equal(o.Interfaces, wantIfs) {
		t.Errorf("outcome interfaces %v, want %v", o.Interfaces, wantIfs)
	}

	t.Run("pod", func(t *testing.T) { checkPod(t, pl, true) })
	t.Run("host", func(t *testing.T) { checkHost(t, pl) })
	t.Run("ping", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			what string
		}{
			{[]string{"-I", "net1", "10.40.0.10"}, "the peer through the veth"},
			{[]string{"-I", "net1", "10.40.0.1"}, "the gateway through the veth"},
			{[]string{"-6", "-I", "net1", "fd00:40::10"}, "the peer over IPv6"},
			// A macvlan on the bridge reaches the bridge's other hosts, not the bridge's own addresses (frames
			// a macvlan sends leave through the bridge device's transmit path).
			{[]string{"-I", "br0", "10.40.0.10"}, "the peer through the pod's bridge and the macvlan"},
		} {
			out, err := pl.pod.Output(ctx, "ping", append([]string{"-n", "-q", "-c", "2", "-i", "0.05", "-W", "1"}, tc.args...)...)
			if err != nil {
				t.Errorf("ping %s: %v\n%s", tc.what, err, out)
			}
		}
		// The node's bridge now knows the veth's MAC: neighbours for its addresses. The macvlan's entry is
		// what the node would learn from routed traffic to it (EVPN, the router's bpf_redirect_neigh).
		br, err := pl.node.Ifindex("l2br.100")
		must(t, err)
		must(t, pl.node.Handle().NeighAdd(&netlink.Neigh{LinkIndex: br, Family: unix.AF_INET, State: netlink.NUD_REACHABLE,
			IP: net.ParseIP("10.40.0.70"), HardwareAddr: podnet.MAC(uid, "mv1")}))
		checkNeighbours(t, pl, []string{"net1", "mv1"}, true)
	})
	t.Run("vlan", func(t *testing.T) {
		if !f.VLAN {
			if o.Applied || o.Reason != podnet.ReasonNotSupported || !strings.Contains(o.Message, "net1.7") {
				t.Errorf("outcome %+v: want NotSupported naming net1.7", o)
			}
			testreq.KernelLacks(t, "802.1Q vlan devices (the vlan net1.7 is reported NotSupported, the rest applied)",
				errors.New(f.VLANReason))
		}
		l, err := pl.pod.Link("net1.7")
		must(t, err)
		if v, ok := l.(*netlink.Vlan); !ok || v.VlanId != 7 {
			t.Errorf("net1.7: %T %+v", l, l.Attrs())
		}
	})
	if f.VLAN && !o.Applied {
		t.Errorf("outcome %+v: want applied", o)
	}

	// The plan that made the veth asks for the next one (Settle), which turns the bridge's entry of the veth's MAC
	// (learnt from the pings) static; after it a restarted agent plans nothing.
	t.Run("settle, then a restart plans nothing", func(t *testing.T) {
		if !p.Settle {
			t.Errorf("the plan that made the veth does not settle")
		}
		host := podnet.HostVethName(uid, "net1")
		settle := pl.apply(t, pl.applier(t), in, pl.pod.NsHandle())
		want := []string{"add host fdb " + podnet.MAC(uid, "net1").String() + " dev " + host + " master l2br.100 static"}
		if got := actions(settle); !slices.Equal(got, want) {
			t.Fatalf("settle plan %q, want %q", got, want)
		}
		port, err := pl.node.Ifindex(host)
		must(t, err)
		fdb, err := pl.node.Handle().NeighList(port, unix.AF_BRIDGE)
		must(t, err)
		if !slices.ContainsFunc(fdb, func(n netlink.Neigh) bool {
			return n.HardwareAddr.String() == podnet.MAC(uid, "net1").String() && n.State&netlink.NUD_NOARP != 0
		}) {
			t.Errorf("no static fdb entry of net1's MAC on %s: %+v", host, fdb)
		}
		p, err := pl.applier(t).Plan(ctx, in, pl.pod.NsHandle())
		must(t, err)
		if !p.Empty() || p.Settle {
			t.Errorf("a new applier plans (settle %v):\n%s", p.Settle, p)
		}
	})

	t.Run("interface removed: only it goes", func(t *testing.T) {
		net1, err := pl.pod.Ifindex("net1")
		must(t, err)
		c := config()
		c.Spec.Interfaces = slices.DeleteFunc(c.Spec.Interfaces, func(i v1.PodInterface) bool { return i.Name == "mv1" })
		c.Spec.Interfaces[0].Ports = nil
		in := in
		in.Configs = []v1.PodNetworkConfig{c}
		p := pl.apply(t, a, in, pl.pod.NsHandle())
		var dels []string
		for _, act := range p.Actions {
			if strings.HasPrefix(act.String(), "delete") {
				dels = append(dels, act.String())
			}
		}
		if len(dels) == 0 || !strings.HasPrefix(dels[0], "delete pod macvlan mv1") {
			t.Errorf("deletions %v: want mv1 (and its neighbour entries)", dels)
		}
		if _, err := pl.pod.Link("mv1"); err == nil {
			t.Error("mv1 still in the pod")
		}
		if idx, err := pl.pod.Ifindex("net1"); err != nil || idx != net1 {
			t.Errorf("net1: ifindex %d (%v), want the same %d", idx, err, net1)
		}
		checkNeighbours(t, pl, []string{"mv1"}, false)
		if again, err := a.Plan(ctx, in, pl.pod.NsHandle()); err != nil || !again.Empty() {
			t.Errorf("after the change: %v\n%s", err, again)
		}
	})

	t.Run("deleted: the host is clean", func(t *testing.T) {
		in := in
		in.Configs = nil
		pl.apply(t, a, in, pl.pod.NsHandle())
		checkClean(t, pl)
		checkPod(t, pl, false)
	})
}

// checkPod checks the pod's objects (present: as applied; else: gone, the primary and sysctls restored).
func checkPod(t *testing.T, pl *podLab, present bool) {
	t.Helper()
	eth0, err := pl.pod.Link("eth0")
	must(t, err)
	mtu, qlen := 1500, pl.qlen
	if present {
		mtu, qlen = 1400, 2000
	}
	if eth0.Attrs().MTU != mtu || eth0.Attrs().TxQLen != qlen {
		t.Errorf("eth0: mtu %d txqueuelen %d, want %d %d", eth0.Attrs().MTU, eth0.Attrs().TxQLen, mtu, qlen)
	}
	fwd, err := pl.pod.ReadSysctl("net.ipv4.ip_forward")
	must(t, err)
	if want := map[bool]string{true: "1", false: "0"}[present]; fwd != want {
		t.Errorf("net.ipv4.ip_forward = %s, want %s", fwd, want)
	}
	routes, err := pl.pod.Handle().RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Protocol: netlink.RouteProtocol(podnet.DefaultRouteProtocol)},
		netlink.RT_FILTER_PROTOCOL)
	must(t, err)
	if !present {
		if len(routes) != 0 {
			t.Errorf("routes of the agent left in the pod: %v", routes)
		}
		links, err := pl.pod.Handle().LinkList()
		must(t, err)
		for _, l := range links {
			if strings.HasPrefix(l.Attrs().Alias, podnet.AliasPrefix) {
				t.Errorf("link %s (%s) left in the pod", l.Attrs().Name, l.Attrs().Alias)
			}
		}
		return
	}
	if len(routes) != 3 {
		t.Errorf("routes of the agent in the pod: %v, want 3", routes)
	}
	for _, tc := range []struct {
		name, kind, master string
		mtu                int
		addrs              []string
	}{
		{"net1", "veth", "", 1450, []string{"10.40.0.65/24", "fd00:40::41/64"}},
		{"mv1", "macvlan", "br0", 1400, nil},
		{"br0", "bridge", "", 1400, []string{"10.40.0.70/24"}},
	} {
		l, err := pl.pod.Link(tc.name)
		if err != nil {
			t.Error(err)
			continue
		}
		at := l.Attrs()
		var master string
		if at.MasterIndex != 0 {
			if m, err := pl.pod.Handle().LinkByIndex(at.MasterIndex); err == nil {
				master = m.Attrs().Name
			}
		}
		if l.Type() != tc.kind || at.MTU != tc.mtu || master != tc.master || at.Flags&net.FlagUp == 0 ||
			at.Alias != podnet.Alias(uid, tc.name) {
			t.Errorf("%s: %s mtu %d master %q flags %v alias %q; want %s mtu %d master %q up, alias %q", tc.name, l.Type(), at.MTU,
				master, at.Flags, at.Alias, tc.kind, tc.mtu, tc.master, podnet.Alias(uid, tc.name))
		}
		if tc.kind != "bridge" && !bytes.Equal(at.HardwareAddr, podnet.MAC(uid, tc.name)) {
			t.Errorf("%s: mac %s, want %s", tc.name, at.HardwareAddr, podnet.MAC(uid, tc.name))
		}
		addrs, err := pl.pod.Handle().AddrList(l, netlink.FAMILY_ALL)
		must(t, err)
		var got []string
		for _, ad := range addrs {
			if ad.Scope == unix.RT_SCOPE_UNIVERSE {
				got = append(got, ad.IPNet.String())
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.addrs) {
			t.Errorf("%s: addresses %v, want %v", tc.name, got, tc.addrs)
		}
	}
	if v, err := pl.pod.ReadSysctl("net.ipv4.conf.net1.rp_filter"); err != nil || v != "0" {
		t.Errorf("net.ipv4.conf.net1.rp_filter = %q (%v), want 0", v, err)
	}
}

// checkHost checks the veth's host end: marked, a port of the network's bridge, its MTU, up.
func checkHost(t *testing.T, pl *podLab) {
	t.Helper()
	name := podnet.HostVethName(uid, "net1")
	l, err := pl.node.Link(name)
	must(t, err)
	at := l.Attrs()
	br, err := pl.node.Ifindex("l2br.100")
	must(t, err)
	if at.Alias != podnet.Alias(uid, "net1") || at.MasterIndex != br || at.MTU != 1450 || at.Flags&net.FlagUp == 0 {
		t.Errorf("host end %s: alias %q master %d mtu %d flags %v; want alias %q, master l2br.100 (%d), mtu 1450, up",
			name, at.Alias, at.MasterIndex, at.MTU, at.Flags, podnet.Alias(uid, "net1"), br)
	}
}

// checkNeighbours checks the node bridge's neighbour entries with the MACs of the pod's interfaces ifs.
func checkNeighbours(t *testing.T, pl *podLab, ifs []string, want bool) {
	t.Helper()
	br, err := pl.node.Ifindex("l2br.100")
	must(t, err)
	for _, ifname := range ifs {
		mac := podnet.MAC(uid, ifname)
		var found []string
		for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
			ns, err := pl.node.Handle().NeighList(br, fam)
			must(t, err)
			for _, n := range ns {
				if bytes.Equal(n.HardwareAddr, mac) {
					found = append(found, n.IP.String())
				}
			}
		}
		if want && len(found) == 0 {
			t.Errorf("no neighbour entry for %s (%s) on l2br.100", ifname, mac)
		}
		if !want && len(found) > 0 {
			t.Errorf("neighbour entries %v for %s (%s) left on l2br.100", found, ifname, mac)
		}
	}
}

// checkClean checks the node object by object: no link of the pod, no neighbour or FDB entry with its MACs or
// for its addresses, no route or rule of the agent's protocol, and no record.
func checkClean(t *testing.T, pl *podLab) {
	t.Helper()
	h := pl.node.Handle()
	links, err := h.LinkList()
	must(t, err)
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Alias, podnet.AliasPrefix) {
			t.Errorf("host link %s (%s) left", l.Attrs().Name, l.Attrs().Alias)
		}
	}
	macs := map[string]bool{}
	for _, ifname := range []string{"net1", "mv1", "br0", "net1.7"} {
		macs[podnet.MAC(uid, ifname).String()] = true
	}
	addrs := map[string]bool{"10.40.0.65": true, "fd00:40::41": true, "10.40.0.70": true}
	neigh, err := h.NeighList(0, unix.AF_INET)
	must(t, err)
	neigh6, err := h.NeighList(0, unix.AF_INET6)
	must(t, err)
	for _, n := range append(neigh, neigh6...) {
		if macs[n.HardwareAddr.String()] || (addrs[n.IP.String()] && n.State&(netlink.NUD_FAILED|netlink.NUD_INCOMPLETE) == 0) {
			t.Errorf("neighbour %s lladdr %s (state %#x) left on ifindex %d", n.IP, n.HardwareAddr, n.State, n.LinkIndex)
		}
	}
	fdb, err := h.NeighListExecute(netlink.Ndmsg{Family: unix.AF_BRIDGE})
	must(t, err)
	for _, f := range fdb {
		if macs[f.HardwareAddr.String()] {
			t.Errorf("fdb entry %s on ifindex %d left", f.HardwareAddr, f.LinkIndex)
		}
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC, Protocol: netlink.RouteProtocol(podnet.DefaultRouteProtocol)},
		netlink.RT_FILTER_TABLE|netlink.RT_FILTER_PROTOCOL)
	must(t, err)
	if len(routes) > 0 {
		t.Errorf("routes of the agent's protocol on the host: %v", routes)
	}
	rules, err := h.RuleList(netlink.FAMILY_ALL)
	must(t, err)
	for _, r := range rules {
		if r.Protocol == podnet.DefaultRouteProtocol {
			t.Errorf("rule of the agent's protocol on the host: %v", r)
		}
	}
	if uids, err := pl.store.UIDs(); err != nil || len(uids) > 0 {
		t.Errorf("records left: %v %v", uids, err)
	}
}

// TestPodGone: when the pod's namespace is gone, the host side is cleaned from the record alone: the veth's
// host end (if the kernel has not removed it yet), the neighbour entries for the pod's MACs, the record.
func TestPodGone(t *testing.T) {
	pl := newPodLab(t)
	ctx := context.Background()
	a := pl.applier(t)
	name := lab.NamePrefix + pl.lab.ID() + "-gone"
	ns, err := namedns.Create(name)
	must(t, err)
	deleted := false
	t.Cleanup(func() {
		ns.Close()
		if !deleted {
			if err := namedns.Delete(name); err != nil {
				t.Errorf("delete namespace %s: %v", name, err)
			}
		}
	})
	// The pod namespace's primary interface: a veth to the node, as the CNI makes it.
	must(t, pl.node.Handle().LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "goneh"}, PeerName: "eth0",
		PeerNamespace: netlink.NsFd(ns)}))
	in := podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{config()}, Node: node()}
	pl.apply(t, a, in, ns)
	gh, err := netlink.NewHandleAt(ns)
	must(t, err)
	for _, n := range []string{"net1", "lo"} {
		l, err := gh.LinkByName(n)
		must(t, err)
		must(t, gh.LinkSetUp(l))
	}
	gh.Close()
	// Traffic from the pod leaves a neighbour entry on the node's bridge.
	br, err := pl.node.Link("l2br.100")
	must(t, err)
	must(t, pl.node.Handle().NeighAdd(&netlink.Neigh{LinkIndex: br.Attrs().Index, Family: unix.AF_INET, State: netlink.NUD_REACHABLE,
		IP: net.ParseIP("10.40.0.65"), HardwareAddr: podnet.MAC(uid, "net1")}))

	// The pod ends: its namespace goes (the kernel removes the veth pair with it, asynchronously).
	must(t, ns.Close())
	must(t, namedns.Delete(name))
	deleted = true
	in.Configs = nil
	p, err := a.Plan(ctx, in, 0)
	must(t, err)
	t.Logf("plan without the pod's namespace:\n%s", p)
	if !slices.ContainsFunc(p.Actions, func(act podnet.Action) bool {
		return strings.HasPrefix(act.String(), "delete host neighbour 10.40.0.65")
	}) {
		t.Errorf("the plan does not delete the pod's neighbour entry:\n%s", p)
	}
	if _, err := a.Apply(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	// The kernel tears the namespace down asynchronously: the macvlan (and the unicast address it put on the
	// bridge's ports) goes with it.
	waittest.Must(t, 20*time.Millisecond, 10*time.Second, "the pod's namespace torn down", waittest.Check(func() (bool, error) {
		fdb, err := pl.node.Handle().NeighListExecute(netlink.Ndmsg{Family: unix.AF_BRIDGE})
		if err != nil {
			return false, waittest.Permanent(err)
		}
		for _, f := range fdb {
			if bytes.Equal(f.HardwareAddr, podnet.MAC(uid, "mv1")) {
				return false, errors.New("the macvlan's address is still on the bridge's ports")
			}
		}
		return true, nil
	}))
	checkClean(t, pl)
	if uids, err := a.Pods(ctx); err != nil || len(uids) > 0 {
		t.Errorf("Pods() = %v, %v: want none", uids, err)
	}
}

// TestRefusesHostNamespace: the host's own namespace is never configured as a pod's (a hostNetwork pod).
func TestRefusesHostNamespace(t *testing.T) {
	pl := newPodLab(t)
	a := pl.applier(t)
	in := podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{config()}, Node: node()}
	if _, err := a.Plan(context.Background(), in, pl.node.NsHandle()); !errors.Is(err, podnet.ErrHostNetns) {
		t.Fatalf("Plan in the host's namespace: %v, want ErrHostNetns", err)
	}
	p, err := a.Plan(context.Background(), in, pl.pod.NsHandle())
	must(t, err)
	if _, err := a.Apply(context.Background(), p, pl.node.NsHandle()); !errors.Is(err, podnet.ErrHostNetns) {
		t.Fatalf("Apply in the host's namespace: %v, want ErrHostNetns", err)
	}
}
