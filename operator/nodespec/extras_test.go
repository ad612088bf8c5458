package nodespec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// dasSchiffRevision has every das-schiff addition: sbrPrefixes, loopbacks, multi-value communities,
// disableSegmentation, a RoutingTable and a mirror of a Layer2 network into a GRE tunnel of VRF "Mir".
func dasSchiffRevision() *v1.NetworkConfigRevisionSpec {
	blue := vrf("blue", "blue", 2000, 10)
	blue.SBRPrefixes = []string{"10.12.0.0/16", "10.11.0.0/16"}
	blue.Communities = []string{"65000:1 65000:2", "65000:2 additive"}
	blue2 := vrf("blue-2", "blue", 2000, 20)
	blue2.SBRPrefixes = []string{"10.11.0.0/16"}
	mir := vrf("mir", "Mir", 2100, 10)
	mir.Loopbacks = []v1.VRFLoopback{{Name: "lo.mir", Subnet: "10.250.0.0/24"}}
	l2 := v1.Layer2Revision{Name: "web"}
	l2.ID, l2.VNI, l2.VRF, l2.DisableSegmentation = 10, 5010, "blue", true
	return &v1.NetworkConfigRevisionSpec{
		Revision: strings.Repeat("a", 64),
		VRF:      []v1.VRFRevision{blue, blue2, mir},
		Layer2:   []v1.Layer2Revision{l2},
		RoutingTables: []v1.RoutingTableRevision{
			{Name: "t200", RoutingTableSpec: v1.RoutingTableSpec{TableID: 200}},
			{Name: "t100", RoutingTableSpec: v1.RoutingTableSpec{TableID: 100}},
		},
		MirrorTargets: []v1.MirrorTargetRevision{{Name: "collector", MirrorTargetSpec: v1.MirrorTargetSpec{
			Type: v1.MirrorTargetL3GRE, DestinationIP: "203.0.113.10", TunnelKey: new(int64(7)), DestinationVrf: "Mir", SourceLoopback: "lo.mir"}}},
		MirrorSelectors: []v1.MirrorSelectorRevision{{Name: "m", MirrorSelectorSpec: v1.MirrorSelectorSpec{
			Direction:    v1.MirrorEgress,
			TrafficMatch: v1.TrafficMatch{Protocol: new("tcp"), DstPort: new(int32(443))},
			MirrorTarget: corev1.TypedObjectReference{Kind: v1.KindMirrorTarget, Name: "collector"},
			MirrorSource: corev1.TypedObjectReference{Kind: v1.KindLayer2NetworkConfiguration, Name: "web"}}}},
	}
}

func TestBuildDasSchiffFields(t *testing.T) {
	spec, err := Build(dasSchiffRevision(), node("n1", nil, nil), nil, Options{Underlay: Underlay{ASN: 65001}})
	if err != nil {
		t.Fatal(err)
	}
	blue := vrfByName(spec, "blue")
	if !slices.Equal(blue.SBRPrefixes, []string{"10.11.0.0/16", "10.12.0.0/16"}) {
		t.Errorf("sbrPrefixes %v, want both configurations' sorted without repeats", blue.SBRPrefixes)
	}
	if l := blue.Leaks[0]; !slices.Equal(l.Communities, []string{"65000:1", "65000:2"}) || !l.AdditiveCommunities {
		t.Errorf("communities %v additive %t, want single communities and additive", l.Communities, l.AdditiveCommunities)
	}
	if mir := vrfByName(spec, "Mir"); len(mir.Loopbacks) != 1 || mir.Loopbacks[0] != (v1.NodeLoopback{Name: "lo.mir", Subnet: "10.250.0.0/24"}) {
		t.Errorf("loopbacks %+v", mir.Loopbacks)
	}
	if !spec.Layer2s[0].DisableSegmentation {
		t.Error("disableSegmentation lost")
	}
	if want := []v1.NodeRoutingTable{{Name: "taas.100", TableID: 100}, {Name: "taas.200", TableID: 200}}; !slices.Equal(spec.RoutingTables, want) {
		t.Errorf("routing tables %+v, want %+v", spec.RoutingTables, want)
	}
	if len(spec.Mirrors) != 1 {
		t.Fatalf("mirrors %+v", spec.Mirrors)
	}
	m := spec.Mirrors[0]
	if m.Layer2 != "web" || m.VRF != "" || m.Direction != v1.MirrorEgress || *m.Match.DstPort != 443 ||
		m.Target != (v1.NodeMirrorTarget{Name: "collector", Type: v1.MirrorTargetL3GRE, DestinationIP: "203.0.113.10", Key: m.Target.Key, VRF: "Mir", SourceLoopback: "lo.mir"}) || *m.Target.Key != 7 {
		t.Errorf("mirror %+v", m)
	}
}

