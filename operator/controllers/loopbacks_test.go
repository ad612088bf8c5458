package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// loopbackAddress returns the address of the VRF's loopback in the node's configuration ("-" when absent).
func loopbackAddress(nnc v1.NodeNetworkConfig, vrf, loopback string) string {
	for _, v := range nnc.Spec.VRFs {
		for _, lo := range v.Loopbacks {
			if v.Name == vrf && lo.Name == loopback {
				return lo.Address
			}
		}
	}
	return "-"
}

// TestLoopbackAddresses: every node gets its own address of a loopback's subnet, the nodes keep them across a
// later revision (a node that joins takes the next free one), and a subnet too small for the nodes fails its
// revision before any node receives it.
func TestLoopbackAddresses(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	resetCluster(t)
	for i := 1; i <= 3; i++ {
		createNode(t, nodeName(i), nil, true)
	}
	mirror := vrfConfig("mirror", "mirror", 700, 10)
	mirror.Spec.Loopbacks = []v1.VRFLoopback{{Name: "lo.mir", Subnet: "10.99.0.0/29"}}
	if err := env.Client.Create(ctx, mirror); err != nil {
		t.Fatal(err)
	}
	ag := startAgents(t, seededAgents(21))
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(2)
	op := startOperator(t, opts, runBoth)

	a := waitPhase(t, time.Minute, waitRevision(t, 1).Name, v1.RevisionDone)
	want := map[string]string{nodeName(1): "10.99.0.1/32", nodeName(2): "10.99.0.2/32", nodeName(3): "10.99.0.3/32"}
	checkLoopbacks := func(rev *v1.NetworkConfigRevision, want map[string]string) {
		t.Helper()
		nncs := checkAllConfirmed(t, len(want), rev.Spec.Revision)
		for name, addr := range want {
			if got := loopbackAddress(nncs[name], "mirror", "lo.mir"); got != addr {
				t.Errorf("revision %s, node %s: lo.mir address %q, want %q", rev.Name, name, got, addr)
			}
		}
	}
	checkLoopbacks(a, want)

	// A second revision, and a node that sorts first joins: the others keep their addresses.
	createNode(t, nodeName(0), nil, true)
	setVNI(t, "mirror", 701)
	b := waitPhase(t, time.Minute, waitRevision(t, a.Spec.Sequence+1).Name, v1.RevisionDone)
	want[nodeName(0)] = "10.99.0.4/32"
	checkLoopbacks(b, want)

	// 4 nodes, 2 host addresses: the revision fails before any node gets it.
	small := vrfConfig("small", "small", 800, 20)
	small.Spec.Loopbacks = []v1.VRFLoopback{{Name: "lo.small", Subnet: "10.98.0.0/30"}}
	if err := env.Client.Create(ctx, small); err != nil {
		t.Fatal(err)
	}
	c := waitPhase(t, 30*time.Second, waitRevision(t, b.Spec.Sequence+1).Name, v1.RevisionFailed)
	for _, s := range []string{ReasonLoopbackSubnetExhausted, `VRFRouteConfiguration "small"`, `loopback "lo.small"`,
		"subnet 10.98.0.0/30", "4 nodes need one"} {
		if !strings.Contains(c.Status.Message, s) {
			t.Errorf("failed revision's message %q does not say %q", c.Status.Message, s)
		}
	}
	if c.Status.FailedNode != nodeName(2) {
		t.Errorf("failed node %q, want %s (the first without address)", c.Status.FailedNode, nodeName(2))
	}
	if got := ag.assignmentOrder(c.Spec.Revision); len(got) != 0 {
		t.Fatalf("nodes received the revision without addresses: %v", got)
	}
	if rev := getRevision(t, b.Name); rev.Status.Phase != v1.RevisionDone {
		t.Fatalf("previous revision phase %s, want it to stay Done", rev.Status.Phase)
	}
	checkLoopbacks(b, want)
	if v := counterValue(t, op.metrics.RolloutFailures.WithLabelValues(ReasonLoopbackSubnetExhausted)); v != 1 {
		t.Errorf("failures metric %v, want 1", v)
	}
}
