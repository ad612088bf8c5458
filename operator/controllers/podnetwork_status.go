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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/podnetwork/podalloc"
)

// The condition Allocated of a PodNetworkConfig: True when every selected pod has an address of every family of
// every pool; False with reason NetworkNotAllowed (an interface's network is gone or no longer admits the
// namespace: the administrator withdrew it after admission; its pods get no addresses for it), PoolInvalid (a
// pool no longer fits its network's subnets, e.g. after a gateway change) or PoolExhausted (naming the pods that
// wait for an address), in that order. The condition Applied (ConditionApplied, shared with the mirrors) says what
// the agents report in status.pods.
const (
	ConditionAllocated             = "Allocated"
	ConditionReasonAllocated       = "Allocated"
	ConditionReasonNetworkNotAllow = "NetworkNotAllowed"
	ConditionReasonPoolInvalid     = "PoolInvalid"
	ConditionReasonPoolExhausted   = "PoolExhausted"
)

// maxNamedPods bounds the pods (or interfaces) a condition message names.
const maxNamedPods = 5

// interfaceProblems are the interfaces of a PodNetworkConfig that get no addresses whatever the pods.
type interfaceProblems struct {
	notAdmitted []string // "net2 (network shared)"
	invalid     []string // the first error of each invalid pool
}

// named joins at most maxNamedPods items (sorted), saying how many more there are.
func named(items []string) string {
	items = slices.Clone(items)
	slices.Sort(items)
	s := strings.Join(items[:min(len(items), maxNamedPods)], ", ")
	if len(items) > maxNamedPods {
		s += fmt.Sprintf(" and %d more", len(items)-maxNamedPods)
	}
	if len(s) > 4096 {
		s = s[:4093] + "..."
	}
	return s
}

// allocatedCondition is Allocated from the interfaces' problems, what the plan could not hand out, the number of
// selected pods and whether any interface has a pool.
func allocatedCondition(generation int64, p interfaceProblems, missing []podalloc.Missing, pods int, pools bool) metav1.Condition {
	c := metav1.Condition{Type: ConditionAllocated, ObservedGeneration: generation, Status: metav1.ConditionFalse}
	byPod := map[string][]string{}
	for _, m := range missing {
		byPod[m.Pod] = append(byPod[m.Pod], m.Interface+" "+m.Family.String())
	}
	var waiting []string
	for pod, what := range byPod {
		waiting = append(waiting, pod+" ("+strings.Join(what, ", ")+")")
	}
	switch {
	case len(p.notAdmitted) > 0:
		c.Reason = ConditionReasonNetworkNotAllow
		c.Message = "no addresses for interfaces whose network does not exist or no longer admits the namespace: " + named(p.notAdmitted)
	case len(p.invalid) > 0:
		c.Reason = ConditionReasonPoolInvalid
		c.Message = "no addresses from pools that no longer fit their network: " + named(p.invalid)
	case len(waiting) > 0:
		c.Reason = ConditionReasonPoolExhausted
		c.Message = fmt.Sprintf("pool exhausted: %d of %d pods wait for an address: %s", len(waiting), pods, named(waiting))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ConditionReasonAllocated
		switch {
		case !pools:
			c.Message = "no address pools"
		default:
			c.Message = fmt.Sprintf("%d pods have their addresses", pods)
		}
	}
	return c
}

// podAppliedCondition is Applied: True when the agent of every running selected pod's node reports it applied
// (for the current generation, when the agent says which it applied); False with reason NotApplied naming the
// pods reported not applied with their reasons, or Pending while pods wait for their agent's report. No running
// pod is True: there is nothing to apply. A report of another node (a pod of that name elsewhere) does not count.
func podAppliedCondition(generation int64, running []*corev1.Pod, reports []v1.PodNetworkStatus) metav1.Condition {
	c := metav1.Condition{Type: ConditionApplied, ObservedGeneration: generation, Status: metav1.ConditionFalse}
	byName := map[string]*v1.PodNetworkStatus{}
	for i := range reports {
		byName[reports[i].Name] = &reports[i]
	}
	var applied int
	var failed, waiting []string
	for _, pod := range running {
		r := byName[pod.Name]
		switch {
		case r == nil || r.Node != pod.Spec.NodeName || (r.ObservedGeneration != 0 && r.ObservedGeneration < generation):
			waiting = append(waiting, pod.Name)
		case r.Applied:
			applied++
		default:
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", pod.Name, r.Reason, r.Message))
		}
	}
	total := len(running)
	switch {
	case len(failed) > 0:
		c.Reason = ConditionReasonNotApplied
		c.Message = fmt.Sprintf("applied in %d of %d pods; not in %s", applied, total, named(failed))
		if len(waiting) > 0 {
			c.Message += fmt.Sprintf("; %d waiting for their node's agent", len(waiting))
		}
	case len(waiting) > 0:
		c.Reason = ConditionReasonPending
		c.Message = fmt.Sprintf("applied in %d of %d pods; waiting for the agents of %s", applied, total, named(waiting))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ConditionReasonApplied
		c.Message = fmt.Sprintf("applied in %d running pods", total)
	}
	if len(c.Message) > 32768 {
		c.Message = c.Message[:32765] + "..."
	}
	return c
}
