package podnet_test

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/golden"
)

const uid = "0b5a4a70-1c0e-4a55-9d6e-6f0c1e0b9a01"

var pod = podnet.Pod{Namespace: "tenant-a", Name: "cnf-0", UID: uid}

func ptr[T any](v T) *T { return &v }

func node() *v1.NodeNetworkConfigSpec {
	return &v1.NodeNetworkConfigSpec{Layer2s: []v1.NodeLayer2{
		{Name: "net-a", VLAN: 100, VNI: 10100, MTU: 1450, AnycastGateways: []string{"10.40.0.1/24"}},
		{Name: "net-b", VLAN: 200, VNI: 10200, MTU: 9000},
	}}
}

// full asks for everything: primary tuning, a veth and a macvlan into net-a, a vlan on the veth, a bridge over
// the macvlan, routes and sysctls.
func full() v1.PodNetworkConfig {
	return v1.PodNetworkConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "cnf", Generation: 3},
		Spec: v1.PodNetworkConfigSpec{
			Primary: &v1.PrimaryInterfaceTuning{Name: "eth0", MTU: ptr(int32(1400)), TxQueueLen: ptr(int32(2000))},
			Interfaces: []v1.PodInterface{
				{Name: "br0", Type: v1.PodInterfaceBridge, Ports: []string{"mv1"}},
				{Name: "net1", Type: v1.PodInterfaceVeth, Network: "net-a",
					Addresses: &v1.PodAddresses{Ranges: []string{"10.40.0.64/27", "fd00:40::/64"}}},
				{Name: "mv1", Type: v1.PodInterfaceMACVLAN, Network: "net-a", MTU: ptr(int32(1400))},
				{Name: "net1.7", Type: v1.PodInterfaceVLAN, Parent: "net1", VLAN: 7},
			},
			Routes: []v1.PodRoute{
				{Destination: "10.50.0.0/16", Gateway: "10.40.0.1", Interface: "net1"},
				{Destination: "default6", Gateway: "fd00:40::1", Interface: "net1"},
				{Destination: "10.60.0.0/24", Interface: "br0"},
			},
			Sysctls: []v1.PodSysctl{
				{Name: "net.ipv4.conf.net1.rp_filter", Value: "0"},
				{Name: "net.ipv4.ip_forward", Value: "1"},
			},
		},
		Status: v1.PodNetworkConfigStatus{Allocations: []v1.PodAddressAllocation{
			{Pod: "cnf-0", PodUID: uid, Interface: "net1", Address: "10.40.0.65/24"},
			{Pod: "cnf-0", PodUID: uid, Interface: "net1", Address: "fd00:40::41/64"},
			{Pod: "cnf-1", PodUID: "other", Interface: "net1", Address: "10.40.0.66/24"},
		}},
	}
}

var (
	noVLAN   = podnet.Features{VLAN: false, VLANReason: "802.1Q vlan devices: not supported by this kernel"}
	withVLAN = podnet.Features{VLAN: true}
)

// scratch is a fresh pod (lo and the CNI's eth0) on a node with net-a's bridge.
func scratch() *podnet.Observed {
	return &podnet.Observed{
		HasNetns: true,
		PodLinks: []podnet.PodLink{
			{Name: "lo", Kind: "device", Index: 1, MTU: 65536, TxQueueLen: 1000, Up: true},
			{Name: "eth0", Kind: "veth", Index: 2, MTU: 1500, TxQueueLen: 1000, Up: true, ParentIndex: 9,
				Addrs: []netip.Prefix{netip.MustParsePrefix("10.244.1.5/24")}},
		},
		Foreign: []podnet.Route{
			{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("10.244.1.1"), Dev: "eth0"},
			{Dst: netip.MustParsePrefix("10.244.1.0/24"), Dev: "eth0"},
		},
		Sysctls:   map[string]string{"net.ipv4.ip_forward": "0"},
		HostLinks: []podnet.HostLink{{Name: "l2br.100", Kind: "bridge", Index: 20, MTU: 1450, Up: true}},
	}
}

