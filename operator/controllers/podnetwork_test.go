/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// startPodNetworkOperator runs the pod network controller alone, with the operator's cache settings.
func startPodNetworkOperator(t *testing.T) {
	t.Helper()
	env := shared.Get(t)
	skip := true
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&PodNetworkReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// podNetworkFixture is a namespace of tenant "a", a network admitting it and a PodNetworkConfig with a pool of
// three addresses (10.40.0.70 first, then 10.40.0.64 and .65) for the pods labelled app=cnf.
func podNetworkFixture(t *testing.T, ns, network string, id int32) *v1.PodNetworkConfig {
	t.Helper()
	env := shared.Get(t)
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"tenant": "a"}}}); err != nil {
		t.Fatal(err)
	}
	l2 := &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: network}, Spec: v1.Layer2NetworkConfigurationSpec{
		ID: id, VNI: 500000 + id, MTU: 1500, AnycastMac: "02:00:00:00:05:00", AnycastGateways: []string{"10.40.0.1/24"},
		PodNamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "a"}}}}
	if err := env.Client.Create(ctx, l2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), l2); client.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
	})
	cfg := &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cnf"}, Spec: v1.PodNetworkConfigSpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "cnf"}},
		Interfaces: []v1.PodInterface{{Name: "net1", Type: v1.PodInterfaceVeth, Network: network,
			Addresses: &v1.PodAddresses{Ranges: []string{"10.40.0.64/31"}, Static: []string{"10.40.0.70"}}}}}}
	if err := env.Client.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// createPod creates a pod scheduled to node with the labels.
func createPod(t *testing.T, ns, name, node string, labels map[string]string) *corev1.Pod {
	t.Helper()
	env := shared.Get(t)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	return p
}

func setPodPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	env := shared.Get(t)
	p.Status.Phase = phase
	if err := env.Client.Status().Update(context.Background(), p); err != nil {
		t.Fatalf("pod %s %s: %v", p.Name, phase, err)
	}
}

func deletePod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	if err := shared.Get(t).Client.Delete(context.Background(), p, client.GracePeriodSeconds(0)); err != nil {
		t.Fatalf("delete pod %s: %v", p.Name, err)
	}
}

// allocs renders status.allocations as "pod/interface=address".
func allocs(cfg *v1.PodNetworkConfig) []string {
	var out []string
	for _, a := range cfg.Status.Allocations {
		out = append(out, fmt.Sprintf("%s/%s=%s", a.Pod, a.Interface, a.Address))
	}
	return out
}

// waitPodNetwork waits until the PodNetworkConfig's allocations are want and its condition typ has status and
// reason with msg in the message, for the current generation.
func waitPodNetwork(t *testing.T, key client.ObjectKey, want []string, typ string, status metav1.ConditionStatus, reason, msg string) *v1.PodNetworkConfig {
	t.Helper()
	env := shared.Get(t)
	var cfg v1.PodNetworkConfig
	waitFor(t, 30*time.Second, fmt.Sprintf("%s: allocations %v, %s=%s %s %q", key, want, typ, status, reason, msg), func() (bool, error) {
		if err := env.Client.Get(context.Background(), key, &cfg); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(cfg.Status.Conditions, typ)
		ok := slices.Equal(allocs(&cfg), want) && c != nil && c.Status == status && c.Reason == reason &&
			strings.Contains(c.Message, msg) && c.ObservedGeneration == cfg.Generation
		return ok, fmt.Errorf("allocations %v, %s %+v", allocs(&cfg), typ, c)
	})
	return &cfg
}

// agentReport applies status.pods as the agent of node does: server-side apply with its own field manager.
func agentReport(t *testing.T, key client.ObjectKey, node string, pods ...v1.PodNetworkStatus) {
	t.Helper()
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1.PodNetworkConfigStatus{Pods: pods})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) == 0 {
		st["pods"] = []any{}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": st}}
	u.SetGroupVersionKind(v1.GroupVersion.WithKind("PodNetworkConfig"))
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	if err := shared.Get(t).Client.Status().Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner("network-agent-"+node)); err != nil {
		t.Fatalf("agent of %s reports %+v: %v", node, pods, err)
	}
}

