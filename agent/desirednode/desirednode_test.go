package desirednode

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr"
)

func spec() *v1.NodeNetworkConfigSpec {
	return &v1.NodeNetworkConfigSpec{Revision: "r1",
		Underlay:  v1.UnderlaySpec{ASN: 65000, RouterID: "10.255.0.1", VTEPAddress: "10.255.0.1"},
		VRFs:      []v1.NodeVRF{{Name: "red", ID: 1, TableID: 1_000_000_100, VNI: 100}},
		DataPlane: v1.DataPlaneSpec{Interfaces: []v1.DataPlaneInterface{{Name: "br.red", VRF: "red"}, {Name: "eth0", VRF: "red"}}},
	}
}

// netlinkWith is nodenet's real translation with or without VRF devices in the kernel.
func netlinkWith(f nodenet.Features) func(context.Context, string, *v1.NodeNetworkConfigSpec) (*nodenet.Desired, error) {
	return func(_ context.Context, _ string, s *v1.NodeNetworkConfigSpec) (*nodenet.Desired, error) {
		return nodenet.BuildDesired(s, nodenet.Settings{VTEPAddress: netip.MustParseAddr("10.255.0.1")}, f)
	}
}

func TestBuild(t *testing.T) {
	gr := &frr.GracefulRestart{}
	withFRR := &FRR{Version: frr.Version{Major: 8, Minor: 4}, GracefulRestart: gr}
	cases := []struct {
		name    string
		spec    func(*v1.NodeNetworkConfigSpec)
		in      Inputs
		wantErr string // the part named, then the cause
		check   func(t *testing.T, n *Node)
	}{
		{name: "every part from one translation", in: Inputs{Netlink: netlinkWith(nodenet.Features{VRF: true}), FRR: withFRR},
			check: func(t *testing.T, n *Node) {
				if n.MapVersion != n.Spec.MapVersion() {
					t.Errorf("map version %q, want the spec's %q", n.MapVersion, n.Spec.MapVersion())
				}
				if n.FRR == nil || n.FRRSkip != "" || len(n.FRR.VRFs) != 1 || n.FRR.VRFs[0].VNI != 100 {
					t.Fatalf("FRR model %+v (skip %q), want VRF red with VNI 100", n.FRR, n.FRRSkip)
				}
				if n.FRR.FRR != withFRR.Version || n.FRR.Underlay.GracefulRestart != gr {
					t.Errorf("FRR model for %v with graceful restart %v, want the inputs'", n.FRR.FRR, n.FRR.Underlay.GracefulRestart)
				}
				if len(n.Netlink.VRFs) != 1 || n.Netlink.VRFs[0].Device == "" {
					t.Fatalf("netlink VRFs %+v, want red with its VRF device", n.Netlink.VRFs)
				}
				if len(n.Tables.VRFs) != 1 || n.Tables.VRFs[0].LookupDevice != n.Netlink.VRFs[0].Device {
					t.Errorf("tables' VRFs %+v: the lookup device must be netlink's VRF device %q", n.Tables.VRFs, n.Netlink.VRFs[0].Device)
				}
			}},
		{name: "table-only VRFs: the ingress device is the lookup device", in: Inputs{Netlink: netlinkWith(nodenet.Features{}), FRR: withFRR},
			check: func(t *testing.T, n *Node) {
				if len(n.Tables.VRFs) != 1 || n.Tables.VRFs[0].LookupDevice != "" {
					t.Errorf("tables' VRFs %+v, want no lookup device without VRF devices", n.Tables.VRFs)
				}
			}},
		{name: "FRR not managed", in: Inputs{Netlink: netlinkWith(nodenet.Features{VRF: true})},
			check: func(t *testing.T, n *Node) {
				if n.FRR != nil || n.FRRSkip != SkipFRRDisabled {
					t.Errorf("FRR %+v skip %q, want none: %q", n.FRR, n.FRRSkip, SkipFRRDisabled)
				}
			}},
		{name: "no underlay: nothing for FRR", spec: func(s *v1.NodeNetworkConfigSpec) { s.Underlay = v1.UnderlaySpec{VTEPAddress: "10.255.0.1"} },
			in: Inputs{Netlink: netlinkWith(nodenet.Features{VRF: true}), FRR: withFRR},
			check: func(t *testing.T, n *Node) {
				if n.FRR != nil || n.FRRSkip != SkipNoUnderlay {
					t.Errorf("FRR %+v skip %q, want none: %q", n.FRR, n.FRRSkip, SkipNoUnderlay)
				}
			}},
		{name: "map version the operator disagrees on", spec: func(s *v1.NodeNetworkConfigSpec) { s.ExpectedMapVersion = "0000" },
			in: Inputs{Netlink: netlinkWith(nodenet.Features{VRF: true}), FRR: withFRR}, wantErr: "map version: expectedMapVersion"},
		{name: "a node fault names netlink", in: Inputs{FRR: withFRR,
			Netlink: func(context.Context, string, *v1.NodeNetworkConfigSpec) (*nodenet.Desired, error) {
				return nil, errors.New("probe failed")
			}}, wantErr: "netlink: probe failed"},
		{name: "a spec FRR refuses names frr", spec: func(s *v1.NodeNetworkConfigSpec) { s.Underlay.RouterID = "not-an-address" },
			in: Inputs{Netlink: netlinkWith(nodenet.Features{VRF: true}), FRR: withFRR}, wantErr: "frr: underlay.routerID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			if tc.spec != nil {
				tc.spec(s)
			}
			n, err := Build(context.Background(), s, lastapplied.SpecHash(s), tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Spec != s || n.Hash != lastapplied.SpecHash(s) {
				t.Errorf("node of spec %p hash %q, want %p %q", n.Spec, n.Hash, s, lastapplied.SpecHash(s))
			}
			tc.check(t, n)
		})
	}
}

func TestNeedsSecrets(t *testing.T) {
	s := spec()
	if NeedsSecrets(s) {
		t.Error("a spec without passwords needs no Secret")
	}
	s.BGPPeers = []v1.NodeBGPPeer{{Name: "p", PasswordSecretRef: &v1.SecretKeyReference{Name: "s", Key: "k"}}}
	if !NeedsSecrets(s) {
		t.Error("a peer's password is a Secret read at every translation")
	}
}
