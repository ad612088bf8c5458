package frr

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

func sampleSpec() v1alpha1.NodeNetworkConfigSpec {
	return v1alpha1.NodeNetworkConfigSpec{
		Revision: "abc",
		Underlay: v1alpha1.UnderlaySpec{
			ASN: 4200000101, RouterID: "10.0.0.11", VTEPAddress: "10.0.0.11",
			Interfaces: []string{"eth0", "eth1"},
			Neighbors:  []v1alpha1.UnderlayNeighbor{{Interface: "eth0", RemoteASN: "external"}, {Address: "192.0.2.1", RemoteASN: "65099"}},
		},
		VRFs: []v1alpha1.NodeVRF{
			{Name: "cluster", ID: 1, TableID: 254},
			{Name: "tenant1", ID: 2, TableID: 1001, VNI: 5001, RouteTargets: []string{"65000:5001"},
				Leaks: []v1alpha1.VRFLeak{{Source: "tenant1-a", Seq: 10,
					Import:      []v1alpha1.NodePrefixItem{{CIDR: "10.1.0.0/16", Seq: 10, LE: i32(32), Action: v1alpha1.PrefixActionPermit}},
					Export:      []v1alpha1.NodePrefixItem{{CIDR: "10.250.0.0/16", Seq: 10, GE: i32(24), Action: v1alpha1.PrefixActionPermit}},
					Communities: []string{"65000:1", "65000:1:1"},
				}},
				Aggregates: []string{"10.250.0.0/16"}},
		},
		Layer2s: []v1alpha1.NodeLayer2{{Name: "l2-100", VLAN: 100, VNI: 100, MTU: 1500, VRF: "tenant1"}},
		BGPPeers: []v1alpha1.NodeBGPPeer{{
			Name: "metallb.speakers", VRF: "tenant1", RemoteASN: 64512, ListenRanges: []string{"10.1.250.0/24"},
			HoldTime: &metav1.Duration{Duration: 30 * time.Second}, KeepaliveTime: &metav1.Duration{Duration: 10 * time.Second},
			MaximumPrefixes: i64(50), EnableBFD: true,
			Import:            []v1alpha1.NodePrefixItem{{CIDR: "10.1.0.0/16", Seq: 10, LE: i32(32), Action: v1alpha1.PrefixActionPermit}},
			PasswordSecretRef: &v1alpha1.SecretKeyReference{Namespace: "ns", Name: "bgp", Key: "password"},
		}},
	}
}

