package nodespec

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/golden"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func node(name string, lbls map[string]string, ann map[string]string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls, Annotations: ann}}
	n.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: name},
		{Type: corev1.NodeInternalIP, Address: "fd00::1"},
		{Type: corev1.NodeInternalIP, Address: "192.0.2.10"},
	}
	return n
}

func sel(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

func vrf(name, vrfName string, vni int32, seq int32) v1.VRFRevision {
	r := v1.VRFRevision{Name: name}
	r.VRF, r.Seq = vrfName, seq
	if vni != 0 {
		r.VNI = new(vni)
	}
	return r
}

func opts() Options {
	return Options{
		Underlay: Underlay{ASN: 65001, Interfaces: []string{"eth1", "eth2"}},
		Interfaces: []v1.DataPlaneInterface{
			{Name: "eth3", VLAN: 100, VRF: "blue", Mode: v1.ModeRoute},
			{Name: "eth3", VLAN: 200, VRF: "red", Mode: v1.ModePass},
		},
	}
}

// fullRevision exercises every resource kind and the selection rules.
func fullRevision(t *testing.T) *v1.NetworkConfigRevisionSpec {
	t.Helper()
	blue1 := vrf("blue-a", "blue", 2000, 20)
	blue1.Import = []v1.PrefixItem{{CIDR: "10.1.0.0/16", Action: v1.PrefixActionPermit}, {CIDR: "10.2.0.0/16", Seq: 5, Action: v1.PrefixActionDeny}}
	blue1.Export = []v1.PrefixItem{{CIDR: "0.0.0.0/0", LE: new(int32(32)), Action: v1.PrefixActionPermit}}
	blue1.Aggregate = []string{"10.1.0.0/16", "10.0.0.0/8"}
	blue1.Community = new("65000:1")
	blue1.MTU = new(int32(1500))
	blue2 := vrf("blue-b", "blue", 2000, 10)
	blue2.Aggregate = []string{"10.0.0.0/8"}
	blue2.MTU = new(int32(9000))
	blue2.RouteTarget = new("65000:2000")
	red := vrf("red", "red", 1000, 10)
	red.NodeSelector = sel("zone", "a")
	cluster := vrf("cluster-exports", "cluster", 0, 30)

	l2 := v1.Layer2Revision{Name: "web"}
	l2.ID, l2.VNI, l2.VRF, l2.AnycastMac = 100, 100100, "blue", "02:00:00:00:00:01"
	l2.AnycastGateways = []string{"10.1.2.1/24", "fd10::1/64"}
	l2.NeighSuppression = new(true)
	l2only := v1.Layer2Revision{Name: "storage"}
	l2only.ID, l2only.VNI, l2only.MTU = 200, 100200, 9000
	l2only.NodeSelector = sel("storage", "yes")

	web := v1.BGPRevision{Name: "web-peers"}
	web.PeeringVlan = &v1.BGPPeeringVLAN{Name: "web"}
	web.RemoteASN = 65100
	web.HoldTime = &metav1.Duration{Duration: 9 * time.Second}
	web.PasswordSecretRef = &v1.SecretKeyReference{Namespace: "ns", Name: "bgp", Key: "password"}
	stor := v1.BGPRevision{Name: "storage-peers"}
	stor.PeeringVlan = &v1.BGPPeeringVLAN{Name: "storage"}
	stor.RemoteASN = 65200
	lb := v1.BGPRevision{Name: "lb"}
	lb.LoopbackPeer = &v1.BGPPeeringLoopback{IPAddresses: []string{"192.0.2.200"}}
	lb.RemoteASN = 65300
	lb.Export = []v1.PrefixItem{{CIDR: "192.0.2.0/24", Action: v1.PrefixActionPermit}}

	rev := &v1.NetworkConfigRevisionSpec{
		Sequence: 1,
		VRF:      []v1.VRFRevision{red, cluster, blue2, blue1},
		Layer2:   []v1.Layer2Revision{l2only, l2},
		BGP:      []v1.BGPRevision{web, lb, stor},
	}
	h, err := rev.ContentHash()
	if err != nil {
		t.Fatal(err)
	}
	rev.Revision = h
	return rev
}

// TestBuildGolden renders a full spec for a node in zone a; run with -update to rewrite.
func TestBuildGolden(t *testing.T) {
	rev := fullRevision(t)
	n := node("worker-1", map[string]string{"zone": "a"}, map[string]string{AnnotationVTEPAddress: "198.51.100.10"})
	spec, err := Build(rev, n, nil, opts())
	if err != nil {
		t.Fatal(err)
	}
	if spec.ExpectedMapVersion != spec.MapVersion() || len(spec.ExpectedMapVersion) != 64 {
		t.Fatalf("expectedMapVersion %q, MapVersion() %q", spec.ExpectedMapVersion, spec.MapVersion())
	}
	got, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "worker-1.golden.yaml"), got)
	if strings.Contains(string(got), "password:") {
		t.Fatal("spec contains a password value")
	}
}

