package nodespec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/network-operator/network-operator/pkg/fielderr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func linkRev(name, ifname string, mut func(*v1.LinkSpec)) v1.LinkRevision {
	l := v1.LinkRevision{Name: name}
	l.InterfaceName = ifname
	mut(&l.LinkSpec)
	return l
}

// gatewayLinks is node-network-operator's gateway network: a bridge and a static VXLAN on the uplink, on the
// nodes labelled gw=yes.
func gatewayLinks() []v1.LinkRevision {
	gw := sel("gw", "yes")
	return []v1.LinkRevision{
		linkRev("gw-vxlan", "vxgw", func(s *v1.LinkSpec) {
			s.NodeSelector = gw
			s.VXLAN = &v1.VXLANLink{VNID: 4242, Device: &v1.LinkReference{Name: "uplink"}, Master: &v1.LinkReference{Name: "gw-bridge"},
				MTU: 1450, Flooding: &v1.Flooding{Mode: v1.FloodingStatic}}
		}),
		linkRev("uplink", "eth0", func(s *v1.LinkSpec) { s.Unmanaged = &v1.UnmanagedLink{} }),
		linkRev("gw-bridge", "brgw", func(s *v1.LinkSpec) { s.NodeSelector = gw; s.Bridge = &v1.BridgeLink{MTU: 1450} }),
	}
}

// TestBuildLinks: the selected Links with references resolved to interface names, port defaulted, flood peers
// every other node of the Link (as for a layer-2 network); an unselected node gets only the unmanaged uplink.
func TestBuildLinks(t *testing.T) {
	rev := &v1.NetworkConfigRevisionSpec{Revision: "r", Links: gatewayLinks()}
	specs, errs := buildAll(t, rev, map[string]string{"a-gw": "192.0.2.1", "b-gw": "192.0.2.2", "c": "192.0.2.3"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got, err := yaml.Marshal(specs["a-gw"].Links)
	if err != nil {
		t.Fatal(err)
	}
	want := `- bridge:
    mtu: 1450
  interfaceName: brgw
  name: gw-bridge
- interfaceName: vxgw
  name: gw-vxlan
  vxlan:
    device: eth0
    flooding:
      mode: static
      peers:
      - 192.0.2.2
    master: brgw
    mtu: 1450
    port: 4789
    vni: 4242
- interfaceName: eth0
  name: uplink
  unmanaged: {}
`
	if string(got) != want {
		t.Errorf("links of a-gw:\n%s\nwant:\n%s", got, want)
	}
	if names := linkNames(specs["c"].Links); !slices.Equal(names, []string{"uplink"}) {
		t.Errorf("links of c: %v, want only the uplink", names)
	}
}

func linkNames(links []v1.NodeLink) []string {
	var out []string
	for _, l := range links {
		out = append(out, l.Name)
	}
	return out
}

// A reference to a Link the node does not have, and two Links with one interface name on a node, cannot be built
// there: the error names the Link, the field and the value.
func TestBuildLinksRefused(t *testing.T) {
	links := gatewayLinks()
	links[2].NodeSelector = sel("gw", "other") // the bridge is not where its VXLAN is
	links = append(links, linkRev("second", "eth0", func(s *v1.LinkSpec) { s.Bridge = &v1.BridgeLink{} }))
	rev := &v1.NetworkConfigRevisionSpec{Revision: "r", Links: links}
	_, err := Build(rev, node("a-gw", map[string]string{"gw": "yes"}, nil), nil, opts())
	if !errors.Is(err, fielderr.ErrInvalid) {
		t.Fatalf("Build = %v, want invalid input", err)
	}
	for _, want := range []string{
		`link[gw-vxlan].vxlan.master.name: Invalid value: "gw-bridge": no Link of that name is on this node`,
		`link[second].interfaceName: Invalid value: "eth0": also the interface of Link "uplink" on this node`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestHoldBackLinks: Links whose references do not exist, are held back, or are of the wrong kind wait outside the
// revision, down the chain; the others stay.
func TestHoldBackLinks(t *testing.T) {
	links := gatewayLinks()
	links = append(links,
		linkRev("orphan", "vxo", func(s *v1.LinkSpec) {
			s.VXLAN = &v1.VXLANLink{VNID: 1, Master: &v1.LinkReference{Name: "later"}}
		}),
		linkRev("wrong-master", "vxw", func(s *v1.LinkSpec) {
			s.VXLAN = &v1.VXLANLink{VNID: 2, Master: &v1.LinkReference{Name: "uplink"}}
		}),
		linkRev("on-orphan", "vxc", func(s *v1.LinkSpec) {
			s.VXLAN = &v1.VXLANLink{VNID: 3, Device: &v1.LinkReference{Name: "orphan"}, Flooding: &v1.Flooding{Mode: v1.FloodingStatic}}
		}))
	rev := &v1.NetworkConfigRevisionSpec{Links: links}
	held := HoldBack(rev)
	var got []string
	for _, h := range held {
		got = append(got, h.Kind+"/"+h.Name+": "+h.Reason)
	}
	want := []string{
		`Link/on-orphan: device: Link "orphan" is a vxlan: a device must be a bridge or unmanaged`,
		`Link/orphan: master: Link "later" does not exist or is held back`,
		`Link/wrong-master: master: Link "uplink" is a unmanaged: a master must be a bridge`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("held:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if names := func() []string {
		var out []string
		for _, l := range rev.Links {
			out = append(out, l.Name)
		}
		return out
	}(); !slices.Equal(names, []string{"gw-vxlan", "uplink", "gw-bridge"}) {
		t.Errorf("links left in the revision: %v", names)
	}
}