func TestFromNodeNetworkConfig(t *testing.T) {
	spec := sampleSpec()
	var asked v1alpha1.SecretKeyReference
	cfg, err := FromNodeNetworkConfig(&spec, func(ref v1alpha1.SecretKeyReference) (string, error) {
		asked = ref
		return "from-secret", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Name != "bgp" || cfg.Peerings[0].Password.Value() != "from-secret" {
		t.Errorf("password not read from the Secret: %+v", asked)
	}
	out, err := Render(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"router bgp 4200000101\n",
		" neighbor eth0 interface remote-as external\n",
		" neighbor eth1 interface remote-as external\n", // uplink without neighbour entry
		" neighbor 192.0.2.1 remote-as 65099\n",
		"  network 10.0.0.11/32\n",
		"  vni 100\n",
		"vrf vr.tenant1\n vni 5001\nexit-vrf\n",
		"router bgp 4200000101 vrf vr.tenant1\n",
		"  route-target import 65000:5001\n",
		"  redistribute connected\n",
		"  aggregate-address 10.250.0.0/16\n",
		" neighbor metallb_speakers password from-secret\n",
		" neighbor metallb_speakers timers 10 30\n",
		" bgp listen range 10.1.250.0/24 peer-group metallb_speakers\n",
		"  neighbor metallb_speakers maximum-prefix 50\n",
		"ip prefix-list pl_vr.tenant1_export_10 seq 10 permit 10.250.0.0/16 ge 24\n",
		" set community 65000:1\n set large-community 65000:1:1\n",
		" match source-vrf vr.tenant1\n call rm_vr.tenant1_import\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rendered config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "vrf vr.cluster") || strings.Contains(string(out), "vrf cluster") {
		t.Errorf("the cluster VRF must be FRR's default VRF")
	}
}

func TestFromNodeNetworkConfigErrors(t *testing.T) {
	cases := []struct {
		name   string
		modify func(s *v1alpha1.NodeNetworkConfigSpec)
		read   PasswordFunc
		want   string
	}{
		{"router id", func(s *v1alpha1.NodeNetworkConfigSpec) { s.Underlay.RouterID = "ten" }, nil, `spec.underlay.routerID: Invalid value: "ten": must be an IP address`},
		{"reserved asn", func(s *v1alpha1.NodeNetworkConfigSpec) { s.Underlay.ASN = 4294967295 }, nil, `spec.underlay.asn: Invalid value: 4294967295`},
		{"prefix seq", func(s *v1alpha1.NodeNetworkConfigSpec) { s.VRFs[1].Leaks[0].Import[0].Seq = -1 }, nil,
			`spec.vrfs[1].leaks[0].import[0].seq: Invalid value: -1: prefix-list sequence must be within 1..4294967295`},
		{"asn", func(s *v1alpha1.NodeNetworkConfigSpec) { s.Underlay.ASN = 1 << 33 }, nil, `spec.underlay.asn: Invalid value: 8589934592: AS number must be within 1..4294967294`},
		{"vni", func(s *v1alpha1.NodeNetworkConfigSpec) { s.Layer2s[0].VNI = -1 }, nil, `spec.layer2s[0].vni: Invalid value: -1`},
		{"leak seq", func(s *v1alpha1.NodeNetworkConfigSpec) { s.VRFs[1].Leaks[0].Seq = 65535 }, nil, `spec.vrfs[1].leaks[0].seq: Invalid value: 65535`},
		{"cidr", func(s *v1alpha1.NodeNetworkConfigSpec) { s.VRFs[1].Leaks[0].Import[0].CIDR = "10.1/16" }, nil, `spec.vrfs[1].leaks[0].import[0].cidr: Invalid value: "10.1/16"`},
		{"secret unreadable", func(s *v1alpha1.NodeNetworkConfigSpec) {}, func(v1alpha1.SecretKeyReference) (string, error) {
			return "", errors.New("secrets \"bgp\" not found")
		}, `spec.bgpPeers[0].passwordSecretRef: Invalid value: "ns/bgp[password]": read: secrets "bgp" not found`},
		{"no secret reader", func(s *v1alpha1.NodeNetworkConfigSpec) {}, nil, `no Secret reader given`},
		{"model rule", func(s *v1alpha1.NodeNetworkConfigSpec) { s.VRFs[1].Leaks[0].Import[0].LE = i32(8) }, nil, `vrfs[0].routeConfigs[0].import[0].le: Invalid value: 8`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := sampleSpec()
			c.modify(&spec)
			read := c.read
			if read == nil && c.name != "no secret reader" {
				read = func(v1alpha1.SecretKeyReference) (string, error) { return "pw", nil }
			}
			_, err := FromNodeNetworkConfig(&spec, read)
			if !errors.Is(err, validation.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v\nwant validation.ErrInvalid containing %q", err, c.want)
			}
		})
	}
}

func TestPeerGroupName(t *testing.T) {
	for in, want := range map[string]string{
		"calico":                "calico",
		"metallb.speakers":      "metallb_speakers",
		"1st":                   "p_1st",
		strings.Repeat("a", 60): strings.Repeat("a", 31) + "_",
	} {
		got := peerGroupName(in)
		if !strings.HasPrefix(got, want) || len(got) > maxNameLen || !nameRe.MatchString(got) {
			t.Errorf("peerGroupName(%q) = %q, want prefix %q, valid, at most %d", in, got, want, maxNameLen)
		}
	}
	if peerGroupName(strings.Repeat("a", 60)) == peerGroupName(strings.Repeat("a", 61)) {
		t.Error("long names must stay distinct")
	}
}
