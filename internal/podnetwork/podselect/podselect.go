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

// Package podselect decides which pods a PodNetworkConfig applies to: the one rule the operator (addresses,
// condition Applied) and the node agents (what they configure) share. It is pure.
package podselect

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Selector is the PodNetworkConfig's pod selector (admission refuses one that does not parse).
func Selector(cfg *v1.PodNetworkConfig) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(&cfg.Spec.PodSelector)
	if err != nil {
		return nil, fmt.Errorf("podSelector of PodNetworkConfig %s/%s: %w", cfg.Namespace, cfg.Name, err)
	}
	return sel, nil
}

// Selects reports whether the PodNetworkConfig (sel: its Selector) applies to pod: a pod of its namespace whose
// labels sel matches, scheduled to a node, not on the host network (its namespace is the node's: no tenant
// configures that), and not terminated (phase Succeeded or Failed). A pod being deleted is still selected: its
// containers may run through the grace period, so it keeps its addresses until it is gone.
func Selects(cfg *v1.PodNetworkConfig, sel labels.Selector, pod *corev1.Pod) bool {
	return pod.Namespace == cfg.Namespace && sel.Matches(labels.Set(pod.Labels)) && pod.Spec.NodeName != "" &&
		!pod.Spec.HostNetwork && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}
