package controllers

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// TestApplyOrder: `kubectl apply -f dir/` has no order. A Layer2 network applied before its VRF, a peering
// before its network and a mirror before its target are admitted, wait outside the revisions (condition
// Resolved=False saying what is missing, no revision that fails on a node), and converge once the rest exists.
func TestApplyOrder(t *testing.T) {
	env := shared.Get(t)
	resetCluster(t)
	createNodes(t, 1)
	startOperator(t, testOptions(), runBoth)
	ctx := context.Background()

	l2 := &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "green-workers"}, Spec: v1.Layer2NetworkConfigurationSpec{
		ID: 300, VNI: 300300, MTU: 1500, VRF: "Green", AnycastMac: "02:00:00:00:03:00", AnycastGateways: []string{"10.3.0.1/24"}}}
	peer := &v1.BGPPeering{ObjectMeta: metav1.ObjectMeta{Name: "green-peers"}, Spec: v1.BGPPeeringSpec{
		PeeringVlan: &v1.BGPPeeringVLAN{Name: "green-workers"}, RemoteASN: 65300}}
	sel := &v1.MirrorSelector{ObjectMeta: metav1.ObjectMeta{Name: "green-mirror"}, Spec: v1.MirrorSelectorSpec{
		Direction:    v1.MirrorIngress,
		MirrorTarget: corev1.TypedObjectReference{Kind: v1.KindMirrorTarget, Name: "collector"},
		MirrorSource: corev1.TypedObjectReference{Kind: v1.KindLayer2NetworkConfiguration, Name: "green-workers"}}}
	target := &v1.MirrorTarget{ObjectMeta: metav1.ObjectMeta{Name: "collector"}, Spec: v1.MirrorTargetSpec{
		Type: v1.MirrorTargetL2GRE, DestinationIP: "203.0.113.10", DestinationVrf: "Green", SourceLoopback: "lo.mir"}}
	// Dependents first, in reverse dependency order.
	for _, o := range []client.Object{sel, target, peer, l2} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("create %s before what it references: %v", o.GetName(), err)
		}
	}
	waitResolved := func(obj client.Object, conds func() []metav1.Condition, want metav1.ConditionStatus, msg string) {
		t.Helper()
		waitFor(t, 30*time.Second, obj.GetName()+" Resolved="+string(want), func() (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(conds(), ConditionResolved)
			return c != nil && c.Status == want && (msg == "" || strings.Contains(c.Message, msg)), nil
		})
	}
	waitResolved(l2, func() []metav1.Condition { return l2.Status.Conditions }, metav1.ConditionFalse, `VRF "Green" is not defined`)
	waitResolved(peer, func() []metav1.Condition { return peer.Status.Conditions }, metav1.ConditionFalse, `"green-workers" does not exist or is held back`)
	waitResolved(target, func() []metav1.Condition { return target.Status.Conditions }, metav1.ConditionFalse, `destinationVrf`)
	waitResolved(sel, func() []metav1.Condition { return sel.Status.Conditions }, metav1.ConditionFalse, `MirrorTarget "collector"`)
	for _, r := range listRevisions(t) {
		if len(r.Spec.Layer2) > 0 || len(r.Spec.BGP) > 0 || len(r.Spec.MirrorSelectors) > 0 || r.Status.Phase == v1.RevisionFailed {
			t.Fatalf("revision %s holds unresolved objects or failed: %+v, phase %s", r.Name, r.Spec, r.Status.Phase)
		}
	}

	vrf := vrfConfig("green", "Green", 3000, 10)
	vrf.Spec.Loopbacks = []v1.VRFLoopback{{Name: "lo.mir", Subnet: "10.99.0.0/24"}}
	if err := env.Client.Create(ctx, vrf); err != nil {
		t.Fatal(err)
	}
	waitResolved(l2, func() []metav1.Condition { return l2.Status.Conditions }, metav1.ConditionTrue, "")
	waitResolved(peer, func() []metav1.Condition { return peer.Status.Conditions }, metav1.ConditionTrue, "")
	waitResolved(target, func() []metav1.Condition { return target.Status.Conditions }, metav1.ConditionTrue, "")
	waitResolved(sel, func() []metav1.Condition { return sel.Status.Conditions }, metav1.ConditionTrue, "")
	waitFor(t, 60*time.Second, "the node configured with all of them", func() (bool, error) {
		nnc, ok := listNNCs(t)[nodeName(0)]
		if !ok {
			return false, nil
		}
		s := &nnc.Spec
		return slices.ContainsFunc(s.Layer2s, func(l v1.NodeLayer2) bool { return l.Name == "green-workers" && l.VRF == "Green" }) &&
			slices.ContainsFunc(s.BGPPeers, func(p v1.NodeBGPPeer) bool { return p.Name == "green-peers" }) &&
			slices.ContainsFunc(s.Mirrors, func(m v1.NodeMirror) bool {
				return m.Name == "green-mirror" && m.Layer2 == "green-workers" && m.Target.SourceLoopback == "lo.mir"
			}), nil
	})
	for _, r := range listRevisions(t) {
		if r.Status.Phase == v1.RevisionFailed {
			t.Fatalf("revision %s failed: %s", r.Name, r.Status.Message)
		}
	}
}
