package controllers

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// BenchmarkRollout100Nodes measures one content change rolled out to 100 simulated nodes (seeded agent
// delays of 10-80 ms, every 9th node 300 ms more; maxUnavailable 10%; debounce 100 ms), from the change
// to the revision being Done.
//
//	go test -run '^$' -bench BenchmarkRollout100Nodes -benchtime 3x ./operator/controllers/
func BenchmarkRollout100Nodes(b *testing.B) {
	env := shared.Get(b)
	resetCluster(b)
	createNodes(b, 100)
	startAgents(b, seededAgents(42))
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromString("10%")
	startOperator(b, opts, runBoth)
	if err := env.Client.Create(context.Background(), vrfConfig("blue", "blue", 100, 10)); err != nil {
		b.Fatal(err)
	}
	var last *v1.NetworkConfigRevision
	waitFor(b, time.Minute, "the first revision with content", func() (bool, error) {
		last = newestRevision(listRevisions(b))
		return last != nil && len(last.Spec.VRF) == 1, nil
	})
	waitPhase(b, 2*time.Minute, last.Name, v1.RevisionDone)

	vni := int32(1000)
	var total time.Duration
	count0, sum0 := reconcileTime(b, "rollout")
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		vni++
		setVNI(b, "blue", vni)
		last = waitRevision(b, last.Spec.Sequence+1)
		waitPhase(b, 2*time.Minute, last.Name, v1.RevisionDone)
		total += time.Since(start)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/rollout")
	count, sum := reconcileTime(b, "rollout")
	b.ReportMetric(float64(count-count0)/float64(b.N), "reconciles/rollout")
	b.ReportMetric((sum-sum0)/float64(count-count0)*1e3, "ms/reconcile")
}

// reconcileTime reads controller-runtime's reconcile time histogram of a controller: samples and sum.
func reconcileTime(b *testing.B, controller string) (uint64, float64) {
	b.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return 0, 0
}