func vrfByName(spec v1.NodeNetworkConfigSpec, name string) *v1.NodeVRF {
	for i := range spec.VRFs {
		if spec.VRFs[i].Name == name {
			return &spec.VRFs[i]
		}
	}
	return nil
}

func TestBuildSelection(t *testing.T) {
	rev := fullRevision(t)
	tests := []struct {
		name       string
		labels     map[string]string
		wantVRFs   []string
		wantL2     []string
		wantPeers  []string
		wantIfaces []string
	}{
		{"no labels", nil, []string{"blue", "cluster"}, []string{"web"}, []string{"lb", "web-peers"},
			[]string{"br.blue", "eth3.100", "vx.blue"}},
		{"zone a", map[string]string{"zone": "a"}, []string{"blue", "cluster", "red"}, []string{"web"}, []string{"lb", "web-peers"},
			[]string{"br.blue", "br.red", "eth3.100", "eth3.200", "vx.blue", "vx.red"}},
		{"storage", map[string]string{"storage": "yes"}, []string{"blue", "cluster"}, []string{"storage", "web"},
			[]string{"lb", "storage-peers", "web-peers"}, []string{"br.blue", "eth3.100", "vx.blue"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Build(rev, node("n", tc.labels, nil), nil, opts())
			if err != nil {
				t.Fatal(err)
			}
			var vrfs, l2s, peers, ifaces []string
			for _, v := range spec.VRFs {
				vrfs = append(vrfs, v.Name)
			}
			for _, l := range spec.Layer2s {
				l2s = append(l2s, l.Name)
			}
			for _, p := range spec.BGPPeers {
				peers = append(peers, p.Name)
			}
			for _, i := range spec.DataPlane.Interfaces {
				n := i.Name
				if i.VLAN != 0 {
					n += "." + strconv.Itoa(int(i.VLAN))
				}
				ifaces = append(ifaces, n)
			}
			for what, pair := range map[string][2][]string{"vrfs": {vrfs, tc.wantVRFs}, "layer2s": {l2s, tc.wantL2},
				"bgpPeers": {peers, tc.wantPeers}, "interfaces": {ifaces, tc.wantIfaces}} {
				if !slices.Equal(pair[0], pair[1]) {
					t.Errorf("%s = %v, want %v", what, pair[0], pair[1])
				}
			}
		})
	}
}