// converged is the observed state after p ran on base: what the kernel would show (a simulation of the
// actions' effect, independent of the planner's own bookkeeping).
func converged(t *testing.T, base *podnet.Observed, p *podnet.Plan) *podnet.Observed {
	t.Helper()
	o := *base
	o.PodLinks = slices.Clone(base.PodLinks)
	o.HostLinks = slices.Clone(base.HostLinks)
	o.Routes = slices.Clone(base.Routes)
	o.Sysctls = map[string]string{}
	for k, v := range base.Sysctls {
		o.Sysctls[k] = v
	}
	o.Neighbours, o.FDB = nil, nil
	o.Record = p.Record
	next := 100
	keep := map[string]bool{}
	for _, l := range p.Links {
		keep[l.Name] = true
	}
	// Links: the plan's links exist with their desired attributes; owned links not among them are gone.
	var pods []podnet.PodLink
	for _, ob := range o.PodLinks {
		u, _, ours := podnet.ParseAlias(ob.Alias)
		if (ours && u == uid) || keep[ob.Name] {
			continue
		}
		pods = append(pods, ob)
	}
	var hosts []podnet.HostLink
	for _, h := range o.HostLinks {
		if u, _, ours := podnet.ParseAlias(h.Alias); ours && u == uid {
			continue
		}
		hosts = append(hosts, h)
	}
	hostIndex := func(name string) int {
		for _, h := range hosts {
			if h.Name == name {
				return h.Index
			}
		}
		return 0
	}
	for _, l := range p.Links {
		next++
		pl := podnet.PodLink{Name: l.Name, Kind: string(l.Kind), Alias: podnet.Alias(uid, l.Name), Index: next, MTU: l.MTU,
			Master: l.Master, Up: true, Addrs: l.Addrs, MAC: l.MAC, Mode: l.Mode}
		if pl.MTU == 0 {
			pl.MTU = 1500
		}
		switch l.Kind {
		case v1.PodInterfaceVeth:
			next++
			hosts = append(hosts, podnet.HostLink{Name: l.HostName, Kind: "veth", Alias: podnet.Alias(uid, l.Name), Index: next,
				MTU: l.MTU, Master: l.Bridge, Up: true})
			pl.ParentIndex = next
			if l.Bridge != "" && l.MAC != nil {
				// The static entry of the plan that follows a new port (Plan.Settle), taken as made: converged is
				// the state once the agent has nothing left to do.
				o.FDB = append(o.FDB, podnet.FDBEntry{Port: l.HostName, Bridge: l.Bridge, MAC: l.MAC, Static: true})
			}
		case v1.PodInterfaceMACVLAN:
			pl.ParentIndex = hostIndex(l.Bridge)
		case v1.PodInterfaceVLAN:
			pl.ParentName, pl.VLAN = l.Parent, l.VLAN
		}
		pods = append(pods, pl)
	}
	o.PodLinks, o.HostLinks = pods, hosts
	if prim := p.Desired.Primary; prim != nil {
		for i := range o.PodLinks {
			if o.PodLinks[i].Name == prim.Name {
				if prim.MTU != nil {
					o.PodLinks[i].MTU = *prim.MTU
				}
				if prim.TxQueueLen != nil {
					o.PodLinks[i].TxQueueLen = *prim.TxQueueLen
				}
			}
		}
	}
	// Routes and sysctls: what the plan's actions say (read back from their text would be circular: the
	// desired ones that are not refused).
	o.Routes = nil
	for _, r := range p.Desired.Routes {
		if refused(p, r.Config, r.String()) {
			continue
		}
		if r.Dev == "" {
			r.Dev = "eth0"
		}
		o.Routes = append(o.Routes, r)
	}
	for _, s := range p.Desired.Sysctls {
		if !refused(p, s.Config, s.Name) {
			o.Sysctls[s.Name] = s.Value
		}
	}
	return &o
}

func refused(p *podnet.Plan, config, what string) bool {
	for _, pr := range p.ConfigProblems(config) {
		if strings.Contains(pr.Message, what) {
			return true
		}
	}
	return false
}

func plan(t *testing.T, in podnet.Input, o *podnet.Observed) *podnet.Plan {
	t.Helper()
	return podnet.ComputePlan(podnet.BuildDesired(in), o)
}

func actions(p *podnet.Plan) []string {
	var out []string
	for _, a := range p.Actions {
		out = append(out, a.String())
	}
	return out
}

