package kube_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Links from the API to the kernel: with the operator's controllers and the agent reconciler against one namespace
// node, node-network-operator's gateway Links (the node's nA as the unmanaged uplink, a bridge, a VXLAN on nA in the
// bridge, static flooding to a listed peer) become a bridge and a VXLAN with its flood entry on the node, the
// Links' status says Ready on the node, and deleting them removes both interfaces (nA stays).
func TestLinksOnTheNode(t *testing.T) {
	n := newAgentNode(t)
	env := shared.Get(t)
	createNode(t, n.name)
	startOperator(t)
	run(t, n.mgr)
	ctx := context.Background()

	links := []*v1.Link{
		{ObjectMeta: metav1.ObjectMeta{Name: "gw-vxlan"}, Spec: v1.LinkSpec{InterfaceName: "vxgw", VXLAN: &v1.VXLANLink{VNID: 4242, Port: 4789,
			Device: &v1.LinkReference{Name: "uplink"}, Master: &v1.LinkReference{Name: "gw-bridge"},
			Flooding: &v1.Flooding{Mode: v1.FloodingStatic, Peers: []string{"10.255.0.1", "192.0.2.50"}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "gw-bridge"}, Spec: v1.LinkSpec{InterfaceName: "brgw", Bridge: &v1.BridgeLink{MTU: 1450}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "uplink"}, Spec: v1.LinkSpec{InterfaceName: "nA", Unmanaged: &v1.UnmanagedLink{}}},
	}
	for _, l := range links {
		mustf(t, env.Client.Create(ctx, l), "create Link %s", l.Name)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), l) })
	}
	waitFor(t, 90*time.Second, "the Links Ready on the node", func() (bool, error) {
		for _, l := range links {
			var got v1.Link
			if err := env.Client.Get(ctx, client.ObjectKey{Name: l.Name}, &got); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, v1.LinkConditionReady)
			if c == nil || c.Status != metav1.ConditionTrue || !slices.Equal(got.Status.MatchedNodes, []string{n.name}) {
				return false, fmt.Errorf("Link %s: matched %v, Ready %+v", l.Name, got.Status.MatchedNodes, c)
			}
		}
		return true, nil
	})
	h := n.ns.Handle()
	br, err := h.LinkByName("brgw")
	mustf(t, err, "brgw")
	l, err := h.LinkByName("vxgw")
	mustf(t, err, "vxgw")
	vx, ok := l.(*netlink.Vxlan)
	up, _ := h.LinkByName("nA")
	if !ok || vx.VxlanId != 4242 || vx.VtepDevIndex != up.Attrs().Index || vx.MasterIndex != br.Attrs().Index || !vx.Learning ||
		!vx.SrcAddr.Equal([]byte{10, 255, 0, 1}) || br.Attrs().MTU != 1450 {
		t.Errorf("vxgw %+v (bridge %s mtu %d), want vni 4242 on nA in brgw, learning, local 10.255.0.1", l, br.Attrs().Name, br.Attrs().MTU)
	}
	neighs, err := h.NeighList(vx.Index, unix.AF_BRIDGE)
	mustf(t, err, "fdb of vxgw")
	var flood []string
	for _, nb := range neighs {
		if bytes.Equal(nb.HardwareAddr, make([]byte, 6)) {
			flood = append(flood, nb.IP.String())
		}
	}
	if !slices.Equal(flood, []string{"192.0.2.50"}) {
		t.Errorf("vxgw flood entries %v, want only 192.0.2.50 (the node's own VTEP skipped)", flood)
	}

	for _, l := range links {
		mustf(t, env.Client.Delete(ctx, l), "delete Link %s", l.Name)
	}
	waitFor(t, 90*time.Second, "the bridge and VXLAN gone, the uplink kept", func() (bool, error) {
		_, errBr := h.LinkByName("brgw")
		_, errVx := h.LinkByName("vxgw")
		_, errUp := h.LinkByName("nA")
		return errBr != nil && errVx != nil && errUp == nil, fmt.Errorf("brgw %v, vxgw %v, nA %v", errBr, errVx, errUp)
	})
}