func TestBuildMerge(t *testing.T) {
	spec, err := Build(fullRevision(t), node("n", nil, nil), nil, opts())
	if err != nil {
		t.Fatal(err)
	}
	blue := vrfByName(spec, "blue")
	if blue == nil {
		t.Fatal("no VRF blue")
	}
	if blue.MTU != 9000 {
		t.Errorf("MTU = %d, want the largest, 9000", blue.MTU)
	}
	if got := []string{blue.Leaks[0].Source, blue.Leaks[1].Source}; !slices.Equal(got, []string{"blue-b", "blue-a"}) {
		t.Errorf("leaks in order %v, want sorted by seq", got)
	}
	if !slices.Equal(blue.Aggregates, []string{"10.0.0.0/8", "10.1.0.0/16"}) {
		t.Errorf("aggregates = %v, want sorted without duplicates", blue.Aggregates)
	}
	imp := blue.Leaks[1].Import
	if imp[0].Seq != 1 || imp[1].Seq != 5 {
		t.Errorf("import seqs = %d,%d, want the implicit 1 (index+1) and the explicit 5", imp[0].Seq, imp[1].Seq)
	}
	if blue.TableID != TableIDBase+2000 || vrfByName(spec, "cluster").TableID != MainTableID {
		t.Errorf("table ids blue=%d cluster=%d", blue.TableID, vrfByName(spec, "cluster").TableID)
	}
	web := spec.BGPPeers[1]
	if web.VRF != "blue" || !slices.Equal(web.ListenRanges, []string{"10.1.2.0/24", "fd10::/64"}) {
		t.Errorf("web peering vrf %q listen ranges %v", web.VRF, web.ListenRanges)
	}
	if web.PasswordSecretRef == nil || web.PasswordSecretRef.Name != "bgp" {
		t.Errorf("secret reference not carried: %+v", web.PasswordSecretRef)
	}
	u := spec.Underlay
	if u.ASN != 65001 || u.RouterID != "192.0.2.10" || u.VTEPAddress != "192.0.2.10" || len(u.Neighbors) != 2 || u.Neighbors[1].RemoteASN != "external" {
		t.Errorf("underlay = %+v", u)
	}
}

// TestIDsAndTablesStable checks the rule that adding a VRF never renumbers another one.
func TestIDsAndTablesStable(t *testing.T) {
	rev := &v1.NetworkConfigRevisionSpec{Revision: "r1", VRF: []v1.VRFRevision{vrf("b", "b", 300, 1), vrf("c", "c", 200, 1)}}
	n := node("n", nil, nil)
	first, err := Build(rev, n, nil, opts())
	if err != nil {
		t.Fatal(err)
	}
	if vrfByName(first, "c").ID != 1 || vrfByName(first, "b").ID != 2 {
		t.Fatalf("first ids: b=%d c=%d, want c=1 b=2 (VNI order)", vrfByName(first, "b").ID, vrfByName(first, "c").ID)
	}
	// "a" sorts first by name and by VNI, and "c" is removed: neither moves "b".
	rev2 := &v1.NetworkConfigRevisionSpec{Revision: "r2", VRF: []v1.VRFRevision{vrf("a", "a", 100, 1), vrf("b", "b", 300, 1)}}
	second, err := Build(rev2, n, &first, opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b"} {
		if a, b := vrfByName(first, name), vrfByName(second, name); a.ID != b.ID || a.TableID != b.TableID {
			t.Errorf("VRF %s moved: id %d->%d table %d->%d", name, a.ID, b.ID, a.TableID, b.TableID)
		}
	}
	if got := vrfByName(second, "a").ID; got != 1 {
		t.Errorf("new VRF a got id %d, want the freed id 1", got)
	}
	// Without history the same content is still deterministic.
	again, err := Build(rev2, n, nil, opts())
	if err != nil {
		t.Fatal(err)
	}
	again2, _ := Build(rev2, n, nil, opts())
	if again.ExpectedMapVersion != again2.ExpectedMapVersion {
		t.Error("same input, different map version")
	}
}

