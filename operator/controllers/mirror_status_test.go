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
// status.mirrors: a node whose kernel has no GRE does not count and is named in the selector's and the target's
// Applied=False;
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
	waitTarget := func(selectors, nodes int32, cond metav1.ConditionStatus, reason, msg string) {
		t.Helper()
		var o v1.MirrorTarget
		waitFor(t, time.Minute, fmt.Sprintf("target with %d selectors on %d nodes, Applied=%s %s", selectors, nodes, cond, reason),
			func() (bool, error) {
				if err := env.Client.Get(ctx, client.ObjectKey{Name: "collector"}, &o); err != nil {
					return false, err
				}
				c := meta.FindStatusCondition(o.Status.Conditions, ConditionApplied)
				ok := o.Status.ActiveSelectors == selectors && o.Status.ActiveNodes == nodes && c != nil && c.Status == cond &&
					c.Reason == reason && strings.Contains(c.Message, msg) && c.ObservedGeneration == o.Generation
				return ok, fmt.Errorf("activeSelectors %d, activeNodes %d, Applied %+v", o.Status.ActiveSelectors, o.Status.ActiveNodes, c)
			})
	}
	notOn := nodeName(1) + " (NotSupported: target collector: not supported by this kernel"
	waitSelector("l2-mirror", 1, metav1.ConditionFalse, ConditionReasonNotApplied, "runs on 1 of 2 nodes; not on "+notOn)
	waitSelector("vrf-mirror", 1, metav1.ConditionFalse, ConditionReasonNotApplied, notOn)
	waitTarget(2, 1, metav1.ConditionFalse, ConditionReasonNotApplied, "runs on 1 of 2 nodes; not on "+notOn)

	// node-001 gets GRE: both mirrors run on both nodes.
	ag.setBehaviour(nodeName(1), func(b *behaviour) { b.mirrors = reportMirrors(true) })
	waitSelector("l2-mirror", 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")
	waitSelector("vrf-mirror", 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")
	waitTarget(2, 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")

	// One selector goes: the target counts the other; once the nodes run the new revision it is not reported.
	if err := env.Client.Delete(ctx, vrfsel); err != nil {
		t.Fatal(err)
	}
	waitTarget(1, 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")
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
	waitTarget(1, 2, metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes")
}

// TestMirrorTargetApplied: a MirrorTarget's Applied condition follows the nodes' reports of the mirrors into it
// (written here as the agents would, only the mirror status controller running). The cases run in turn on the
// same target, so the transitions are checked too: lastTransitionTime moves only when the status does.
func TestMirrorTargetApplied(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	resetCluster(t)
	target := &v1.MirrorTarget{ObjectMeta: metav1.ObjectMeta{Name: "collector"}, Spec: v1.MirrorTargetSpec{
		Type: v1.MirrorTargetL2GRE, DestinationIP: "203.0.113.10", DestinationVrf: "Green", SourceLoopback: "lo.mir"}}
	if err := env.Client.Create(ctx, target); err != nil {
		t.Fatal(err)
	}
	node0, node1 := nodeName(0), nodeName(1)
	for i, name := range []string{node0, node1} {
		nnc := &v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeNetworkConfigSpec{Revision: "r1",
			Underlay: v1.UnderlaySpec{ASN: 65000, RouterID: fmt.Sprintf("10.0.0.%d", i+1), VTEPAddress: fmt.Sprintf("10.1.0.%d", i+1)}}}
		if err := env.Client.Create(ctx, nnc); err != nil {
			t.Fatal(err)
		}
	}
	startOperator(t, testOptions(), runMirrorStatus)

	runs := func(name string) v1.NodeMirrorStatus {
		return v1.NodeMirrorStatus{Name: name, Target: "collector", Applied: true}
	}
	refused := func(name string) v1.NodeMirrorStatus {
		return v1.NodeMirrorStatus{Name: name, Target: "collector", Reason: v1.MirrorReasonNotSupported,
			Message: "target collector: not supported by this kernel: gretap tunnels"}
	}
	invalid := func(name string) v1.NodeMirrorStatus {
		return v1.NodeMirrorStatus{Name: name, Target: "collector", Reason: v1.MirrorReasonInvalid, Message: "no source interface"}
	}
	// A mirror into another target is no report on this one.
	elsewhere := v1.NodeMirrorStatus{Name: "other", Target: "other-collector", Reason: v1.MirrorReasonInvalid, Message: "no source"}
	cases := []struct {
		name        string
		reports     map[string][]v1.NodeMirrorStatus // node -> its status.mirrors
		activeNodes int32
		status      metav1.ConditionStatus
		reason, msg string
	}{
		{"none reporting", map[string][]v1.NodeMirrorStatus{node1: {elsewhere}}, 0,
			metav1.ConditionFalse, ConditionReasonPending, "no node reports a mirror into the target running (yet)"},
		{"all applied", map[string][]v1.NodeMirrorStatus{node0: {runs("l2"), runs("vrf")}, node1: {runs("l2"), elsewhere, runs("vrf")}}, 2,
			metav1.ConditionTrue, ConditionReasonApplied, "runs on 2 nodes"},
		{"one node refused", map[string][]v1.NodeMirrorStatus{node0: {runs("l2"), runs("vrf")}, node1: {refused("l2"), refused("vrf")}}, 1,
			metav1.ConditionFalse, ConditionReasonNotApplied,
			"runs on 1 of 2 nodes; not on node-001 (NotSupported: target collector: not supported by this kernel: gretap tunnels)"},
		// node-001's tunnel carries copies of l2 (it counts in activeNodes), not of vrf: the target is not applied there.
		{"one mirror refused", map[string][]v1.NodeMirrorStatus{node0: {runs("l2"), runs("vrf")}, node1: {runs("l2"), invalid("vrf")}}, 2,
			metav1.ConditionFalse, ConditionReasonNotApplied, "runs on 1 of 2 nodes; not on node-001 (Invalid: no source interface)"},
		{"both refused, the first reason each gave", map[string][]v1.NodeMirrorStatus{node0: {invalid("l2"), refused("vrf")},
			node1: {refused("l2"), invalid("vrf")}}, 0, metav1.ConditionFalse, ConditionReasonNotApplied,
			"runs on 0 of 2 nodes; not on node-000 (Invalid: no source interface), node-001 (NotSupported: target collector"},
		{"none reporting again", nil, 0, metav1.ConditionFalse, ConditionReasonPending, "no node reports"},
	}
	var prev *metav1.Condition
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, node := range []string{node0, node1} {
				var nnc v1.NodeNetworkConfig
				if err := env.Client.Get(ctx, client.ObjectKey{Name: node}, &nnc); err != nil {
					t.Fatal(err)
				}
				nnc.Status.Mirrors = tc.reports[node]
				if err := env.Client.Status().Update(ctx, &nnc); err != nil {
					t.Fatalf("status of %s: %v", node, err)
				}
			}
			var got *metav1.Condition
			waitFor(t, time.Minute, fmt.Sprintf("activeNodes %d, Applied=%s %s %q", tc.activeNodes, tc.status, tc.reason, tc.msg),
				func() (bool, error) {
					var o v1.MirrorTarget
					if err := env.Client.Get(ctx, client.ObjectKey{Name: "collector"}, &o); err != nil {
						return false, err
					}
					got = meta.FindStatusCondition(o.Status.Conditions, ConditionApplied)
					ok := o.Status.ActiveNodes == tc.activeNodes && got != nil && got.Status == tc.status && got.Reason == tc.reason &&
						strings.HasPrefix(got.Message, tc.msg) && got.ObservedGeneration == o.Generation
					return ok, fmt.Errorf("activeNodes %d, Applied %+v", o.Status.ActiveNodes, got)
				})
			if prev != nil && prev.Status == got.Status && !prev.LastTransitionTime.Equal(&got.LastTransitionTime) {
				t.Errorf("Applied stayed %s but its lastTransitionTime moved from %v to %v", got.Status, prev.LastTransitionTime,
					got.LastTransitionTime)
			}
			prev = got
		})
	}
}