// A mirror whose source is not on the node is skipped; one whose target's VRF is not on the node fails the build.
func TestBuildMirrorPlacement(t *testing.T) {
	rev := dasSchiffRevision()
	rev.Layer2[0].NodeSelector = sel("role", "web")
	spec, err := Build(rev, node("n1", nil, nil), nil, Options{Underlay: Underlay{ASN: 65001}})
	if err != nil || len(spec.Mirrors) != 0 {
		t.Fatalf("source not on the node: mirrors %+v, err %v", spec.Mirrors, err)
	}
	rev = dasSchiffRevision()
	rev.VRF[2].NodeSelector = sel("role", "mirror")
	_, err = Build(rev, node("n1", nil, nil), nil, Options{Underlay: Underlay{ASN: 65001}})
	if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), `mirrorTarget[collector].destinationVrf: Invalid value: "Mir"`) {
		t.Fatalf("target VRF not on the node: %v", err)
	}
}

func TestHoldBack(t *testing.T) {
	rev := dasSchiffRevision()
	rev.VRF = rev.VRF[:2] // no VRF Mir: the target, then the selector wait
	rev.Layer2 = append(rev.Layer2, v1.Layer2Revision{Name: "orphan"})
	rev.Layer2[1].ID, rev.Layer2[1].VNI, rev.Layer2[1].VRF = 11, 5011, "green"
	rev.BGP = []v1.BGPRevision{{Name: "on-orphan", BGPPeeringSpec: v1.BGPPeeringSpec{PeeringVlan: &v1.BGPPeeringVLAN{Name: "orphan"}, RemoteASN: 65100}},
		{Name: "on-web", BGPPeeringSpec: v1.BGPPeeringSpec{PeeringVlan: &v1.BGPPeeringVLAN{Name: "web"}, RemoteASN: 65100}}}
	held := HoldBack(rev)
	var got []string
	for _, h := range held {
		got = append(got, h.Kind+"/"+h.Name+": "+h.Reason)
	}
	want := []string{
		`BGPPeering/on-orphan: peeringVlan: Layer2NetworkConfiguration "orphan" does not exist or is held back`,
		`BGPPeering/on-web: peeringVlan: Layer2NetworkConfiguration "web" has no anycastGateways to listen on`,
		`Layer2NetworkConfiguration/orphan: VRF "green" is not defined by any VRFRouteConfiguration`,
		`MirrorSelector/m: mirrorTarget: MirrorTarget "collector" does not exist or is held back`,
		`MirrorTarget/collector: destinationVrf: VRF "Mir" is not defined by any VRFRouteConfiguration`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("held:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(rev.Layer2) != 1 || len(rev.BGP) != 0 || len(rev.MirrorTargets) != 0 || len(rev.MirrorSelectors) != 0 {
		t.Errorf("left in the revision: %+v", rev)
	}
	if _, err := Build(rev, node("n1", nil, nil), nil, Options{Underlay: Underlay{ASN: 65001}}); err != nil {
		t.Errorf("what is left must build: %v", err)
	}
	if held := HoldBack(dasSchiffRevision()); len(held) != 0 {
		t.Errorf("complete revision held %+v", held)
	}
}
