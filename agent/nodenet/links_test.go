package nodenet_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/golden"
)

// gatewayLinks is node-network-operator's gateway network as the operator resolves it for a node: the node's uplink
// (unmanaged), a bridge, and a VXLAN over the uplink in the bridge flooding to peers (VTEP 192.0.2.1: testSettings).
func gatewayLinks(uplink string, peers ...string) *v1alpha1.NodeNetworkConfigSpec {
	return &v1alpha1.NodeNetworkConfigSpec{
		Revision: "r1",
		Underlay: v1alpha1.UnderlaySpec{ASN: 65001, RouterID: "192.0.2.1", VTEPAddress: "192.0.2.1"},
		Links: []v1alpha1.NodeLink{
			{Name: "gw-vxlan", InterfaceName: "vxgw", VXLAN: &v1alpha1.NodeVXLANLink{VNI: 4242, Port: 4789, Device: uplink,
				Master: "brgw", MTU: 1450, Flooding: &v1alpha1.Flooding{Mode: v1alpha1.FloodingStatic, Peers: peers}}},
			{Name: "uplink", InterfaceName: uplink, Unmanaged: &v1alpha1.UnmanagedLink{}},
			{Name: "gw-bridge", InterfaceName: "brgw", Bridge: &v1alpha1.BridgeLink{MTU: 1450}},
		},
	}
}

// TestPlanLinks: a bridge before its VXLAN port, the VXLAN with its device and flood entries; the Links gone, the
// VXLAN is deleted before its bridge; a resync plans nothing; the one flooding code path of layer-2 networks.
func TestPlanLinks(t *testing.T) {
	d := mustDesired(t, gatewayLinks("eth0", "192.0.2.2", "192.0.2.3"), testSettings(), fullKernel)
	golden.Assert(t, filepath.Join("testdata", "scratch-links.golden"), []byte(nodenet.ComputePlan(d, &nodenet.Observed{}).String()))
	applied := observedAfter(d)
	if p := nodenet.ComputePlan(d, applied); !p.Empty() {
		t.Errorf("resync plans:\n%s", p)
	}
	none := gatewayLinks("eth0")
	none.Links = nil
	diffLines(t, lines(nodenet.ComputePlan(mustDesired(t, none, testSettings(), fullKernel), applied).Actions), []string{
		"removals: delete vxlan vxgw (no longer desired)",
		"removals: delete bridge brgw (no longer desired)",
	})
}

func TestLinksRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(s *v1alpha1.NodeNetworkConfigSpec)
		want string
	}{
		{"master not a bridge", func(s *v1alpha1.NodeNetworkConfigSpec) { s.Links[0].VXLAN.Master = "eth0" },
			`links[gw-vxlan].vxlan.master: Invalid value: "eth0": not the interface of a bridge Link of the spec`},
		{"device not a Link", func(s *v1alpha1.NodeNetworkConfigSpec) { s.Links[0].VXLAN.Device = "eth9" },
			`links[gw-vxlan].vxlan.device: Invalid value: "eth9"`},
		{"a name nodenet uses", func(s *v1alpha1.NodeNetworkConfigSpec) {
			s.Layer2s = []v1alpha1.NodeLayer2{{Name: "l2", VLAN: 10, VNI: 10, MTU: 1500}}
			s.Links[2].InterfaceName, s.Links[0].VXLAN.Master = "l2br.10", "l2br.10"
		}, `links[gw-bridge].interfaceName: Invalid value: "l2br.10": link name is already used by layer2s[l2]`},
		{"a VNI of a layer-2 network", func(s *v1alpha1.NodeNetworkConfigSpec) {
			s.Layer2s = []v1alpha1.NodeLayer2{{Name: "l2", VLAN: 10, VNI: 4242, MTU: 1500}}
		}, `links[gw-vxlan].vxlan.vni: Invalid value: 4242: already used by layer2s[l2]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := gatewayLinks("eth0", "192.0.2.2")
			tc.mut(s)
			_, err := nodenet.BuildDesired(s, testSettings(), fullKernel)
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("BuildDesired = %v, want an invalid-input error containing %q", err, tc.want)
			}
		})
	}
}

// TestLinksNamespaces: node-network-operator's gateway network as Links on three "nodes" (floodLab), no BGP: the
// plan creates each bridge before its VXLAN, the hosts behind the bridges reach each other over the static VXLAN
// overlay, a restarted agent plans nothing, removing the Links deletes the VXLAN before the bridge and leaves the
// uplink (unmanaged) and the hosts' veth ends as they were; a foreign link holding the bridge's name is a conflict,
// reported and left alone, nothing applied.
func TestLinksNamespaces(t *testing.T) {
	l, vteps := floodLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	specOf := func(i int) *v1alpha1.NodeNetworkConfigSpec {
		s := gatewayLinks("up", slices.Delete(slices.Clone(vteps), i, i+1)...)
		s.Underlay.RouterID, s.Underlay.VTEPAddress = vteps[i], vteps[i]
		return s
	}
	var managers []*nodenet.Manager
	for i := range 3 {
		ns := l.NS(fmt.Sprintf("n%d", i+1))
		m := newManager(t, ns, nodenet.Settings{})
		p := converge(t, m, specOf(i))
		if i == 0 {
			t.Logf("node 1 applied:\n%s", p)
			diffLines(t, lines(p.Actions), []string{
				"interfaces: create bridge brgw (mtu 1450)",
				"interfaces: create vxlan vxgw (vni 4242, local 192.168.50.1, dstport 4789, dev up, mtu 1450, master brgw)",
				"interfaces: add flood entry 00:00:00:00:00:00 dst 192.168.50.2 to vxgw (static flooding)",
				"interfaces: add flood entry 00:00:00:00:00:00 dst 192.168.50.3 to vxgw (static flooding)",
				"interfaces: set brgw up",
				"interfaces: set vxgw up",
			})
		}
		enslave(t, ns, "host", "brgw")
		vx := link(t, ns, "vxgw").(*netlink.Vxlan)
		if up := link(t, ns, "up"); vx.VtepDevIndex != up.Attrs().Index || vx.Port != 4789 || !vx.Learning {
			t.Errorf("node %d: vxgw dev %d port %d learning %t; want dev up (%d), port 4789, learning", i+1, vx.VtepDevIndex, vx.Port,
				vx.Learning, up.Attrs().Index)
		}
		managers = append(managers, m)
	}
	pingAll(t, ctx, l)

	n1 := l.NS("n1")
	upBefore := fingerprints(t, n1, "up", "host")
	if p := mustPlan(t, newManager(t, n1, nodenet.Settings{}), specOf(0)); !p.Empty() {
		t.Errorf("a restarted agent plans:\n%s", p)
	}
	none := specOf(0)
	none.Links = nil
	p := mustPlan(t, managers[0], none)
	diffLines(t, lines(p.Actions), []string{
		"removals: delete vxlan vxgw (no longer desired)",
		"removals: delete bridge brgw (no longer desired)",
	})
	if err := applyAll(ctx, managers[0], p); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vxgw", "brgw"} {
		if _, err := n1.Link(name); err == nil {
			t.Errorf("%s left behind", name)
		}
	}
	upAfter := fingerprints(t, n1, "up", "host")
	if upAfter["up"] != upBefore["up"] || upAfter["host"].index != upBefore["host"].index {
		t.Errorf("the unmanaged uplink or the host's veth end changed: %+v -> %+v", upBefore, upAfter)
	}

	// A foreign bridge named like the Link's: a conflict, nothing applied, the foreign bridge untouched.
	if err := n1.Handle().LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "brgw", MTU: 1400}}); err != nil {
		t.Fatal(err)
	}
	foreign := fingerprints(t, n1, "brgw")
	p = mustPlan(t, managers[0], specOf(0))
	if err := p.Err(); !errors.Is(err, nodenet.ErrConflict) || len(p.Conflicts) != 2 ||
		!strings.Contains(p.String(), "brgw: want bridge, found bridge with alias none: it has no network-operator alias") ||
		!strings.Contains(p.String(), "vxgw: want vxlan, found nothing with alias none: its master brgw is held by a foreign link") {
		t.Fatalf("plan with a foreign brgw: err %v\n%s", err, p)
	}
	if _, err := managers[0].Apply(ctx, p, nodenet.PhaseInterfaces); !errors.Is(err, nodenet.ErrConflict) {
		t.Errorf("apply of a conflicting plan: %v, want ErrConflict", err)
	}
	if got := fingerprints(t, n1, "brgw"); got["brgw"] != foreign["brgw"] {
		t.Errorf("foreign brgw changed: %+v -> %+v", foreign, got)
	}
	if _, err := n1.Link("vxgw"); err == nil {
		t.Error("vxgw created despite the conflict")
	}
}
