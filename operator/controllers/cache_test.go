package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/nodespec"
)

// TestTrimNode: a trimmed Node builds the same configuration, passes the same rollout predicate and keeps the
// labels admission reads; the kubelet's bulk and the managed fields are gone.
func TestTrimNode(t *testing.T) {
	now := metav1.Now()
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"rack": "a"},
			Annotations:   map[string]string{nodespec.AnnotationUnderlayInterfaces: "eth1"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-1"}, {Type: corev1.NodeInternalIP, Address: "192.0.2.1"}},
			Images:    []corev1.ContainerImage{{Names: []string{"img"}, SizeBytes: 1}},
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.37.1"},
		},
	}
	obj, err := trimNode(n)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*corev1.Node)
	opts := testOptions().NodeConfig
	rev := v1.NetworkConfigRevisionSpec{Revision: "r1", VRF: []v1.VRFRevision{{Name: "blue", VRFRouteConfigurationSpec: vrfConfig("blue", "blue", 100, 10).Spec}}}
	rev.VRF[0].NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "a"}}
	want, errWant := nodespec.Build(&rev, n, nil, opts)
	have, errHave := nodespec.Build(&rev, got, nil, opts)
	if len(want.VRFs) != 1 || want.Underlay.RouterID != "192.0.2.1" || want.Underlay.Interfaces[0] != "eth1" {
		t.Fatalf("the test node's configuration lacks what it is meant to test: %+v", want)
	}
	if errWant != nil || errHave != nil || !equality.Semantic.DeepEqual(want, have) {
		t.Errorf("configuration of the trimmed node differs: %v %v\n%+v\n%+v", errWant, errHave, want, have)
	}
	if r, since := nodeReady(got); !r || !since.Equal(now.Time) {
		t.Errorf("Ready %v since %v", r, since)
	}
	if len(got.ManagedFields) != 0 || len(got.Status.Images) != 0 || got.Status.NodeInfo.KubeletVersion != "" ||
		got.Spec.PodCIDR != "" || len(got.Status.Conditions) != 1 {
		t.Errorf("trimmed node keeps %+v", got)
	}
	if got.Labels["rack"] != "a" || got.UID != "u1" || got.ResourceVersion != "7" {
		t.Errorf("trimmed node lost its identity or labels: %+v", got.ObjectMeta)
	}
	if o, err := trimNode("not a node"); err != nil || o != "not a node" {
		t.Errorf("other object: %v, %v", o, err)
	}
}