// TestPlanGolden renders whole plans; the text is what the agent logs for each apply.
func TestPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		features podnet.Features
		configs  func() []v1.PodNetworkConfig
		observed func() *podnet.Observed
	}{
		{"scratch-no-8021q", noVLAN, func() []v1.PodNetworkConfig { return []v1.PodNetworkConfig{full()} }, scratch},
		{"scratch-8021q", withVLAN, func() []v1.PodNetworkConfig { return []v1.PodNetworkConfig{full()} }, scratch},
		{"pod-gone", noVLAN, func() []v1.PodNetworkConfig { return nil }, func() *podnet.Observed {
			o := &podnet.Observed{
				HostLinks: []podnet.HostLink{
					{Name: "l2br.100", Kind: "bridge", Index: 20, MTU: 1450, Up: true},
					{Name: podnet.HostVethName(uid, "net1"), Kind: "veth", Alias: podnet.Alias(uid, "net1"), Index: 30, Master: "l2br.100"},
				},
				Record: &podrecords.Record{UID: uid, Primary: &podrecords.Primary{Name: "eth0", MTU: ptr(1500)},
					Interfaces: []podrecords.Interface{
						{Name: "net1", Kind: "veth", HostName: podnet.HostVethName(uid, "net1"), Bridge: "l2br.100", MAC: podnet.MAC(uid, "net1").String()},
						{Name: "mv1", Kind: "macvlan", Bridge: "l2br.100", MAC: podnet.MAC(uid, "mv1").String()},
					}},
				Neighbours: []podnet.Neighbour{
					{Dev: "l2br.100", IP: netip.MustParseAddr("10.40.0.65"), MAC: podnet.MAC(uid, "net1")},
					{Dev: "l2br.100", IP: netip.MustParseAddr("fd00:40::41"), MAC: podnet.MAC(uid, "net1")},
					{Dev: "l2br.100", IP: netip.MustParseAddr("10.40.0.70"), MAC: podnet.MAC(uid, "mv1")},
				},
				FDB: []podnet.FDBEntry{
					{Port: podnet.HostVethName(uid, "net1"), Bridge: "l2br.100", MAC: podnet.MAC(uid, "net1")},
					{Port: "l2vx.100", Bridge: "l2br.100", MAC: podnet.MAC(uid, "mv1")},
				},
			}
			return o
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, podnet.Input{Pod: pod, Configs: tc.configs(), Node: node(), Features: tc.features}, tc.observed())
			golden.Assert(t, filepath.Join("testdata", tc.name+".golden"), []byte(p.String()))
		})
	}
}

// TestPlanConverges: once a plan has run, planning again changes nothing (an agent restart plans nothing).
func TestPlanConverges(t *testing.T) {
	for _, f := range []podnet.Features{noVLAN, withVLAN} {
		in := podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{full()}, Node: node(), Features: f}
		p := plan(t, in, scratch())
		if p.Empty() {
			t.Fatal("the first plan is empty")
		}
		again := plan(t, in, converged(t, scratch(), p))
		if !again.Empty() {
			t.Errorf("vlan %v: second plan not empty:\n%s\nrecord %+v -> %+v", f.VLAN, again, again.Prev, again.Record)
		}
	}
}

