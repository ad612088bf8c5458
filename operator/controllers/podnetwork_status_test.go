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
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/podnetwork/podaddr"
	"github.com/network-operator/network-operator/operator/podnetwork/podalloc"
)

func TestAllocatedCondition(t *testing.T) {
	var many []podalloc.Missing
	for i := range 7 {
		many = append(many, podalloc.Missing{Pod: fmt.Sprintf("p%d", i), Interface: "net1", Family: podaddr.IPv6})
	}
	for _, tt := range []struct {
		name     string
		problems interfaceProblems
		missing  []podalloc.Missing
		pods     int
		pools    bool
		status   metav1.ConditionStatus
		reason   string
		message  string
	}{
		{name: "all", pods: 3, pools: true, status: metav1.ConditionTrue, reason: ConditionReasonAllocated, message: "3 pods have their addresses"},
		{name: "no pools", pods: 3, status: metav1.ConditionTrue, reason: ConditionReasonAllocated, message: "no address pools"},
		{name: "exhausted", pods: 4, pools: true, missing: []podalloc.Missing{{Pod: "p4", Interface: "net1", Family: podaddr.IPv4}, {Pod: "p4", Interface: "net1", Family: podaddr.IPv6}},
			status: metav1.ConditionFalse, reason: ConditionReasonPoolExhausted, message: "pool exhausted: 1 of 4 pods wait for an address: p4 (net1 IPv4, net1 IPv6)"},
		{name: "exhausted, many", pods: 9, pools: true, missing: many, status: metav1.ConditionFalse, reason: ConditionReasonPoolExhausted,
			message: "pool exhausted: 7 of 9 pods wait for an address: p0 (net1 IPv6), p1 (net1 IPv6), p2 (net1 IPv6), p3 (net1 IPv6), p4 (net1 IPv6) and 2 more"},
		{name: "not admitted first", pods: 1, pools: true, missing: many, problems: interfaceProblems{notAdmitted: []string{"net2 (network b)"}, invalid: []string{"x"}},
			status: metav1.ConditionFalse, reason: ConditionReasonNetworkNotAllow, message: "no addresses for interfaces whose network does not exist or no longer admits the namespace: net2 (network b)"},
		{name: "invalid pool", pods: 1, pools: true, problems: interfaceProblems{invalid: []string{"spec.interfaces[0].addresses.ranges[0]: ..."}},
			status: metav1.ConditionFalse, reason: ConditionReasonPoolInvalid, message: "no addresses from pools that no longer fit their network: spec.interfaces[0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := allocatedCondition(7, tt.problems, tt.missing, tt.pods, tt.pools)
			if c.Type != ConditionAllocated || c.Status != tt.status || c.Reason != tt.reason || c.ObservedGeneration != 7 || !startsWith(c.Message, tt.message) {
				t.Errorf("%+v\nwant %s %s %q", c, tt.status, tt.reason, tt.message)
			}
		})
	}
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func TestPodAppliedCondition(t *testing.T) {
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	running := []*corev1.Pod{pod("a", "n1"), pod("b", "n2")}
	ok := func(name, node string, gen int64) v1.PodNetworkStatus {
		return v1.PodNetworkStatus{Name: name, Node: node, Applied: true, ObservedGeneration: gen}
	}
	for _, tt := range []struct {
		name    string
		running []*corev1.Pod
		reports []v1.PodNetworkStatus
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{name: "no running pod", status: metav1.ConditionTrue, reason: ConditionReasonApplied, message: "applied in 0 running pods"},
		{name: "none reports", running: running, status: metav1.ConditionFalse, reason: ConditionReasonPending, message: "applied in 0 of 2 pods; waiting for the agents of a, b"},
		{name: "all", running: running, reports: []v1.PodNetworkStatus{ok("a", "n1", 3), ok("b", "n2", 0)}, status: metav1.ConditionTrue, reason: ConditionReasonApplied, message: "applied in 2 running pods"},
		{name: "an old generation waits", running: running, reports: []v1.PodNetworkStatus{ok("a", "n1", 2), ok("b", "n2", 3)},
			status: metav1.ConditionFalse, reason: ConditionReasonPending, message: "applied in 1 of 2 pods; waiting for the agents of a"},
		{name: "another node's report waits", running: running, reports: []v1.PodNetworkStatus{ok("a", "n9", 3), ok("b", "n2", 3)},
			status: metav1.ConditionFalse, reason: ConditionReasonPending, message: "applied in 1 of 2 pods; waiting for the agents of a"},
		{name: "failed", running: running, reports: []v1.PodNetworkStatus{{Name: "a", Node: "n1", Reason: "NetworkNotOnNode", Message: "network x is not on node n1"}},
			status: metav1.ConditionFalse, reason: ConditionReasonNotApplied, message: "applied in 0 of 2 pods; not in a (NetworkNotOnNode: network x is not on node n1); 1 waiting for their node's agent"},
		{name: "reports of pods not running do not count", running: running[:1], reports: []v1.PodNetworkStatus{ok("a", "n1", 3), {Name: "b", Node: "n2", Reason: "PodNotRunning"}},
			status: metav1.ConditionTrue, reason: ConditionReasonApplied, message: "applied in 1 running pods"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := podAppliedCondition(3, tt.running, tt.reports)
			if c.Type != ConditionApplied || c.Status != tt.status || c.Reason != tt.reason || c.Message != tt.message || c.ObservedGeneration != 3 {
				t.Errorf("%+v\nwant %s %s %q", c, tt.status, tt.reason, tt.message)
			}
		})
	}
}
