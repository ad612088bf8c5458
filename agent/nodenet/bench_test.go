package nodenet_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// largeSpec has n VRFs with an L3VNI and 4n layer-2 networks.
func largeSpec(n int) *v1alpha1.NodeNetworkConfigSpec {
	s := &v1alpha1.NodeNetworkConfigSpec{Underlay: v1alpha1.UnderlaySpec{VTEPAddress: "192.0.2.1"}}
	for i := range n {
		name := fmt.Sprintf("vrf%d", i)
		s.VRFs = append(s.VRFs, v1alpha1.NodeVRF{Name: name, ID: int32(i + 1), TableID: int32(1000 + i), VNI: int32(10000 + i)})
		for j := range 4 {
			k := i*4 + j
			s.Layer2s = append(s.Layer2s, v1alpha1.NodeLayer2{
				Name: fmt.Sprintf("l2-%d", k), VLAN: int32(k + 1), VNI: int32(20000 + k), MTU: 1500, VRF: name,
				AnycastMAC: "02:00:00:00:00:01", AnycastGateways: []string{fmt.Sprintf("10.%d.%d.1/24", k/256, k%256)},
			})
		}
	}
	return s
}

// BenchmarkComputePlanNoop measures the pure diff of a converged node with 50 VRFs and 200 L2 networks.
func BenchmarkComputePlanNoop(b *testing.B) {
	d, err := nodenet.BuildDesired(largeSpec(50), nodenet.Settings{}, noVRFKernel)
	if err != nil {
		b.Fatal(err)
	}
	o := observedAfter(d)
	b.ReportAllocs()
	for b.Loop() {
		if p := nodenet.ComputePlan(d, o); !p.Empty() {
			b.Fatalf("not empty:\n%s", p)
		}
	}
}

// BenchmarkApplyAndReplan measures, in a namespace, applying 10 VRFs + 40 L2 networks from scratch (reported as
// apply-ms) and then the steady-state cost of a full Plan (observe + diff) on the converged node.
func BenchmarkApplyAndReplan(b *testing.B) {
	l := lab.New(b)
	ns, err := l.AddNamespace("nc")
	if err != nil {
		b.Fatal(err)
	}
	m, err := nodenet.New(ns.Handle(), nodenet.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	spec := largeSpec(10)
	p, err := m.Plan(ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for _, ph := range nodenet.Phases() {
		if _, err := m.Apply(ctx, p, ph); err != nil {
			b.Fatal(err)
		}
	}
	applied := time.Since(start)
	b.ResetTimer()
	for b.Loop() {
		p, err := m.Plan(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		if !p.Empty() {
			b.Fatalf("not converged:\n%s", p)
		}
	}
	b.ReportMetric(float64(applied.Microseconds())/1000, "apply-ms")
	b.ReportMetric(float64(len(p.Actions)), "actions")
}
