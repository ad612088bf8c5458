package controllers

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func getLink(t *testing.T, name string) *v1.Link {
	t.Helper()
	var l v1.Link
	if err := shared.Get(t).Client.Get(context.Background(), client.ObjectKey{Name: name}, &l); err != nil {
		t.Fatal(err)
	}
	return &l
}

// linkCondition renders a Link's condition as "Status/Reason" ("-" when absent).
func linkCondition(l *v1.Link, typ string) string {
	c := meta.FindStatusCondition(l.Status.Conditions, typ)
	if c == nil {
		return "-"
	}
	return string(c.Status) + "/" + c.Reason
}

// nodeLinks renders the Links of a node's configuration: "name=interface" (vxlans with device, master and peers).
func nodeLinks(t *testing.T, node string) []string {
	t.Helper()
	var out []string
	for _, l := range listNNCs(t)[node].Spec.Links {
		s := l.Name + "=" + l.InterfaceName
		if x := l.VXLAN; x != nil {
			s += fmt.Sprintf(" vni %d dev %s master %s", x.VNI, x.Device, x.Master)
			if x.Flooding != nil {
				s += fmt.Sprintf(" %s %v", x.Flooding.Mode, x.Flooding.Peers)
			}
		}
		out = append(out, s)
	}
	return out
}

// TestLinks: node-network-operator's gateway network as Links, applied in the wrong order: the VXLAN first waits
// outside the revisions (Resolved=False, Ready=False NoNodes), its bridge and uplink make it resolve; the selected
// nodes get all three with the references resolved to interface names and static flooding to each other, the
// others only the unmanaged uplink; the status names the matched nodes and turns Ready once their agents applied
// it; a third gw node is matched and flooded to; deleting the VXLAN takes it off the nodes.
func TestLinks(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	resetCluster(t)
	gw := map[string]string{"gw": "yes"}
	createNode(t, nodeName(1), gw, true)
	createNode(t, nodeName(2), gw, true)
	createNode(t, nodeName(9), nil, true)
	startAgents(t, seededAgents(41))
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(3)
	startOperator(t, opts, runBoth|runLinkStatus)

	sel := &metav1.LabelSelector{MatchLabels: gw}
	vx := &v1.Link{ObjectMeta: metav1.ObjectMeta{Name: "gw-vxlan"}, Spec: v1.LinkSpec{InterfaceName: "vxgw", NodeSelector: sel,
		VXLAN: &v1.VXLANLink{VNID: 4242, Port: 4789, Device: &v1.LinkReference{Name: "uplink"}, Master: &v1.LinkReference{Name: "gw-bridge"},
			Flooding: &v1.Flooding{Mode: v1.FloodingStatic}}}}
	if err := env.Client.Create(ctx, vx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "gw-vxlan held back, on no node", func() (bool, error) {
		l := getLink(t, "gw-vxlan")
		r, rd := linkCondition(l, ConditionResolved), linkCondition(l, v1.LinkConditionReady)
		return r == "False/"+ConditionReasonMissingReference && rd == "False/"+v1.LinkReasonNoNodes, fmt.Errorf("Resolved %s, Ready %s", r, rd)
	})
	if c := meta.FindStatusCondition(getLink(t, "gw-vxlan").Status.Conditions, ConditionResolved); c.Message != `waiting outside the revisions: device: Link "uplink" does not exist or is held back` {
		t.Errorf("Resolved message %q", c.Message)
	}

	for _, l := range []*v1.Link{
		{ObjectMeta: metav1.ObjectMeta{Name: "gw-bridge"}, Spec: v1.LinkSpec{InterfaceName: "brgw", NodeSelector: sel, Bridge: &v1.BridgeLink{MTU: 1450}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "uplink"}, Spec: v1.LinkSpec{InterfaceName: "eth0", Unmanaged: &v1.UnmanagedLink{}}},
	} {
		if err := env.Client.Create(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		nodeName(1): {"gw-bridge=brgw", "gw-vxlan=vxgw vni 4242 dev eth0 master brgw static [10.0.0.3]", "uplink=eth0"},
		nodeName(2): {"gw-bridge=brgw", "gw-vxlan=vxgw vni 4242 dev eth0 master brgw static [10.0.0.2]", "uplink=eth0"},
		nodeName(9): {"uplink=eth0"},
	}
	expect := func(what string, want map[string][]string, matched []string) {
		t.Helper()
		waitFor(t, time.Minute, what, func() (bool, error) {
			for node, links := range want {
				if got := nodeLinks(t, node); !slices.Equal(got, links) {
					return false, fmt.Errorf("node %s: links %q, want %q", node, got, links)
				}
			}
			l := getLink(t, "gw-vxlan")
			r, rd := linkCondition(l, ConditionResolved), linkCondition(l, v1.LinkConditionReady)
			return slices.Equal(l.Status.MatchedNodes, matched) && r == "True/"+ConditionReasonResolved && rd == "True/"+v1.LinkReasonReady,
				fmt.Errorf("gw-vxlan matched %v, Resolved %s, Ready %s", l.Status.MatchedNodes, r, rd)
		})
	}
	expect("the gateway network on the gw nodes", want, []string{nodeName(1), nodeName(2)})
	// Each Link's status is its own write: uplink's may land after gw-vxlan's.
	waitFor(t, time.Minute, "uplink on every node", func() (bool, error) {
		got := getLink(t, "uplink").Status.MatchedNodes
		return slices.Equal(got, []string{nodeName(1), nodeName(2), nodeName(9)}), fmt.Errorf("uplink matched %v, want every node", got)
	})

	createNode(t, nodeName(3), gw, true)
	want[nodeName(1)][1] = "gw-vxlan=vxgw vni 4242 dev eth0 master brgw static [10.0.0.3 10.0.0.4]"
	want[nodeName(2)][1] = "gw-vxlan=vxgw vni 4242 dev eth0 master brgw static [10.0.0.2 10.0.0.4]"
	want[nodeName(3)] = []string{"gw-bridge=brgw", "gw-vxlan=vxgw vni 4242 dev eth0 master brgw static [10.0.0.2 10.0.0.3]", "uplink=eth0"}
	expect("a third gw node", want, []string{nodeName(1), nodeName(2), nodeName(3)})

	if err := env.Client.Delete(ctx, vx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "gw-vxlan off the nodes", func() (bool, error) {
		got := nodeLinks(t, nodeName(1))
		return slices.Equal(got, []string{"gw-bridge=brgw", "uplink=eth0"}), fmt.Errorf("node-001 links %q", got)
	})
}