// The counting alone: a target counts the nodes once however many of its mirrors run there; an Applied=False
// message names at most maxNamedNodes nodes; a target is applied on a node only when all its mirrors run there.
func TestCountMirrors(t *testing.T) {
	var nncs []v1.NodeNetworkConfig
	for i := range 8 {
		n := v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: nodeName(i)}}
		n.Status.Mirrors = []v1.NodeMirrorStatus{{Name: "a", Target: "t", Applied: true}, {Name: "b", Target: "t", Applied: i == 0,
			Reason: v1.MirrorReasonInvalid, Message: "no source"}, {Name: "c", Target: "u", Applied: i != 3,
			Reason: v1.MirrorReasonNotSupported, Message: "no GRE"}, {Name: "d", Target: "u", Applied: i != 3}}
		nncs = append(nncs, n)
	}
	sel := func(name, target string) v1.MirrorSelector {
		s := v1.MirrorSelector{ObjectMeta: metav1.ObjectMeta{Name: name}}
		s.Spec.MirrorTarget.Name = target
		return s
	}
	c := countMirrors(nncs, []v1.MirrorSelector{sel("a", "t"), sel("b", "t"), sel("c", "u"), sel("d", "u"), sel("e", "v")})
	if c.selectors["a"].running() != 8 || c.selectors["b"].running() != 1 || c.selectors["e"].running() != 0 ||
		c.targets["t"].running() != 8 || c.targets["u"].running() != 7 || c.targetSelectors["t"] != 2 || c.targetSelectors["v"] != 1 {
		t.Fatalf("counts %+v", c)
	}
	cond := c.selectors["b"].appliedCondition(2, "the mirror")
	want := "runs on 1 of 8 nodes; not on node-001 (Invalid: no source), node-002 (Invalid: no source), " +
		"node-003 (Invalid: no source), node-004 (Invalid: no source), node-005 (Invalid: no source) and 2 more"
	if cond.Status != metav1.ConditionFalse || cond.Message != want || cond.ObservedGeneration != 2 {
		t.Fatalf("Applied %+v", cond)
	}
	if cond := c.selectors["e"].appliedCondition(1, "the mirror"); cond.Reason != ConditionReasonPending {
		t.Fatalf("unreported selector: %+v", cond)
	}
	// The target t runs on all 8 nodes but not all of it: the same message as its selector b.
	if cond := c.targets["t"].appliedCondition(3, "a mirror into the target"); cond.Reason != ConditionReasonNotApplied ||
		cond.Message != want || cond.ObservedGeneration != 3 {
		t.Fatalf("target t: %+v", cond)
	}
	// node-003 gives the reason of its first mirror into u (c, sorted by name).
	if cond := c.targets["u"].appliedCondition(1, "a mirror into the target"); cond.Status != metav1.ConditionFalse ||
		cond.Message != "runs on 7 of 8 nodes; not on node-003 (NotSupported: no GRE)" {
		t.Fatalf("target u: %+v", cond)
	}
	if cond := c.targets["v"].appliedCondition(1, "a mirror into the target"); cond.Reason != ConditionReasonPending ||
		cond.Message != "no node reports a mirror into the target running (yet)" {
		t.Fatalf("unreported target: %+v", cond)
	}
}
