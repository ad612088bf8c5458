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

package podselect

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func TestSelects(t *testing.T) {
	cfg := &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "cnf"},
		Spec: v1.PodNetworkConfigSpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "cnf"}}}}
	sel, err := Selector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	for _, tt := range []struct {
		name string
		mut  func(*corev1.Pod)
		want bool
	}{
		{name: "scheduled and labelled", want: true},
		{name: "running", mut: func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, want: true},
		{name: "being deleted keeps it", mut: func(p *corev1.Pod) { p.DeletionTimestamp = &now }, want: true},
		{name: "not scheduled", mut: func(p *corev1.Pod) { p.Spec.NodeName = "" }},
		{name: "label gone", mut: func(p *corev1.Pod) { p.Labels = nil }},
		{name: "other label value", mut: func(p *corev1.Pod) { p.Labels["app"] = "web" }},
		{name: "other namespace", mut: func(p *corev1.Pod) { p.Namespace = "tenant-b" }},
		{name: "host network", mut: func(p *corev1.Pod) { p.Spec.HostNetwork = true }},
		{name: "succeeded", mut: func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }},
		{name: "failed", mut: func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "p", Labels: map[string]string{"app": "cnf"}},
				Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
			if tt.mut != nil {
				tt.mut(pod)
			}
			if got := Selects(cfg, sel, pod); got != tt.want {
				t.Errorf("Selects = %t, want %t", got, tt.want)
			}
		})
	}
	cfg.Spec.PodSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}
	if _, err := Selector(cfg); err == nil {
		t.Error("a selector with operator Near parsed")
	}
}