func TestBuildErrors(t *testing.T) {
	good := func() *v1.NetworkConfigRevisionSpec {
		return &v1.NetworkConfigRevisionSpec{Revision: "r", VRF: []v1.VRFRevision{vrf("blue", "blue", 10, 1)}}
	}
	tests := []struct {
		name     string
		mutate   func(*v1.NetworkConfigRevisionSpec, *corev1.Node)
		sentinel error
		wantMsg  string
	}{
		{"tenant VRF without VNI", func(r *v1.NetworkConfigRevisionSpec, _ *corev1.Node) { r.VRF[0].VNI = nil },
			fielderr.ErrInvalid, `vrf[blue].vni: Invalid value: 0: VNI of VRF "blue" must be within 1..16777215`},
		{"two VNIs for one VRF", func(r *v1.NetworkConfigRevisionSpec, _ *corev1.Node) {
			r.VRF = append(r.VRF, vrf("blue2", "blue", 11, 2))
		}, fielderr.ErrInvalid, "vrf[blue2].vni: Invalid value: 11: differs from VNI 10"},
		{"duplicate route-map seq", func(r *v1.NetworkConfigRevisionSpec, _ *corev1.Node) {
			r.VRF = append(r.VRF, vrf("blue2", "blue", 10, 1))
		}, fielderr.ErrInvalid, `vrf[blue2].seq: Invalid value: 1: also used by "blue"`},
		{"layer2 in a VRF the node lacks", func(r *v1.NetworkConfigRevisionSpec, _ *corev1.Node) {
			l := v1.Layer2Revision{Name: "l"}
			l.ID, l.VNI, l.VRF = 5, 5, "green"
			r.Layer2 = append(r.Layer2, l)
		}, fielderr.ErrInvalid, `layer2[l].vrf: Invalid value: "green": not configured on this node`},
		{"peering on an unknown network", func(r *v1.NetworkConfigRevisionSpec, _ *corev1.Node) {
			b := v1.BGPRevision{Name: "p"}
			b.PeeringVlan, b.RemoteASN = &v1.BGPPeeringVLAN{Name: "nope"}, 1
			r.BGP = append(r.BGP, b)
		}, fielderr.ErrInvalid, `bgp[p].peeringVlan.name: Invalid value: "nope": not a Layer2NetworkConfiguration`},
		{"bad selector", func(r *v1.NetworkConfigRevisionSpec, _ *corev1.Node) {
			r.VRF[0].NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}
		}, fielderr.ErrInvalid, "vrf[blue].nodeSelector"},
		{"no router id", func(_ *v1.NetworkConfigRevisionSpec, n *corev1.Node) { n.Status.Addresses = nil },
			ErrNodeIncomplete, `metadata.annotations[network.network-operator.io/router-id]: Invalid value: "": must be an IPv4 address`},
		{"bad ASN annotation", func(_ *v1.NetworkConfigRevisionSpec, n *corev1.Node) {
			n.Annotations = map[string]string{AnnotationASN: "sixty"}
		}, ErrNodeIncomplete, `metadata.annotations[network.network-operator.io/asn]: Invalid value: "sixty": not an AS number`},
		{"reserved ASN annotation", func(_ *v1.NetworkConfigRevisionSpec, n *corev1.Node) {
			n.Annotations = map[string]string{AnnotationASN: "4294967295"}
		}, ErrNodeIncomplete, `metadata.annotations[network.network-operator.io/asn]: Invalid value: 4294967295: AS number must be within 1..4294967294`},
		{"bad VTEP annotation", func(_ *v1.NetworkConfigRevisionSpec, n *corev1.Node) {
			n.Annotations = map[string]string{AnnotationVTEPAddress: "10.0.0"}
		}, ErrNodeIncomplete, `vtep-address]: Invalid value: "10.0.0": not an IP address`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rev, n := good(), node("n", nil, nil)
			if _, err := Build(rev, n, nil, opts()); err != nil {
				t.Fatalf("baseline: %v", err)
			}
			tc.mutate(rev, n)
			_, err := Build(rev, n, nil, opts())
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("err = %v, want %v", err, tc.sentinel)
			}
			// The rollout fails a revision on content errors only: a Node problem must not look like one.
			if tc.sentinel == ErrNodeIncomplete && errors.Is(err, fielderr.ErrInvalid) {
				t.Errorf("err = %v matches fielderr.ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %q, want it to contain %q", err, tc.wantMsg)
			}
		})
	}
}

func TestBuildAnnotations(t *testing.T) {
	n := node("n", nil, map[string]string{
		AnnotationASN: "4200000001", AnnotationRouterID: "203.0.113.1", AnnotationUnderlayInterfaces: "ens1f0, ens1f1",
	})
	spec, err := Build(&v1.NetworkConfigRevisionSpec{Revision: "r"}, n, nil, opts())
	if err != nil {
		t.Fatal(err)
	}
	u := spec.Underlay
	if u.ASN != 4200000001 || u.RouterID != "203.0.113.1" || u.VTEPAddress != "203.0.113.1" || !slices.Equal(u.Interfaces, []string{"ens1f0", "ens1f1"}) {
		t.Fatalf("underlay = %+v", u)
	}
}