// TestPlanChanges: a change plans exactly its difference.
func TestPlanChanges(t *testing.T) {
	mac := func(name string) net.HardwareAddr { return podnet.MAC(uid, name) }
	for _, tc := range []struct {
		name   string
		change func(*v1.PodNetworkConfig)
		// extra adds host entries to the converged state before the change.
		extra func(*podnet.Observed)
		want  []string
	}{
		{
			name: "macvlan removed: only it goes, with its host neighbour entry",
			change: func(c *v1.PodNetworkConfig) {
				c.Spec.Interfaces = slices.DeleteFunc(c.Spec.Interfaces, func(i v1.PodInterface) bool { return i.Name == "mv1" })
				c.Spec.Interfaces[0].Ports = nil
			},
			extra: func(o *podnet.Observed) {
				o.Neighbours = []podnet.Neighbour{{Dev: "l2br.100", IP: netip.MustParseAddr("10.40.0.70"), MAC: mac("mv1")}}
			},
			want: []string{
				"delete pod macvlan mv1 (no longer desired)",
				"delete host neighbour 10.40.0.70 lladdr " + mac("mv1").String() + " dev l2br.100 (interface removed)",
			},
		},
		{
			name: "veth removed: its host end goes (with the pod end), its routes and sysctl go first",
			change: func(c *v1.PodNetworkConfig) {
				c.Spec.Interfaces = slices.DeleteFunc(c.Spec.Interfaces, func(i v1.PodInterface) bool { return i.Name == "net1" })
				c.Spec.Routes = c.Spec.Routes[2:]
				c.Spec.Sysctls = c.Spec.Sysctls[1:]
			},
			extra: func(o *podnet.Observed) {
				o.Neighbours = []podnet.Neighbour{{Dev: "l2br.100", IP: netip.MustParseAddr("10.40.0.65"), MAC: mac("net1")}}
				o.FDB = []podnet.FDBEntry{{Port: podnet.HostVethName(uid, "net1"), Bridge: "l2br.100", MAC: mac("net1")}}
			},
			want: []string{
				"delete route 10.50.0.0/16 via 10.40.0.1 dev net1 from the pod (no longer desired)",
				"delete route default (ipv6) via fd00:40::1 dev net1 metric 1024 from the pod (no longer desired)",
				"delete host veth " + podnet.HostVethName(uid, "net1") + " (host end of net1, no longer desired; its pod end goes with it)",
				"delete host neighbour 10.40.0.65 lladdr " + mac("net1").String() + " dev l2br.100 (interface removed)",
			},
		},
		{
			name:   "bridge port removed: released from the bridge",
			change: func(c *v1.PodNetworkConfig) { c.Spec.Interfaces[0].Ports = nil },
			want:   []string{"set master of pod mv1 br0 -> none"},
		},
		{
			name:   "primary tuning removed: the originals come back",
			change: func(c *v1.PodNetworkConfig) { c.Spec.Primary = nil },
			want: []string{
				"set mtu of pod eth0 1400 -> 1500 (restoring the original)",
				"set txqueuelen of pod eth0 2000 -> 1000 (restoring the original)",
			},
		},
		{
			name:   "namespace sysctl removed: restored; the interface's one needs nothing",
			change: func(c *v1.PodNetworkConfig) { c.Spec.Sysctls = nil },
			want:   []string{"set sysctl net.ipv4.ip_forward 1 -> 0 in the pod (restoring the original)"},
		},
		{
			name: "address re-allocated",
			change: func(c *v1.PodNetworkConfig) {
				c.Status.Allocations[0].Address = "10.40.0.66/24"
			},
			want: []string{
				"delete address 10.40.0.65/24 from pod net1 (no longer allocated or desired)",
				"add address 10.40.0.66/24 to pod net1",
			},
		},
		{
			name: "network MTU tuned on the interface: both veth ends",
			change: func(c *v1.PodNetworkConfig) {
				c.Spec.Interfaces[1].MTU = ptr(int32(1300))
			},
			want: []string{
				"set mtu of pod net1 1450 -> 1300",
				"set mtu of host " + podnet.HostVethName(uid, "net1") + " 1450 -> 1300",
			},
		},
		{
			name:   "the bridge lost the pod's MAC: its static entry again",
			change: func(*v1.PodNetworkConfig) {},
			extra:  func(o *podnet.Observed) { o.FDB = nil },
			want: []string{
				"add host fdb " + mac("net1").String() + " dev " + podnet.HostVethName(uid, "net1") + " master l2br.100 static",
			},
		},
		{
			name:   "macvlan mode changed: re-created, back in its bridge",
			change: func(c *v1.PodNetworkConfig) { c.Spec.Interfaces[2].MACVLANMode = v1.MACVLANPrivate },
			want: []string{
				"delete pod macvlan mv1 (re-created: mode bridge, want private)",
				"create macvlan mv1 (on l2br.100 (network net-a), mode private, mtu 1400, mac " + mac("mv1").String() + ")",
				"set master of pod mv1 none -> br0",
				"set pod mv1 up",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{full()}, Node: node(), Features: noVLAN}
			first := plan(t, in, scratch())
			o := converged(t, scratch(), first)
			if tc.extra != nil {
				tc.extra(o)
			}
			c := full()
			tc.change(&c)
			in.Configs = []v1.PodNetworkConfig{c}
			p := plan(t, in, o)
			if got := actions(p); !slices.Equal(got, tc.want) {
				t.Errorf("actions:\n  got  %s\n  want %s\nplan:\n%s", strings.Join(got, "\n       "), strings.Join(tc.want, "\n       "), p)
			}
			if again := plan(t, in, converged(t, o, p)); !again.Empty() {
				t.Errorf("not converged after the change:\n%s", again)
			}
		})
	}
}

