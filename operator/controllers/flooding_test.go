package controllers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/nodespec"
)

// floodPeers returns the static flood peers of a network in every node's configuration, confirmed by its agent
// (node -> peers; "evpn" when the network floods by EVPN, absent when the node does not have it).
func floodPeers(t *testing.T, network string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, nnc := range listNNCs(t) {
		if !confirmed(&nnc) { // confirmed includes the Ready condition of this generation
			out[name] = "unconfirmed"
			continue
		}
		for _, l := range nnc.Spec.Layer2s {
			if l.Name != network {
				continue
			}
			out[name] = "evpn"
			if l.Flooding != nil {
				out[name] = fmt.Sprintf("%s %v", l.Flooding.Mode, l.Flooding.Peers)
			}
		}
	}
	return out
}

func setAnnotation(t *testing.T, name, key, value string) {
	t.Helper()
	env := shared.Get(t)
	var n corev1.Node
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	orig := n.DeepCopy()
	metav1.SetMetaDataAnnotation(&n.ObjectMeta, key, value)
	if err := env.Client.Patch(context.Background(), &n, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// TestStaticFloodingFollowsNodes: a layer-2 network with static flooding and no listed peers floods, on every
// node, to the VTEP address of every other node it is on, in the nodes' NodeNetworkConfigs (applied by their
// agents) within the same revision: a third node joining adds its address on the first two, a new VTEP address
// annotation replaces it, the node leaving (deleted) removes it, and a node outside the selector is no peer.
func TestStaticFloodingFollowsNodes(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	resetCluster(t)
	gw := map[string]string{"gw": "yes"}
	for i := 1; i <= 2; i++ {
		createNode(t, nodeName(i), gw, true)
	}
	createNode(t, nodeName(9), nil, true) // not selected: never a peer
	l2 := &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "gateway"}}
	l2.Spec.ID, l2.Spec.VNI, l2.Spec.MTU = 300, 3000, 1500
	l2.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: gw}
	l2.Spec.Flooding = &v1.Flooding{Mode: v1.FloodingStatic}
	if err := env.Client.Create(ctx, l2); err != nil {
		t.Fatal(err)
	}
	startAgents(t, seededAgents(31))
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(3)
	startOperator(t, opts, runBoth)
	rev := waitPhase(t, time.Minute, waitRevision(t, 1).Name, v1.RevisionDone)

	expect := func(what string, want map[string]string) {
		t.Helper()
		start := time.Now()
		waitFor(t, time.Minute, what, func() (bool, error) {
			got := floodPeers(t, "gateway")
			return maps.Equal(got, want), fmt.Errorf("peers %v, want %v", got, want)
		})
		t.Logf("%s: every node's configuration applied with the new peers %v after the change", what, time.Since(start).Round(time.Millisecond))
	}
	// createNode's router ids (the VTEP addresses): node-00i is 10.0.0.(i+1).
	expect("two nodes flood to each other", map[string]string{
		nodeName(1): "static [10.0.0.3]", nodeName(2): "static [10.0.0.2]",
	})

	createNode(t, nodeName(3), gw, true)
	expect("a third node joins: the first two flood to it too", map[string]string{
		nodeName(1): "static [10.0.0.3 10.0.0.4]", nodeName(2): "static [10.0.0.2 10.0.0.4]", nodeName(3): "static [10.0.0.2 10.0.0.3]",
	})

	setAnnotation(t, nodeName(3), nodespec.AnnotationVTEPAddress, "192.0.2.33")
	expect("its VTEP address changes", map[string]string{
		nodeName(1): "static [10.0.0.3 192.0.2.33]", nodeName(2): "static [10.0.0.2 192.0.2.33]", nodeName(3): "static [10.0.0.2 10.0.0.3]",
	})

	if err := env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName(3)}}); err != nil {
		t.Fatal(err)
	}
	expect("the third node leaves", map[string]string{
		nodeName(1): "static [10.0.0.3]", nodeName(2): "static [10.0.0.2]",
	})

	// Peers changed with the nodes, not with the user's resources: still the first revision, and the data plane's
	// map version is the same on every node (flood entries are no BPF table content).
	revs := listRevisions(t)
	if len(revs) != 1 || revs[0].Name != rev.Name {
		t.Errorf("revisions %v, want only %s", revisionNames(revs), rev.Name)
	}
	versions := map[string]bool{}
	for _, nnc := range listNNCs(t) {
		versions[nnc.Spec.ExpectedMapVersion] = true
	}
	if len(versions) != 1 {
		t.Errorf("map versions %v, want one for every node", slices.Collect(maps.Keys(versions)))
	}
}

func revisionNames(revs []v1.NetworkConfigRevision) []string {
	out := make([]string, len(revs))
	for i := range revs {
		out[i] = revs[i].Name
	}
	return out
}