// With L2Gateways, a layer-2 network with anycast gateways in a tenant VRF puts its bridge under the eBPF router
// in that VRF; one without a VRF or gateways ("storage") does not.
func TestBuildL2Gateways(t *testing.T) {
	rev := fullRevision(t)
	o := opts()
	o.L2Gateways = true
	spec, err := Build(rev, node("n", map[string]string{"storage": "yes"}, nil), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []v1.DataPlaneInterface
	for _, i := range spec.DataPlane.Interfaces {
		if strings.HasPrefix(i.Name, v1.L2BridgePrefix) {
			got = append(got, i)
		}
	}
	want := []v1.DataPlaneInterface{{Name: "l2br.100", VRF: "blue", Mode: v1.ModeRoute, Hook: v1.HookAuto}}
	if !slices.Equal(got, want) {
		t.Fatalf("layer-2 gateway interfaces %+v, want %+v", got, want)
	}
	if spec.ExpectedMapVersion != spec.MapVersion() {
		t.Fatal("expectedMapVersion does not cover the gateway interfaces")
	}
	without, err := Build(rev, node("n", map[string]string{"storage": "yes"}, nil), nil, opts())
	if err != nil {
		t.Fatal(err)
	}
	if without.ExpectedMapVersion == spec.ExpectedMapVersion {
		t.Fatal("the gateway interfaces do not change the expected map version")
	}
}

// TestBuildBFD: a peering's BFD settings reach its node peer (and turn BFD on); the operator's underlay BFD and
// health probes reach every node's spec; without them no session runs BFD and no probe is added.
func TestBuildBFD(t *testing.T) {
	rev := fullRevision(t)
	rev.BGP[1].BFD = &v1.BFDProfile{PassiveMode: true, DetectMultiplier: new(int32(5))}
	o := opts()
	o.Underlay.BFD = &v1.BFDProfile{ReceiveInterval: &metav1.Duration{Duration: 100 * time.Millisecond}}
	spec, err := Build(rev, node("n", nil, nil), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.BGPPeers) < 2 {
		t.Fatalf("peers %+v", spec.BGPPeers)
	}
	for _, p := range spec.BGPPeers {
		if p.Name == rev.BGP[1].Name {
			if !p.EnableBFD || p.BFD == nil || !p.BFD.PassiveMode || *p.BFD.DetectMultiplier != 5 {
				t.Errorf("peer %s: enableBFD %v, bfd %+v", p.Name, p.EnableBFD, p.BFD)
			}
		} else if p.EnableBFD || p.BFD != nil {
			t.Errorf("peer %s without BFD: enableBFD %v, bfd %+v", p.Name, p.EnableBFD, p.BFD)
		}
	}
	if b := spec.Underlay.BFD; b == nil || b.ReceiveInterval.Duration != 100*time.Millisecond {
		t.Errorf("underlay BFD %+v", b)
	}
	if b := o.Underlay.BFD; spec.Underlay.BFD == b {
		t.Error("the underlay BFD is shared with the options, not copied")
	}
	o.HealthProbes = []v1.HealthProbe{{Name: "gw", Address: "192.0.2.1:179"}, {Name: "dns", Address: "192.0.2.53:53"}}
	spec, err = Build(rev, node("n", nil, nil), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.HealthProbes; len(got) != 2 || got[0].Name != "dns" || got[1].Name != "gw" {
		t.Errorf("health probes %+v, want both sorted by name", got)
	}
	plain, err := Build(fullRevision(t), node("n", nil, nil), nil, opts())
	if err != nil {
		t.Fatal(err)
	}
	if plain.Underlay.BFD != nil || plain.HealthProbes != nil {
		t.Errorf("underlay BFD / probes without the flags: %+v %+v", plain.Underlay.BFD, plain.HealthProbes)
	}
}