// TestNetworkWithdrawn: a network that no longer admits the pod's namespace (its podNamespaceSelector changed, or
// the namespace's labels) takes the pod's interfaces on it away - the veth through its host end, the macvlan,
// what depends on them - reported as NetworkNotAllowed; what needs no network stays. Admitted again, they come
// back.
func TestNetworkWithdrawn(t *testing.T) {
	admitting := func(labels map[string]string) *podnet.Admission {
		return &podnet.Admission{NamespaceLabels: labels, Networks: map[string]*v1.Layer2NetworkConfiguration{
			"net-a": {ObjectMeta: metav1.ObjectMeta{Name: "net-a"}, Spec: v1.Layer2NetworkConfigurationSpec{
				PodNamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "a"}}}},
		}}
	}
	in := podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{full()}, Node: node(), Features: noVLAN,
		Admission: admitting(map[string]string{"tenant": "a"})}
	first := plan(t, in, scratch())
	if probs := first.ConfigProblems("cnf"); slices.ContainsFunc(probs, func(p podnet.Problem) bool { return p.Reason == podnet.ReasonNetworkNotAllowed }) {
		t.Fatalf("admitted, yet problems %v", probs)
	}
	o := converged(t, scratch(), first)
	host := podnet.HostVethName(uid, "net1")
	for _, tc := range []struct {
		name      string
		admission *podnet.Admission
	}{
		{"the namespace lost its label", admitting(map[string]string{"tenant": "b"})},
		{"the network is gone", &podnet.Admission{NamespaceLabels: map[string]string{"tenant": "a"}}},
		{"the network admits no namespace (selector unset)", &podnet.Admission{NamespaceLabels: map[string]string{"tenant": "a"},
			Networks: map[string]*v1.Layer2NetworkConfiguration{"net-a": {ObjectMeta: metav1.ObjectMeta{Name: "net-a"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := in
			w.Admission = tc.admission
			p := plan(t, w, o)
			got := actions(p)
			for _, want := range []string{
				"delete host veth " + host + " (host end of net1, no longer desired; its pod end goes with it)",
				"delete pod macvlan mv1 (no longer desired)",
				"delete route 10.50.0.0/16 via 10.40.0.1 dev net1 from the pod (no longer desired)",
			} {
				if !slices.Contains(got, want) {
					t.Errorf("no %q in the plan:\n%s", want, p)
				}
			}
			for _, a := range got {
				if strings.Contains(a, "eth0") || strings.Contains(a, "br0") && strings.HasPrefix(a, "delete") {
					t.Errorf("%q: what needs no network stays (primary tuning, the bridge in the pod)", a)
				}
			}
			var notAllowed []string
			for _, pr := range p.ConfigProblems("cnf") {
				if pr.Reason == podnet.ReasonNetworkNotAllowed {
					notAllowed = append(notAllowed, pr.Message)
				}
			}
			want := []string{
				`interface net1: no Layer2NetworkConfiguration "net-a" admits pods of namespace "tenant-a" (its spec.podNamespaceSelector)`,
				`interface mv1: no Layer2NetworkConfiguration "net-a" admits pods of namespace "tenant-a" (its spec.podNamespaceSelector)`,
			}
			if !slices.Equal(notAllowed, want) {
				t.Errorf("NetworkNotAllowed problems %q, want %q", notAllowed, want)
			}
			out := podnet.Outcomes(p, nil, nil)
			if len(out) != 1 || out[0].Applied || out[0].Reason != podnet.ReasonNetworkNotAllowed || !slices.Equal(out[0].Interfaces, []string{"br0"}) {
				t.Errorf("outcome %+v: want not applied, NetworkNotAllowed, br0 alone in the pod", out)
			}
			gone := converged(t, o, p)
			if again := plan(t, w, gone); !again.Empty() {
				t.Errorf("not converged after the withdrawal:\n%s", again)
			}
			back := plan(t, in, gone)
			if !slices.Contains(actions(back), "create veth net1 (host end "+host+", master l2br.100 (network net-a), mtu 1450, mac "+podnet.MAC(uid, "net1").String()+")") {
				t.Errorf("admitted again: net1 not made again:\n%s", back)
			}
		})
	}
}

// TestBridgeRemade: while the network's bridge is missing on the node (nodenet re-makes it), the interfaces on it
// stay as they are (reported), and once it is back the veth's host end is put on it again.
func TestBridgeRemade(t *testing.T) {
	in := podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{full()}, Node: node(), Features: noVLAN}
	o := converged(t, scratch(), plan(t, in, scratch()))
	host := podnet.HostVethName(uid, "net1")
	gone := *o
	gone.HostLinks = slices.DeleteFunc(slices.Clone(o.HostLinks), func(h podnet.HostLink) bool { return h.Name == "l2br.100" })
	for i := range gone.HostLinks {
		if gone.HostLinks[i].Name == host {
			gone.HostLinks[i].Master = ""
		}
	}
	p := plan(t, in, &gone)
	if len(p.Actions) != 0 {
		t.Errorf("actions while the bridge is missing:\n%s", p)
	}
	if probs := p.ConfigProblems("cnf"); !slices.ContainsFunc(probs, func(pr podnet.Problem) bool {
		return pr.Reason == podnet.ReasonApplyFailed && strings.Contains(pr.Message, "the bridge l2br.100 of network net-a is not on the node")
	}) {
		t.Errorf("problems %v: want the missing bridge named", probs)
	}
	back := gone
	back.HostLinks = append(slices.Clone(gone.HostLinks), podnet.HostLink{Name: "l2br.100", Kind: "bridge", Index: 50, MTU: 1450, Up: true})
	// The macvlan's parent was the old bridge (the kernel deletes a macvlan with its parent; here it stayed): it
	// is re-created on the new one.
	p = plan(t, in, &back)
	want := []string{
		"delete pod macvlan mv1 (re-created: it is not on l2br.100)",
		"create macvlan mv1 (on l2br.100 (network net-a), mode bridge, mtu 1400, mac " + podnet.MAC(uid, "mv1").String() + ")",
		"set master of host " + host + " none -> l2br.100",
		"set master of pod mv1 none -> br0",
		"set pod mv1 up",
	}
	if got := actions(p); !slices.Equal(got, want) {
		t.Errorf("actions once the bridge is back:\n  got  %s\n  want %s", strings.Join(got, "\n       "), strings.Join(want, "\n       "))
	}
}

// TestDesiredProblems: what a config cannot have is named in its result, and the rest stays desired.
func TestDesiredProblems(t *testing.T) {
	second := v1.PodNetworkConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "zz-second"},
		Spec: v1.PodNetworkConfigSpec{
			Primary:    &v1.PrimaryInterfaceTuning{MTU: ptr(int32(1300))},
			Interfaces: []v1.PodInterface{{Name: "net1", Type: v1.PodInterfaceVeth, Network: "net-b"}, {Name: "net9", Type: v1.PodInterfaceVeth, Network: "net-b"}},
			Routes:     []v1.PodRoute{{Destination: "10.50.0.0/16", Interface: "net9"}},
			Sysctls:    []v1.PodSysctl{{Name: "net.ipv4.ip_forward", Value: "0"}, {Name: "kernel.hostname", Value: "x"}},
		},
	}
	for _, tc := range []struct {
		name     string
		configs  []v1.PodNetworkConfig
		node     *v1.NodeNetworkConfigSpec
		features podnet.Features
		links    []string
		problems map[string][]string // config -> "Reason: message" prefixes
	}{
		{
			name: "no 802.1Q: the vlan is NotSupported, the rest desired", configs: []v1.PodNetworkConfig{full()}, node: node(), features: noVLAN,
			links:    []string{"net1", "mv1", "br0"},
			problems: map[string][]string{"cnf": {"NotSupported: interface net1.7: 802.1Q vlan devices"}},
		},
		{
			name: "with 802.1Q: created after its parent, the bridge after its port", configs: []v1.PodNetworkConfig{full()}, node: node(), features: withVLAN,
			links: []string{"net1", "mv1", "net1.7", "br0"},
		},
		{
			name:    "no node config: veth and macvlan NetworkNotOnNode, the vlan on the veth not applied",
			configs: []v1.PodNetworkConfig{full()}, features: withVLAN, links: []string{"br0"},
			problems: map[string][]string{"cnf": {
				"NetworkNotOnNode: interface net1: network \"net-a\"", "NetworkNotOnNode: interface mv1",
				"Invalid: interface net1.7: its parent net1 is not applied", "Invalid: bridge br0: port mv1 is not applied",
				"Invalid: routes[0] 10.50.0.0/16 via 10.40.0.1 dev net1: interface net1 is not applied",
				"Invalid: routes[1]", "Invalid: sysctl net.ipv4.conf.net1.rp_filter: interface net1 is not applied"}},
		},
		{
			name: "a second config: what the first holds is a Conflict, the rest is its own", configs: []v1.PodNetworkConfig{second, full()},
			node: node(), features: noVLAN, links: []string{"net1", "mv1", "net9", "br0"},
			problems: map[string][]string{
				"cnf": {"NotSupported: interface net1.7"},
				"zz-second": {
					"Conflict: primary interface tuning: PodNetworkConfig cnf already tunes eth0",
					"Conflict: interface net1: PodNetworkConfig cnf already has an interface of that name",
					"Conflict: routes[0] 10.50.0.0/16 dev net9: PodNetworkConfig cnf already has a route to 10.50.0.0/16",
					"Conflict: sysctl net.ipv4.ip_forward: PodNetworkConfig cnf already sets it",
					"Invalid: sysctl kernel.hostname: not in the allow-list",
				},
			},
		},
		{
			name: "no allocation yet: NoAddress, the interface is made without", node: node(), features: noVLAN,
			configs: func() []v1.PodNetworkConfig {
				c := full()
				c.Status.Allocations = c.Status.Allocations[1:]
				return []v1.PodNetworkConfig{c}
			}(),
			links: []string{"net1", "mv1", "br0"},
			problems: map[string][]string{"cnf": {"NoAddress: interface net1: no IPv4 address allocated yet",
				"NotSupported: interface net1.7"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := podnet.BuildDesired(podnet.Input{Pod: pod, Configs: tc.configs, Node: tc.node, Features: tc.features})
			var links []string
			for _, l := range d.Links {
				links = append(links, l.Name)
			}
			if !slices.Equal(links, tc.links) {
				t.Errorf("links %v, want %v", links, tc.links)
			}
			for _, c := range d.Configs {
				var got []string
				for _, p := range c.Problems {
					got = append(got, p.String())
				}
				want := tc.problems[c.Name]
				ok := len(got) == len(want)
				for i := 0; ok && i < len(want); i++ {
					ok = strings.HasPrefix(got[i], want[i])
				}
				if !ok {
					t.Errorf("config %s problems:\n  got  %s\n  want %s", c.Name, strings.Join(got, "\n       "), strings.Join(want, "\n       "))
				}
			}
		})
	}
}

