package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// reportMirrors is an agent's status.mirrors: every mirror of the spec applied, or (a kernel without GRE) none.
func reportMirrors(gre bool) func(*v1.NodeNetworkConfigSpec) []v1.NodeMirrorStatus {
	return func(spec *v1.NodeNetworkConfigSpec) []v1.NodeMirrorStatus {
		out := []v1.NodeMirrorStatus{}
		for _, m := range spec.Mirrors {
			s := v1.NodeMirrorStatus{Name: m.Name, Target: m.Target.Name, Applied: gre}
			if !gre {
				s.Reason, s.Message = v1.MirrorReasonNotSupported, "target "+m.Target.Name+": not supported by this kernel: gretap tunnels"
			}
			out = append(out, s)
		}
		return out
	}
}

// TestMirrorStatus: the MirrorSelector and MirrorTarget counters follow what the (simulated) agents report in
// status.mirrors: a node whose kernel has no GRE does not count and is named in the selector's Applied=False;
// once it reports the mirrors running they count; a deleted selector no longer counts for its target.
func TestMirrorStatus(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	resetCluster(t)
	createNodes(t, 2)

	vrf := vrfConfig("green", "Green", 3000, 10)
	vrf.Spec.Loopbacks = []v1.VRFLoopback{{Name: "lo.mir", Subnet: "10.99.0.0/24"}}
	l2 := &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "green-workers"}, Spec: v1.Layer2NetworkConfigurationSpec{
		ID: 300, VNI: 300300, MTU: 1500, VRF: "Green", AnycastMac: "02:00:00:00:03:00", AnycastGateways: []string{"10.3.0.1/24"}}}
	target := &v1.MirrorTarget{ObjectMeta: metav1.ObjectMeta{Name: "collector"}, Spec: v1.MirrorTargetSpec{
		Type: v1.MirrorTargetL2GRE, DestinationIP: "203.0.113.10", DestinationVrf: "Green", SourceLoopback: "lo.mir"}}
	selector := func(name, kind, source string) *v1.MirrorSelector {
		return &v1.MirrorSelector{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.MirrorSelectorSpec{
			Direction:    v1.MirrorIngress,
			MirrorTarget: corev1.TypedObjectReference{Kind: v1.KindMirrorTarget, Name: "collector"},
			MirrorSource: corev1.TypedObjectReference{Kind: kind, Name: source}}}
	}
	l2sel := selector("l2-mirror", v1.KindLayer2NetworkConfiguration, "green-workers")
	vrfsel := selector("vrf-mirror", v1.KindVRFRouteConfiguration, "green")
	for _, o := range []client.Object{vrf, l2, target, l2sel, vrfsel} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// node-000 runs the mirrors, node-001's kernel has no GRE.
	ag := startAgents(t, func(node string) *behaviour {
		return &behaviour{delay: 10 * time.Millisecond, mirrors: reportMirrors(node == nodeName(0))}
	})
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(2)
	startOperator(t, opts, runBoth|runMirrorStatus)

	waitSelector := func(name string, nodes int32, cond metav1.ConditionStatus, reason, msg string) {
		t.Helper()
		var s v1.MirrorSelector
		waitFor(t, time.Minute, fmt.Sprintf("selector %s on %d nodes, Applied=%s %s", name, nodes, cond, reason), func() (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &s); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(s.Status.Conditions, ConditionApplied)
			ok := s.Status.ActiveNodes == nodes && c != nil && c.Status == cond && c.Reason == reason &&
				strings.Contains(c.Message, msg) && c.ObservedGeneration == s.Generation
			return ok, fmt.Errorf("activeNodes %d, Applied %+v", s.Status.ActiveNodes, c)
		})
	}
	waitTarget := func(selectors, nodes int32) {
		t.Helper()
		var o v1.MirrorTarget
		waitFor(t, time.Minute, fmt.Sprintf("target with %d selectors on %d nodes", selectors, nodes), func() (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKey{Name: "collector"}, &o); err != nil {
				return false, err
			}
			return o.Status.ActiveSelectors == selectors && o.Status.ActiveNodes == nodes,
				fmt.Errorf("activeSelectors %d, activeNodes %d", o.Status.ActiveSelectors, o.Status.ActiveNodes)
		})
	}
	notOn := nodeName(1) + " (NotSupported: target collector: not supported by this kernel"
	waitSelector("l2-mirror", 1, metav1.ConditionFalse, ConditionReasonNotApplied, "runs on 1 of 2 nodes; not on "+notOn)
	waitSelector("vrf-mirror", 1, metav1.ConditionFalse, ConditionReasonNotApplied, notOn)
	waitTarget(2, 1)

	// node-001 gets GRE: both mirrors run on both nodes.
	ag.setBehaviour(nodeName(1), func(b *behaviour) { b.mirrors = reportMirrors(true) })
	waitSelector("l2-mirror", 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")
	waitSelector("vrf-mirror", 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")
	waitTarget(2, 2)

	// One selector goes: the target counts the other; once the nodes run the new revision it is not reported.
	if err := env.Client.Delete(ctx, vrfsel); err != nil {
		t.Fatal(err)
	}
	waitTarget(1, 2)
	waitFor(t, time.Minute, "no node reports vrf-mirror", func() (bool, error) {
		for name, n := range listNNCs(t) {
			for _, m := range n.Status.Mirrors {
				if m.Name == "vrf-mirror" {
					return false, fmt.Errorf("%s still reports it", name)
				}
			}
		}
		return true, nil
	})
	waitSelector("l2-mirror", 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")
	waitTarget(1, 2)
}

// The counting alone: a target counts the nodes once however many of its mirrors run there; an Applied=False
// message names at most maxNamedNodes nodes.
func TestCountMirrors(t *testing.T) {
	var nncs []v1.NodeNetworkConfig
	for i := range 8 {
		n := v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: nodeName(i)}}
		n.Status.Mirrors = []v1.NodeMirrorStatus{{Name: "a", Target: "t", Applied: true}, {Name: "b", Target: "t", Applied: i == 0,
			Reason: v1.MirrorReasonInvalid, Message: "no source"}}
		nncs = append(nncs, n)
	}
	sel := func(name, target string) v1.MirrorSelector {
		s := v1.MirrorSelector{ObjectMeta: metav1.ObjectMeta{Name: name}}
		s.Spec.MirrorTarget.Name = target
		return s
	}
	c := countMirrors(nncs, []v1.MirrorSelector{sel("a", "t"), sel("b", "t"), sel("c", "u")})
	if c.selectorNodes["a"] != 8 || c.selectorNodes["b"] != 1 || len(c.targetNodes["t"]) != 8 || c.targetSelectors["t"] != 2 ||
		c.targetSelectors["u"] != 1 {
		t.Fatalf("counts %+v", c)
	}
	cond := c.appliedCondition("b", 2)
	want := "runs on 1 of 8 nodes; not on node-001 (Invalid: no source), node-002 (Invalid: no source), " +
		"node-003 (Invalid: no source), node-004 (Invalid: no source), node-005 (Invalid: no source) and 2 more"
	if cond.Status != metav1.ConditionFalse || cond.Message != want || cond.ObservedGeneration != 2 {
		t.Fatalf("Applied %+v", cond)
	}
	if cond := c.appliedCondition("c", 1); cond.Reason != ConditionReasonPending {
		t.Fatalf("unreported selector: %+v", cond)
	}
}
