package nodenet_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestWatchChanges: with WatchChanges, a plan of a quiet node reuses the last read, and every kind of change
// Observe would see makes the next plan read the node again (and find the drift); changes Observe does not read
// (another protocol's routes, ARP entries) keep the read.
func TestWatchChanges(t *testing.T) {
	const bridge, vxlan = "l2br.100", "l2vx.100"
	cases := []struct {
		name string
		// spec is twoVRFsOneL2 unless set.
		spec   func() *v1alpha1.NodeNetworkConfigSpec
		change func(t *testing.T, ns *lab.Netns) error
		// reread: the next plan must read the node; drift: and it finds something to repair.
		reread, drift bool
	}{
		{name: "bridge set down", reread: true, drift: true, change: func(t *testing.T, ns *lab.Netns) error {
			return ns.Handle().LinkSetDown(link(t, ns, bridge))
		}},
		{name: "vxlan mtu changed", reread: true, drift: true, change: func(t *testing.T, ns *lab.Netns) error {
			return ns.Handle().LinkSetMTU(link(t, ns, vxlan), 1400)
		}},
		{name: "gateway address removed", reread: true, drift: true, change: func(t *testing.T, ns *lab.Netns) error {
			return ns.Handle().AddrDel(link(t, ns, bridge), mustAddr(t, "10.100.0.1/24"))
		}},
		{name: "bridge port learning on", reread: true, drift: true, change: func(t *testing.T, ns *lab.Netns) error {
			return ns.Handle().LinkSetLearning(link(t, ns, vxlan), true)
		}},
		{name: "own rule deleted", reread: true, drift: true, change: func(t *testing.T, ns *lab.Netns) error {
			rules, err := ns.Handle().RuleList(netlink.FAMILY_ALL)
			if err != nil {
				return err
			}
			for _, r := range rules {
				if r.Protocol == nodenet.DefaultRouteProtocol {
					return ns.Handle().RuleDel(&r)
				}
			}
			t.Fatal("the converged node has no rule of nodenet's protocol")
			return nil
		}},
		{name: "segmentation offload off", reread: true, drift: false, change: func(t *testing.T, ns *lab.Netns) error {
			// Observed (the plan reads it) but not planned for a bridge without segmentation settings.
			return ns.SetOffloads(t.Context(), bridge, map[string]bool{"tso": false})
		}},
		{name: "foreign link created", reread: true, drift: false, change: func(t *testing.T, ns *lab.Netns) error {
			return ns.Handle().LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "foreign0"}})
		}},
		{name: "flood entry deleted", reread: true, drift: true, spec: func() *v1alpha1.NodeNetworkConfigSpec {
			return staticL2("192.0.2.2")
		}, change: func(t *testing.T, ns *lab.Netns) error {
			vx := link(t, ns, "l2vx.300")
			return ns.Handle().NeighDel(&netlink.Neigh{LinkIndex: vx.Attrs().Index, Family: unix.AF_BRIDGE, Flags: netlink.NTF_SELF,
				HardwareAddr: make(net.HardwareAddr, 6), IP: net.ParseIP("192.0.2.2")})
		}},
		{name: "route of another protocol", reread: false, change: func(t *testing.T, ns *lab.Netns) error {
			_, dst, _ := net.ParseCIDR("198.51.100.0/24")
			return ns.Handle().RouteAdd(&netlink.Route{Dst: dst, Table: 100, Type: unix.RTN_UNREACHABLE, Protocol: unix.RTPROT_BGP})
		}},
		{name: "ARP entry", reread: false, change: func(t *testing.T, ns *lab.Netns) error {
			return ns.AddNeighbour(bridge, "10.100.0.7", net.HardwareAddr{2, 0, 0, 0, 0, 7})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns, m, _ := watched(t)
			spec := twoVRFsOneL2()
			if tc.spec != nil {
				spec = tc.spec()
			}
			converge(t, m, spec)
			waitQuiet(t, m, spec)
			if err := tc.change(t, ns); err != nil {
				t.Fatalf("change: %v", err)
			}
			p := mustPlan(t, m, spec)
			if p.ObservedReused == tc.reread {
				t.Fatalf("after the change: reused %v, want %v", p.ObservedReused, !tc.reread)
			}
			if p.Empty() == tc.drift {
				t.Fatalf("after the change: plan empty %v, want %v:\n%s", p.Empty(), !tc.drift, p)
			}
			if tc.drift {
				converge(t, m, spec)
			}
		})
	}
}

// TestWatchStopped: after stop, every plan reads the node.
func TestWatchStopped(t *testing.T) {
	_, m, stop := watched(t)
	spec := twoVRFsOneL2()
	converge(t, m, spec)
	waitQuiet(t, m, spec)
	stop()
	for range 2 {
		if p := mustPlan(t, m, spec); p.ObservedReused || p.Observed.Links == 0 {
			t.Fatalf("without the watch: reused %v, %d links read", p.ObservedReused, p.Observed.Links)
		}
	}
}

// waitQuiet waits until a plan reuses the last read: the kernel notifies the last changes of an apply
// (operational state, IPv6 duplicate address detection) up to a few seconds later. The plans are empty.
func waitQuiet(t *testing.T, m *nodenet.Manager, spec *v1alpha1.NodeNetworkConfigSpec) {
	t.Helper()
	err := wait.Poll(t.Context(), 100*time.Millisecond, 10*time.Second, "a plan of the quiet node reusing the last read",
		func(ctx context.Context) (bool, string, error) {
			p, err := m.Plan(ctx, spec)
			if err != nil {
				return false, "", err
			}
			if !p.Empty() {
				return false, "", fmt.Errorf("the converged node has a plan:\n%s", p)
			}
			return p.ObservedReused, "the node was read again", nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// watched is a manager of a fresh namespace watching its changes; stop ends the watch (again at cleanup).
func watched(t *testing.T) (*lab.Netns, *nodenet.Manager, func()) {
	t.Helper()
	ns := nsWith(t, lab.Topology{})
	m := newManager(t, ns, withNetNS(tableOnly(testSettings()), ns))
	stop, err := m.WatchChanges()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop) // a second stop does nothing
	return ns, m, stop
}

func withNetNS(s nodenet.Settings, ns *lab.Netns) nodenet.Settings {
	s.NetNS = ns.NsHandle()
	return s
}

func mustAddr(t *testing.T, cidr string) *netlink.Addr {
	t.Helper()
	p := netip.MustParsePrefix(cidr)
	return &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
}

// TestWatchSpecChange: on a quiet node the same spec gets the last plan again, and another spec is planned
// anew from the same read.
func TestWatchSpecChange(t *testing.T) {
	_, m, _ := watched(t)
	spec := twoVRFsOneL2()
	converge(t, m, spec)
	waitQuiet(t, m, spec)
	first, second := mustPlan(t, m, spec), mustPlan(t, m, spec)
	if first != second || !second.ObservedReused {
		t.Errorf("quiet node, same spec: a new plan (reused %v)", second.ObservedReused)
	}
	changed := twoVRFsOneL2()
	changed.Layer2s[0].MTU = 1400
	p := mustPlan(t, m, changed)
	if !p.ObservedReused || p.Empty() || !strings.Contains(p.String(), "1400") {
		t.Fatalf("quiet node, MTU changed: reused %v, plan:\n%s", p.ObservedReused, p)
	}
	if again := mustPlan(t, m, spec); again.ObservedReused != true || !again.Empty() {
		t.Fatalf("back to the first spec: reused %v, plan:\n%s", again.ObservedReused, again)
	}
}