// TestPodNetworkAllocation: three pods get the pool's three addresses; a fourth waits (Allocated=False
// PoolExhausted naming it); deleting a pod frees its address for the waiting pod, removing a pod's label frees
// it for a new pod; allocations never move while their pods stay. A pod being deleted keeps its address until it
// is gone; pods on the host network or not scheduled get none.
func TestPodNetworkAllocation(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	cfg := podNetworkFixture(t, "pnc-alloc", "pnc-alloc-net", 601)
	key := client.ObjectKeyFromObject(cfg)
	startPodNetworkOperator(t)
	cnf := map[string]string{"app": "cnf"}

	waitPodNetwork(t, key, nil, ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "0 pods have their addresses")
	p1 := createPod(t, "pnc-alloc", "p1", "node-1", cnf)
	p2 := createPod(t, "pnc-alloc", "p2", "node-1", cnf)
	p3 := createPod(t, "pnc-alloc", "p3", "node-2", cnf)
	createPod(t, "pnc-alloc", "unscheduled", "", cnf)
	hostNet := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "pnc-alloc", Name: "hostnet", Labels: cnf},
		Spec: corev1.PodSpec{NodeName: "node-1", HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	if err := env.Client.Create(ctx, hostNet); err != nil {
		t.Fatal(err)
	}
	createPod(t, "pnc-alloc", "other-app", "node-1", map[string]string{"app": "web"})
	three := []string{"p1/net1=10.40.0.70/24", "p2/net1=10.40.0.64/24", "p3/net1=10.40.0.65/24"}
	waitPodNetwork(t, key, three, ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "3 pods have their addresses")

	// A fourth pod: the pool holds three.
	p4 := createPod(t, "pnc-alloc", "p4", "node-2", cnf)
	got := waitPodNetwork(t, key, three, ConditionAllocated, metav1.ConditionFalse, ConditionReasonPoolExhausted,
		"pool exhausted: 1 of 4 pods wait for an address: p4 (net1 IPv4)")
	before := meta.FindStatusCondition(got.Status.Conditions, ConditionAllocated).LastTransitionTime

	// Deleting a pod frees its address; the waiting pod gets it. The others keep theirs.
	deletePod(t, p2)
	waitPodNetwork(t, key, []string{"p1/net1=10.40.0.70/24", "p3/net1=10.40.0.65/24", "p4/net1=10.40.0.64/24"},
		ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "3 pods have their addresses")

	// A pod being deleted keeps its address until it is gone.
	p1.Finalizers = []string{"test.network-operator.io/hold"}
	if err := env.Client.Update(ctx, p1); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, p1, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	createPod(t, "pnc-alloc", "p5", "node-1", cnf)
	got = waitPodNetwork(t, key, []string{"p1/net1=10.40.0.70/24", "p3/net1=10.40.0.65/24", "p4/net1=10.40.0.64/24"},
		ConditionAllocated, metav1.ConditionFalse, ConditionReasonPoolExhausted, "1 of 4 pods wait for an address: p5 (net1 IPv4)")
	if c := meta.FindStatusCondition(got.Status.Conditions, ConditionAllocated); !c.LastTransitionTime.After(before.Time) && c.LastTransitionTime != before {
		t.Errorf("lastTransitionTime went back: %v before %v", c.LastTransitionTime, before)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p1), p1); err != nil {
		t.Fatal(err)
	}
	p1.Finalizers = nil
	if err := env.Client.Update(ctx, p1); err != nil {
		t.Fatal(err)
	}
	waitPodNetwork(t, key, []string{"p3/net1=10.40.0.65/24", "p4/net1=10.40.0.64/24", "p5/net1=10.40.0.70/24"},
		ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "3 pods have their addresses")

	// Removing the label frees the address; a new pod gets it.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p3), p3); err != nil {
		t.Fatal(err)
	}
	p3.Labels = map[string]string{"app": "retired"}
	if err := env.Client.Update(ctx, p3); err != nil {
		t.Fatal(err)
	}
	waitPodNetwork(t, key, []string{"p4/net1=10.40.0.64/24", "p5/net1=10.40.0.70/24"},
		ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "2 pods have their addresses")
	createPod(t, "pnc-alloc", "p6", "node-2", cnf)
	waitPodNetwork(t, key, []string{"p4/net1=10.40.0.64/24", "p5/net1=10.40.0.70/24", "p6/net1=10.40.0.65/24"},
		ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "3 pods have their addresses")

	// A terminated pod frees its address.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p4), p4); err != nil {
		t.Fatal(err)
	}
	setPodPhase(t, p4, corev1.PodSucceeded)
	waitPodNetwork(t, key, []string{"p5/net1=10.40.0.70/24", "p6/net1=10.40.0.65/24"},
		ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "2 pods have their addresses")

	// The interface deleted: its addresses are freed.
	if err := env.Client.Get(ctx, key, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Spec.Interfaces = nil
	cfg.Spec.Primary = &v1.PrimaryInterfaceTuning{MTU: new(int32(1400))}
	if err := env.Client.Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitPodNetwork(t, key, nil, ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "no address pools")
}

