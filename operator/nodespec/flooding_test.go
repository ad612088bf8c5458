package nodespec

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/pkg/fielderr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// floodingRevision has three networks: evpn (no flooding in the node spec), static to listed peers, static to every
// node of the network (only on nodes labelled gw=yes).
func floodingRevision(listed ...string) *v1.NetworkConfigRevisionSpec {
	evpn := v1.Layer2Revision{Name: "evpn"}
	evpn.ID, evpn.VNI = 10, 1010
	evpn.Flooding = &v1.Flooding{Mode: v1.FloodingEVPN}
	list := v1.Layer2Revision{Name: "listed"}
	list.ID, list.VNI = 20, 1020
	list.Flooding = &v1.Flooding{Mode: v1.FloodingStatic, Peers: listed}
	every := v1.Layer2Revision{Name: "every"}
	every.ID, every.VNI = 30, 1030
	every.Flooding = &v1.Flooding{Mode: v1.FloodingStatic}
	every.NodeSelector = sel("gw", "yes")
	return &v1.NetworkConfigRevisionSpec{Revision: "r", Layer2: []v1.Layer2Revision{evpn, every, list}}
}

// buildAll builds every node of nodes (name -> VTEP address; names ending in "-gw" are labelled gw=yes) and
// assigns the flood peers, as the rollout does.
func buildAll(t *testing.T, rev *v1.NetworkConfigRevisionSpec, nodes map[string]string) (map[string]*v1.NodeNetworkConfigSpec, []*FloodPeersError) {
	t.Helper()
	specs := map[string]*v1.NodeNetworkConfigSpec{}
	for name, vtep := range nodes {
		lbls := map[string]string{}
		if strings.HasSuffix(name, "-gw") {
			lbls["gw"] = "yes"
		}
		spec, err := Build(rev, node(name, lbls, map[string]string{AnnotationVTEPAddress: vtep}), nil, opts())
		if err != nil {
			t.Fatalf("build %s: %v", name, err)
		}
		specs[name] = &spec
	}
	return specs, AssignFloodPeers(rev, specs)
}

// flooding renders each network's flooding of a spec: "evpn" when unset, else "static [peers]".
func flooding(spec *v1.NodeNetworkConfigSpec) map[string]string {
	out := map[string]string{}
	for _, l := range spec.Layer2s {
		out[l.Name] = "evpn"
		if l.Flooding != nil {
			out[l.Name] = fmt.Sprintf("%s %v", l.Flooding.Mode, l.Flooding.Peers)
		}
	}
	return out
}

func TestFloodPeers(t *testing.T) {
	tests := []struct {
		name  string
		peers []string          // listed peers of network "listed"
		nodes map[string]string // node -> VTEP
		want  map[string]map[string]string
	}{
		{
			name:  "listed peers without the node itself, every other gw node's VTEP",
			peers: []string{"192.0.2.3", "192.0.2.1", "192.0.2.2"},
			nodes: map[string]string{"a-gw": "192.0.2.1", "b-gw": "192.0.2.2", "c": "192.0.2.3"},
			want: map[string]map[string]string{
				"a-gw": {"evpn": "evpn", "listed": "static [192.0.2.2 192.0.2.3]", "every": "static [192.0.2.2]"},
				"b-gw": {"evpn": "evpn", "listed": "static [192.0.2.1 192.0.2.3]", "every": "static [192.0.2.1]"},
				"c":    {"evpn": "evpn", "listed": "static [192.0.2.1 192.0.2.2]"},
			},
		},
		{
			name:  "a third gw node joins: the others flood to it too",
			peers: []string{"198.51.100.1"},
			nodes: map[string]string{"a-gw": "192.0.2.1", "b-gw": "192.0.2.2", "d-gw": "192.0.2.10"},
			want: map[string]map[string]string{
				"a-gw": {"evpn": "evpn", "listed": "static [198.51.100.1]", "every": "static [192.0.2.2 192.0.2.10]"},
				"b-gw": {"evpn": "evpn", "listed": "static [198.51.100.1]", "every": "static [192.0.2.1 192.0.2.10]"},
				"d-gw": {"evpn": "evpn", "listed": "static [198.51.100.1]", "every": "static [192.0.2.1 192.0.2.2]"},
			},
		},
		{
			name:  "alone on the network: no peers; only itself listed: none either",
			peers: []string{"192.0.2.1"},
			nodes: map[string]string{"a-gw": "192.0.2.1"},
			want:  map[string]map[string]string{"a-gw": {"evpn": "evpn", "listed": "static []", "every": "static []"}},
		},
		{
			// Without listed peers, "listed" floods to every node as well (it has no node selector).
			name:  "nodes of the other family and nodes sharing the VTEP are no peers",
			nodes: map[string]string{"a-gw": "192.0.2.1", "b-gw": "2001:db8::2", "c-gw": "192.0.2.1", "d-gw": "2001:db8::4", "e": "192.0.2.5"},
			want: map[string]map[string]string{
				"a-gw": {"evpn": "evpn", "listed": "static [192.0.2.5]", "every": "static []"},
				"b-gw": {"evpn": "evpn", "listed": "static [2001:db8::4]", "every": "static [2001:db8::4]"},
				"c-gw": {"evpn": "evpn", "listed": "static [192.0.2.5]", "every": "static []"},
				"d-gw": {"evpn": "evpn", "listed": "static [2001:db8::2]", "every": "static [2001:db8::2]"},
				"e":    {"evpn": "evpn", "listed": "static [192.0.2.1]"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, errs := buildAll(t, floodingRevision(tt.peers...), tt.nodes)
			if len(errs) > 0 {
				t.Fatalf("AssignFloodPeers: %v", errs)
			}
			for _, name := range slices.Sorted(maps.Keys(tt.want)) {
				if got := flooding(specs[name]); !maps.Equal(got, tt.want[name]) {
					t.Errorf("node %s: flooding %v, want %v", name, got, tt.want[name])
				}
			}
		})
	}
}

// A listed peer of another family than the node's VTEP cannot be built for the node (the revision fails there);
// more derived peers than v1.MaxFloodPeers hold the node.
func TestFloodPeersRefused(t *testing.T) {
	rev := floodingRevision("2001:db8::1", "192.0.2.2")
	_, err := Build(rev, node("a", nil, map[string]string{AnnotationVTEPAddress: "192.0.2.1"}), nil, opts())
	if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), `layer2[listed].flooding.peers[0]: Invalid value: "2001:db8::1"`) ||
		!strings.Contains(err.Error(), "this node's VTEP address 192.0.2.1") {
		t.Errorf("Build = %v; want an invalid-input error naming layer2[listed].flooding.peers[0] and the node's VTEP", err)
	}

	nodes := map[string]string{}
	for i := range v1.MaxFloodPeers + 2 {
		nodes[fmt.Sprintf("n%03d-gw", i)] = fmt.Sprintf("10.0.%d.%d", i/200, i%200+1)
	}
	specs, errs := buildAll(t, floodingRevision("192.0.2.9"), nodes)
	if len(errs) != len(nodes) {
		t.Fatalf("%d nodes refused, want all %d", len(errs), len(nodes))
	}
	if e := errs[0]; e.Node != "n000-gw" || e.Name != "every" || e.Peers != v1.MaxFloodPeers+1 ||
		!strings.Contains(e.Error(), `Layer2NetworkConfiguration "every", flooding static without peers: 257 other nodes, at most 256 peers`) {
		t.Errorf("first error %+v (%v)", e, e)
	}
	if got := flooding(specs["n000-gw"])["every"]; got != "static []" {
		t.Errorf("refused node floods %s, want no peers", got)
	}
}
