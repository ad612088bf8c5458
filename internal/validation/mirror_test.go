package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func TestValidateRoutingTable(t *testing.T) {
	table := func(name string, id int64) *v1.RoutingTable {
		return &v1.RoutingTable{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.RoutingTableSpec{TableID: id}}
	}
	snap := &Snapshot{RoutingTables: []v1.RoutingTable{*table("taas-a", 100)}}
	tests := []struct {
		name string
		obj  *v1.RoutingTable
		snap *Snapshot
		want [][]string
	}{
		{name: "good", obj: table("x", 101), snap: snap},
		{name: "update of itself", obj: table("taas-a", 100), snap: snap},
		{name: "taken", obj: table("x", 100), snap: snap, want: [][]string{{`spec.tableId: Invalid value: 100`, `RoutingTable "taas-a"`}}},
		{name: "main table", obj: table("x", 254), want: [][]string{{`spec.tableId: Invalid value: 254`, "254 main", "pick another"}}},
		{name: "zero", obj: table("x", 0), want: [][]string{{`spec.tableId: Invalid value: 0`, "1..1000000000"}}},
		{name: "VRF table range", obj: table("x", 1000001234), want: [][]string{{`spec.tableId: Invalid value: 1000001234`, "below the VRF tables"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrs(t, ValidateRoutingTable(tt.obj, tt.snap), tt.want) })
	}
}

func TestValidateMirrorTarget(t *testing.T) {
	target := func(mut func(*v1.MirrorTargetSpec)) *v1.MirrorTarget {
		o := &v1.MirrorTarget{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: v1.MirrorTargetSpec{
			Type: v1.MirrorTargetL3GRE, DestinationIP: "203.0.113.10", DestinationVrf: "example", SourceLoopback: "lo.mir"}}
		if mut != nil {
			mut(&o.Spec)
		}
		return o
	}
	tests := []struct {
		name string
		obj  *v1.MirrorTarget
		want [][]string
	}{
		{name: "das-schiff sample", obj: target(nil)},
		{name: "l2gre with key, IPv6", obj: target(func(s *v1.MirrorTargetSpec) {
			s.Type, s.TunnelKey, s.DestinationIP = v1.MirrorTargetL2GRE, ptr.To[int64](4294967295), "fd00:99::10"
		})},
		{name: "bad", obj: target(func(s *v1.MirrorTargetSpec) {
			s.Type, s.DestinationIP, s.TunnelKey, s.DestinationVrf, s.SourceLoopback = "vxlan", "224.0.0.1", ptr.To[int64](-1), "cluster", "lo mir"
		}), want: [][]string{{`spec.type: Unsupported value: "vxlan"`}, {`spec.destinationIP: Invalid value: "224.0.0.1"`},
			{`spec.key: Invalid value: -1`}, {`spec.destinationVrf: Invalid value: "cluster"`, "VRFRouteConfiguration"},
			{`spec.sourceLoopback: Invalid value: "lo mir"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrs(t, ValidateMirrorTarget(tt.obj), tt.want) })
	}
}

func TestValidateMirrorSelector(t *testing.T) {
	sel := func(mut func(*v1.MirrorSelectorSpec)) *v1.MirrorSelector {
		o := &v1.MirrorSelector{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: v1.MirrorSelectorSpec{
			Direction:    v1.MirrorIngress,
			MirrorTarget: corev1.TypedObjectReference{Kind: "MirrorTarget", Name: "c"},
			MirrorSource: corev1.TypedObjectReference{Kind: "Layer2NetworkConfiguration", Name: "l2"},
		}}
		if mut != nil {
			mut(&o.Spec)
		}
		return o
	}
	tests := []struct {
		name string
		obj  *v1.MirrorSelector
		want [][]string
	}{
		{name: "das-schiff sample", obj: sel(nil)},
		{name: "match", obj: sel(func(s *v1.MirrorSelectorSpec) {
			s.TrafficMatch = v1.TrafficMatch{SrcPrefix: ptr.To("10.0.0.0/8"), DstPrefix: ptr.To("10.1.0.0/16"), Protocol: ptr.To("tcp"), DstPort: ptr.To[int32](443)}
			s.MirrorSource = corev1.TypedObjectReference{APIGroup: ptr.To(v1.GroupVersion.Group), Kind: "VRFRouteConfiguration", Name: "v"}
		})},
		{name: "bad", obj: sel(func(s *v1.MirrorSelectorSpec) {
			s.Direction = "both"
			s.MirrorTarget = corev1.TypedObjectReference{APIGroup: ptr.To("network.t-caas.telekom.com"), Kind: "Collector", Name: "c", Namespace: ptr.To("ns")}
			s.MirrorSource.Kind = "Pod"
			s.TrafficMatch = v1.TrafficMatch{SrcPrefix: ptr.To("10.0.0.1/8"), Protocol: ptr.To("gre"), SrcPort: ptr.To[int32](80)}
		}), want: [][]string{{`spec.direction: Unsupported value: "both"`}, {`spec.mirrorTarget.kind: Unsupported value: "Collector"`},
			{`spec.mirrorSource.kind: Unsupported value: "Pod"`}, {`spec.mirrorTarget.apiGroup: Invalid value: "network.t-caas.telekom.com"`, "leave apiGroup out"},
			{`spec.mirrorTarget.namespace: Invalid value: "ns"`}, {`spec.trafficMatch.srcPrefix: Invalid value: "10.0.0.1/8"`, "10.0.0.0/8"},
			{`spec.trafficMatch.protocol: Invalid value: "gre"`}, {`spec.trafficMatch.srcPort: Invalid value: 80`, "write trafficMatch.protocol"}}},
		{name: "mixed families", obj: sel(func(s *v1.MirrorSelectorSpec) {
			s.TrafficMatch = v1.TrafficMatch{SrcPrefix: ptr.To("10.0.0.0/8"), DstPrefix: ptr.To("fd00::/8")}
		}), want: [][]string{{`spec.trafficMatch.dstPrefix: Invalid value: "fd00::/8"`, "address family"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrs(t, ValidateMirrorSelector(tt.obj), tt.want) })
	}
}