// TestPodNetworkStatusOwners: the operator's writes (allocations, conditions) and the agents' (status.pods, one
// field manager per node) do not remove each other's; Applied follows the agents' reports: Pending while a
// running pod's agent has not reported, NotApplied naming the pod and its reason, Applied when all are.
func TestPodNetworkStatusOwners(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	cfg := podNetworkFixture(t, "pnc-owners", "pnc-owners-net", 602)
	key := client.ObjectKeyFromObject(cfg)
	startPodNetworkOperator(t)
	cnf := map[string]string{"app": "cnf"}

	p1 := createPod(t, "pnc-owners", "p1", "node-1", cnf)
	p2 := createPod(t, "pnc-owners", "p2", "node-2", cnf)
	two := []string{"p1/net1=10.40.0.70/24", "p2/net1=10.40.0.64/24"}
	waitPodNetwork(t, key, two, ConditionApplied, metav1.ConditionTrue, ConditionReasonApplied, "applied in 0 running pods")
	setPodPhase(t, p1, corev1.PodRunning)
	setPodPhase(t, p2, corev1.PodRunning)
	waitPodNetwork(t, key, two, ConditionApplied, metav1.ConditionFalse, ConditionReasonPending, "applied in 0 of 2 pods; waiting for the agents of p1, p2")

	// The agents report: their entries do not remove the allocations.
	agentReport(t, key, "node-1", v1.PodNetworkStatus{Name: "p1", Node: "node-1", Applied: true, Interfaces: []string{"net1"}, ObservedGeneration: 1})
	waitPodNetwork(t, key, two, ConditionApplied, metav1.ConditionFalse, ConditionReasonPending, "applied in 1 of 2 pods; waiting for the agents of p2")
	agentReport(t, key, "node-2", v1.PodNetworkStatus{Name: "p2", Node: "node-2", Applied: false, Reason: "ApplyFailed", Message: "veth: file exists"})
	waitPodNetwork(t, key, two, ConditionApplied, metav1.ConditionFalse, ConditionReasonNotApplied,
		"applied in 1 of 2 pods; not in p2 (ApplyFailed: veth: file exists)")
	agentReport(t, key, "node-2", v1.PodNetworkStatus{Name: "p2", Node: "node-2", Applied: true, Interfaces: []string{"net1"}})
	waitPodNetwork(t, key, two, ConditionApplied, metav1.ConditionTrue, ConditionReasonApplied, "applied in 2 running pods")

	// The operator allocates for a new pod: the agents' entries stay.
	createPod(t, "pnc-owners", "p3", "node-1", cnf)
	got := waitPodNetwork(t, key, append(two, "p3/net1=10.40.0.65/24"), ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "3 pods")
	var names []string
	for _, p := range got.Status.Pods {
		names = append(names, p.Name+"@"+p.Node)
	}
	if !slices.Equal(names, []string{"p1@node-1", "p2@node-2"}) {
		t.Errorf("status.pods after the operator's write: %v, want the agents' p1@node-1 and p2@node-2", names)
	}
	managers := map[string]bool{}
	for _, m := range got.ManagedFields {
		if m.Subresource == "status" {
			managers[m.Manager] = true
		}
	}
	for _, m := range []string{PodNetworkFieldManager, "network-agent-node-1", "network-agent-node-2"} {
		if !managers[m] {
			t.Errorf("no status field manager %s: %v", m, managers)
		}
	}

	// A spec change: reports of the old generation no longer count.
	cfg = got
	cfg.Spec.Primary = &v1.PrimaryInterfaceTuning{MTU: new(int32(1400))}
	if err := env.Client.Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitPodNetwork(t, key, append(two, "p3/net1=10.40.0.65/24"), ConditionApplied, metav1.ConditionFalse, ConditionReasonPending, "waiting for the agents of p1")

	// An agent withdrawing its reports leaves the operator's fields.
	agentReport(t, key, "node-1")
	agentReport(t, key, "node-2")
	got = waitPodNetwork(t, key, append(two, "p3/net1=10.40.0.65/24"), ConditionApplied, metav1.ConditionFalse, ConditionReasonPending, "applied in 0 of 2 pods")
	if len(got.Status.Pods) != 0 {
		t.Errorf("status.pods %v after the agents withdrew their reports", got.Status.Pods)
	}
}

// TestPodNetworkWithdrawn: when the administrator withdraws the network (podNamespaceSelector) after admission,
// the interface's addresses are freed and Allocated says NetworkNotAllowed; given back, the pods get addresses
// again. A namespace relabelled out of the selector has the same effect.
func TestPodNetworkWithdrawn(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	cfg := podNetworkFixture(t, "pnc-withdrawn", "pnc-withdrawn-net", 603)
	key := client.ObjectKeyFromObject(cfg)
	startPodNetworkOperator(t)
	createPod(t, "pnc-withdrawn", "p1", "node-1", map[string]string{"app": "cnf"})
	one := []string{"p1/net1=10.40.0.70/24"}
	waitPodNetwork(t, key, one, ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "1 pods")

	var l2 v1.Layer2NetworkConfiguration
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "pnc-withdrawn-net"}, &l2); err != nil {
		t.Fatal(err)
	}
	l2.Spec.PodNamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "b"}}
	if err := env.Client.Update(ctx, &l2); err != nil {
		t.Fatal(err)
	}
	waitPodNetwork(t, key, nil, ConditionAllocated, metav1.ConditionFalse, ConditionReasonNetworkNotAllow, "net1 (network pnc-withdrawn-net)")

	var ns corev1.Namespace
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "pnc-withdrawn"}, &ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels["tenant"] = "b"
	if err := env.Client.Update(ctx, &ns); err != nil {
		t.Fatal(err)
	}
	waitPodNetwork(t, key, one, ConditionAllocated, metav1.ConditionTrue, ConditionReasonAllocated, "1 pods")

	if err := env.Client.Delete(ctx, &l2); err != nil {
		t.Fatal(err)
	}
	waitPodNetwork(t, key, nil, ConditionAllocated, metav1.ConditionFalse, ConditionReasonNetworkNotAllow, "does not exist or no longer admits")
}