// TestPlanOwnership: names, routes and host names held by objects the agent does not own are reported, never
// touched, and the rest is applied; an unmarked veth end whose peer is the pod's host end is adopted.
func TestPlanOwnership(t *testing.T) {
	host := podnet.HostVethName(uid, "net1")
	for _, tc := range []struct {
		name    string
		observe func(*podnet.Observed)
		want    []string // action prefixes that must be there
		notWant []string // action prefixes that must not
		problem string
	}{
		{
			name: "a foreign mv1 in the pod (e.g. Multus's)",
			observe: func(o *podnet.Observed) {
				o.PodLinks = append(o.PodLinks, podnet.PodLink{Name: "mv1", Kind: "macvlan", Index: 3, MTU: 1500})
			},
			want:    []string{"create veth net1", "create bridge br0"},
			notWant: []string{"create macvlan mv1", "set master of pod mv1", "delete pod macvlan mv1"},
			problem: "Conflict: interface mv1: the pod already has a macvlan mv1 the agent did not make",
		},
		{
			name: "the CNI's route to 10.50.0.0/16",
			observe: func(o *podnet.Observed) {
				o.Foreign = append(o.Foreign, podnet.Route{Dst: netip.MustParsePrefix("10.50.0.0/16"), Dev: "eth0"})
			},
			want:    []string{"create veth net1", "add route 10.60.0.0/24 dev br0"},
			notWant: []string{"add route 10.50.0.0/16", "replace route 10.50.0.0/16"},
			problem: "Conflict: route 10.50.0.0/16 via 10.40.0.1 dev net1: the pod has a route 10.50.0.0/16 dev eth0 the agent did not add",
		},
		{
			name: "a foreign host link holding the veth's host name",
			observe: func(o *podnet.Observed) {
				o.HostLinks = append(o.HostLinks, podnet.HostLink{Name: host, Kind: "dummy", Index: 40})
			},
			want:    []string{"create macvlan mv1"},
			notWant: []string{"create veth net1", "delete host"},
			problem: "Conflict: interface net1: the host name " + host + " is held by a link the agent does not own",
		},
		{
			name: "an unmarked pod end whose peer is the pod's host end: adopted",
			observe: func(o *podnet.Observed) {
				o.HostLinks = append(o.HostLinks, podnet.HostLink{Name: host, Kind: "veth", Alias: podnet.Alias(uid, "net1"), Index: 41,
					MTU: 1450, Master: "l2br.100", Up: true})
				o.PodLinks = append(o.PodLinks, podnet.PodLink{Name: "net1", Kind: "veth", Index: 3, MTU: 1450, ParentIndex: 41,
					MAC: podnet.MAC(uid, "net1")})
			},
			want:    []string{`set alias of pod net1 to "` + podnet.Alias(uid, "net1") + `"`, "add address 10.40.0.65/24 to pod net1", "set pod net1 up"},
			notWant: []string{"create veth net1", "delete"},
		},
		{
			name: "the host end without its pod end: the pair is made again",
			observe: func(o *podnet.Observed) {
				o.HostLinks = append(o.HostLinks, podnet.HostLink{Name: host, Kind: "veth", Alias: podnet.Alias(uid, "net1"), Index: 41})
			},
			want: []string{"delete host veth " + host + " (host end of net1, re-created with it)", "create veth net1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := scratch()
			tc.observe(o)
			p := plan(t, podnet.Input{Pod: pod, Configs: []v1.PodNetworkConfig{full()}, Node: node(), Features: noVLAN}, o)
			got := actions(p)
			has := func(prefix string) bool {
				return slices.ContainsFunc(got, func(a string) bool { return strings.HasPrefix(a, prefix) })
			}
			for _, w := range tc.want {
				if !has(w) {
					t.Errorf("no action %q in\n%s", w, p)
				}
			}
			for _, w := range tc.notWant {
				if has(w) {
					t.Errorf("action %q in\n%s", w, p)
				}
			}
			if tc.problem != "" {
				probs := p.ConfigProblems("cnf")
				if !slices.ContainsFunc(probs, func(pr podnet.Problem) bool { return strings.HasPrefix(pr.String(), tc.problem) }) {
					t.Errorf("problems %v, want %q", probs, tc.problem)
				}
			}
		})
	}
}

// TestNames: the host names fit the kernel and differ per pod and interface; MACs are unicast and local.
func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for i := range 200 {
		for _, ifname := range []string{"net1", "net2"} {
			u := fmt.Sprintf("uid-%d", i)
			n := podnet.HostVethName(u, ifname)
			if len(n) > 15 || seen[n] {
				t.Fatalf("host name %q of %s/%s: too long or repeated", n, u, ifname)
			}
			seen[n] = true
			m := podnet.MAC(u, ifname)
			if m[0]&1 != 0 || m[0]&2 == 0 {
				t.Fatalf("MAC %s: not a locally administered unicast address", m)
			}
			if got, gotIf, ok := podnet.ParseAlias(podnet.Alias(u, ifname)); !ok || got != u || gotIf != ifname {
				t.Fatalf("alias round trip %s/%s: %s %s %v", u, ifname, got, gotIf, ok)
			}
		}
	}
	for _, a := range []string{"", "network-operator:l2bridge:x", "netop-pod:", "netop-pod:uid", "netop-pod:/net1"} {
		if _, _, ok := podnet.ParseAlias(a); ok {
			t.Errorf("ParseAlias(%q) accepted", a)
		}
	}
}
