package controllers

import (
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// The Ready condition of a Link from the nodes' configurations: a node counts once it applied the spec with the
// Link (its revision, Ready of its generation); the others are named with why.
func TestLinkReadyFromNodes(t *testing.T) {
	nnc := func(name string, gen int64, applied string, ready metav1.ConditionStatus, readyGen int64, links ...string) v1.NodeNetworkConfig {
		n := v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: gen}}
		n.Spec.Revision, n.Status.AppliedRevision = "r2", applied
		n.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: ready, ObservedGeneration: readyGen, Message: "apply failed: boom"}}
		for _, l := range links {
			n.Spec.Links = append(n.Spec.Links, v1.NodeLink{Name: l})
		}
		return n
	}
	nodes := linkNodes([]v1.NodeNetworkConfig{
		nnc("c", 2, "r2", metav1.ConditionFalse, 2, "gw"),
		nnc("a", 2, "r2", metav1.ConditionTrue, 2, "gw", "uplink"),
		nnc("b", 3, "r2", metav1.ConditionTrue, 2, "gw"), // a newer spec not yet applied
		nnc("d", 1, "r1", metav1.ConditionTrue, 1),
	})
	cond := func(link string) string {
		var notReady []string
		for _, n := range nodes[link] {
			if n.notReady != "" {
				notReady = append(notReady, n.node+" ("+n.notReady+")")
			}
		}
		c := linkReady(7, len(nodes[link]), notReady)
		if c.ObservedGeneration != 7 {
			t.Errorf("observedGeneration %d", c.ObservedGeneration)
		}
		return string(c.Status) + " " + c.Reason + ": " + c.Message
	}
	got := map[string]string{"gw": cond("gw"), "uplink": cond("uplink"), "none": cond("none")}
	want := map[string]string{
		"gw":     "False NotReady: ready on 1 of 3 nodes; not on b (applying), c (not Ready: apply failed: boom)",
		"uplink": "True Ready: ready on 1 nodes",
		"none":   "False NoNodes: no node's configuration has the Link: its nodeSelector selects none, or it waits for a reference (see Resolved)",
	}
	if !maps.Equal(got, want) {
		t.Errorf("conditions\n got %q\nwant %q", got, want)
	}
}
