package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/standalone"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// foreignState is what the agent must never touch: a link it does not own, the test's routes in the VRF tables
// and the test's bridge port.
type foreignState struct {
	keepIndex int
	routes    []string
}

func (n *node) foreign(t *testing.T) foreignState {
	t.Helper()
	var s foreignState
	s.keepIndex = ifindexOf(t, n.ns, "keep0")
	for _, table := range []int{tableRed, tableBlue, tableGreen} {
		rs, err := n.ns.Handle().RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
		mustf(t, err, "list routes of table %d", table)
		for _, r := range rs {
			if r.Protocol == netlink.RouteProtocol(241) {
				continue // the agent's own
			}
			s.routes = append(s.routes, r.String())
		}
	}
	slices.Sort(s.routes)
	return s
}

func spliceInterfaces(s *v1.NodeNetworkConfigSpec, fn func(i *v1.DataPlaneInterface) bool) {
	s.DataPlane.Interfaces = slices.DeleteFunc(s.DataPlane.Interfaces, func(i v1.DataPlaneInterface) bool { return !fn(&i) })
}

// Config changes (add a VRF, move an interface to another VRF, remove an L2 network) change forwarding without
// re-attaching anything (link IDs stay) and without touching objects the agent does not own.
func TestConfigChanges(t *testing.T) {
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	a := startAgent(t, freePort(t), n.agentArgs()...)
	n.appliedRev(t, a, "rev-1")
	n.attachL2Host(t)
	pingOK(t, n.host("hl"), addrA, 3)
	pingOK(t, n.host("hc"), addrD, 3)
	ids := n.linkIDs(t)
	foreign := n.foreign(t)
	ctx := context.Background()

	// Traffic in red keeps flowing through all changes.
	flow, err := lab.StartFlow(ctx, lab.FlowOptions{From: n.host("ha"), To: n.host("hb"), Dst: addrB, Rate: 1000})
	mustf(t, err, "start flow")
	defer flow.Stop(ctx)

	// rev-2: a new VRF green; nD moves from blue to green.
	rev2 := baseSpec("rev-2")
	rev2.VRFs = append(rev2.VRFs, v1.NodeVRF{Name: "green", ID: 3, TableID: tableGreen, VNI: 500})
	for i := range rev2.DataPlane.Interfaces {
		if rev2.DataPlane.Interfaces[i].Name == "nD" {
			rev2.DataPlane.Interfaces[i].VRF = "green"
		}
	}
	n.writeSpec(t, rev2)
	n.appliedRev(t, a, "rev-2")
	if !n.linkExists("br.green") || !n.linkExists("vx.green") {
		t.Fatal("VRF green's bridge and VXLAN were not created")
	}
	pingFails(t, n.host("hc"), addrD) // hd's replies now look up green, which has no route to hc
	greenBefore, _ := forwardedPackets(t, a, "green")
	pingFails(t, n.host("hd"), addrC)
	if g, _ := forwardedPackets(t, a, "green"); g != greenBefore {
		t.Errorf("green forwarded %v packets towards blue, want none", g-greenBefore)
	}

	// rev-3: nD moves to red: ha and hd reach each other.
	rev3 := rev2.DeepCopy()
	rev3.Revision = "rev-3"
	for i := range rev3.DataPlane.Interfaces {
		if rev3.DataPlane.Interfaces[i].Name == "nD" {
			rev3.DataPlane.Interfaces[i].VRF = "red"
		}
	}
	pingFails(t, n.host("ha"), addrD)
	n.writeSpec(t, *rev3)
	n.appliedRev(t, a, "rev-3")
	redBefore, _ := forwardedPackets(t, a, "red")
	pingOK(t, n.host("ha"), addrD, 10)
	// The flow ha -> hb runs in red too, so only a lower bound holds here.
	if r, _ := forwardedPackets(t, a, "red"); r-redBefore < 20 {
		t.Errorf("red forwarded %v packets for 10 pings through nD, want at least 20", r-redBefore)
	}

	// rev-4: the L2 network goes away: its bridge and VXLAN are deleted, hl is cut off.
	rev4 := rev3.DeepCopy()
	rev4.Revision = "rev-4"
	rev4.Layer2s = nil
	spliceInterfaces(rev4, func(i *v1.DataPlaneInterface) bool { return i.Name != l2Bridge })
	n.writeSpec(t, *rev4)
	n.appliedRev(t, a, "rev-4")
	if n.linkExists(l2Bridge) || n.linkExists("l2vx.300") {
		t.Fatal("the L2 network's links still exist")
	}
	pingFails(t, n.host("hl"), addrA)

	res, err := flow.Stop(ctx)
	mustf(t, err, "stop flow")
	if !res.Clean() {
		t.Errorf("flow in red disturbed by the changes of other VRFs: %s", res)
	}
	// No re-attach: every interface that stayed keeps its link; only the removed bridge's link is gone and the
	// new VRF's bridge got one.
	after := n.linkIDs(t)
	for name, id := range ids {
		if name == strings.ReplaceAll(l2Bridge, ".", "%2e") {
			if _, ok := after[name]; ok {
				t.Errorf("link of the removed %s still pinned", l2Bridge)
			}
			continue
		}
		if after[name] != id {
			t.Errorf("interface %s: link %d became %d (re-attached)", name, id, after[name])
		}
	}
	if got := n.foreign(t); got.keepIndex != foreign.keepIndex || !slices.Equal(got.routes, foreign.routes) {
		t.Errorf("objects the agent does not own changed:\nbefore %+v\nafter  %+v", foreign, got)
	}
	if !n.linkExists("nL") {
		t.Error("the test's port nL was deleted with the bridge")
	}
}

// Drift is repaired on resync: an agent-owned link deleted behind the agent's back is re-created and the router
// attached to it again; the VRF keeps forwarding afterwards.
func TestDriftRepaired(t *testing.T) {
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	a := startAgent(t, freePort(t), n.agentArgs()...)
	n.appliedRev(t, a, "rev-1")
	old := ifindexOf(t, n.ns, "br.red")
	br, err := n.ns.Handle().LinkByName("br.red")
	mustf(t, err, "br.red")
	mustf(t, n.ns.Handle().LinkDel(br), "delete br.red")
	mustf(t, lab.WaitFor(context.Background(), 20*time.Second, 50*time.Millisecond, func() (bool, error) {
		if err := a.running(); err != nil {
			return false, err
		}
		idx, err := n.ns.Ifindex("br.red")
		if err != nil || idx == old {
			return false, nil
		}
		ids := n.linkIDs(t)
		_, attached := ids["br%2ered"]
		return attached, nil
	}), "br.red re-created and attached")
	n.appliedRev(t, a, "rev-1")
	if !n.linkExists("vx.red") {
		t.Fatal("vx.red missing after the repair")
	}
	st, err := standalone.ReadStatus(n.statusFile())
	mustf(t, err, "status")
	for _, i := range st.Status.Interfaces {
		if i.Name == "br.red" && i.Mode != v1.AttachTCX {
			t.Errorf("br.red attach mode %q (%s)", i.Mode, i.Error)
		}
	}
	pingOK(t, n.host("ha"), addrB, 5)
}
