/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/network-operator/network-operator/pkg/bfd"
)

// schemaBounds is the minimum and maximum of a schema property; nil when the schema has none.
type schemaBounds struct{ min, max *int64 }

func b(lo, hi int64) schemaBounds   { return schemaBounds{&lo, &hi} }
func atLeast(lo int64) schemaBounds { return schemaBounds{min: &lo} }

func (x schemaBounds) String() string {
	f := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	return "[" + f(x.min) + ", " + f(x.max) + "]"
}

// TestCRDBoundsMatchConstants ties the kubebuilder markers (which cannot name constants) to the Go constants the
// validator, operator and agent use: every minimum/maximum in the generated CRDs must be listed here, from the
// constants. A marker changed without its constant (or the reverse), or a new bounded field, fails.
func TestCRDBoundsMatchConstants(t *testing.T) {
	prefixItem := func(list string) map[string]schemaBounds {
		return map[string]schemaBounds{
			list + "[].seq": b(MinPrefixSeq, MaxPrefixSeq),
			list + "[].ge":  b(0, MaxPrefixLen),
			list + "[].le":  b(0, MaxPrefixLen),
		}
	}
	want := map[string]map[string]schemaBounds{
		"bgppeerings": merge(prefixItem(".spec.import"), prefixItem(".spec.export"), map[string]schemaBounds{
			".spec.remoteASN":            b(MinASN, MaxASN),
			".spec.maximumPrefixes":      b(MinMaximumPrefixes, MaxMaximumPrefixes),
			".spec.bfd.detectMultiplier": b(bfd.MinDetectMultiplier, bfd.MaxDetectMultiplier),
		}),
		"vrfrouteconfigurations": merge(prefixItem(".spec.import"), prefixItem(".spec.export"), map[string]schemaBounds{
			".spec.vni": b(MinVNI, MaxVNI),
			".spec.seq": b(MinRouteMapSeq, MaxRouteMapSeq),
			".spec.mtu": b(MinMTU, MaxMTU),
		}),
		"layer2networkconfigurations": {
			".spec.id":  b(MinVLAN, MaxVLAN),
			".spec.vni": b(MinVNI, MaxVNI),
			".spec.mtu": b(MinMTU, MaxMTU),
		},
		"nodenetworkconfigs": {
			".spec.underlay.asn":                    b(MinASN, MaxASN),
			".spec.vrfs[].id":                       b(MinVRFID, MaxVRFID),
			".spec.vrfs[].tableID":                  atLeast(MinTableID),
			".spec.dataplane.interfaces[].vlan":     b(0, MaxVLAN), // 0: untagged
			".spec.mirrors[].match.srcPort":         b(0, MaxPort),
			".spec.mirrors[].match.dstPort":         b(0, MaxPort),
			".spec.mirrors[].target.key":            b(0, MaxGREKey),
			".spec.routingTables[].tableID":         b(MinRoutingTableID, MaxRoutingTableID),
			".spec.links[].bridge.mtu":              b(MinMTU, MaxMTU),
			".spec.underlay.bfd.detectMultiplier":   b(bfd.MinDetectMultiplier, bfd.MaxDetectMultiplier),
			".spec.bgpPeers[].bfd.detectMultiplier": b(bfd.MinDetectMultiplier, bfd.MaxDetectMultiplier),
		},
		"routingtables": {
			".spec.tableId": b(MinRoutingTableID, MaxRoutingTableID),
		},
		"mirrortargets": {
			".spec.key": b(0, MaxGREKey),
		},
		"mirrorselectors": {
			".spec.trafficMatch.srcPort": b(0, MaxPort),
			".spec.trafficMatch.dstPort": b(0, MaxPort),
		},
		"networkconfigrevisions": {
			".spec.sequence": atLeast(1),
		},
		"podnetworkconfigs": {
			".spec.primary.mtu":        b(MinPodMTU, MaxMTU),
			".spec.primary.txQueueLen": b(0, MaxPodTxQueueLen),
			".spec.interfaces[].mtu":   b(MinPodMTU, MaxMTU),
			".spec.interfaces[].vlan":  b(0, MaxVLAN), // 0: not a vlan interface
		},
		"links": {
			".spec.bridge.mtu": b(MinMTU, MaxMTU),
			".spec.vxlan.mtu":  b(MinMTU, MaxMTU),
			".spec.vxlan.vnid": b(MinVNI, MaxVNI),
			".spec.vxlan.port": b(MinPort, MaxPort),
		},
	}

	files, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under config/crd/bases (%v)", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Names    struct{ Plural string }
				Versions []struct {
					Name   string
					Schema struct {
						OpenAPIV3Schema crdSchema `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		plural := crd.Spec.Names.Plural
		seen[plural] = true
		for _, v := range crd.Spec.Versions {
			got := map[string]schemaBounds{}
			v.Schema.OpenAPIV3Schema.walk("", got)
			for path, g := range got {
				if strings.HasPrefix(path, ".status.conditions[]") {
					continue // metav1.Condition's own markers
				}
				w, ok := want[plural][path]
				if !ok {
					t.Errorf("%s %s: bounds %s in the CRD but not tied to a constant here", plural, path, g)
					continue
				}
				if !eq(g.min, w.min) || !eq(g.max, w.max) {
					t.Errorf("%s %s: CRD bounds %s, constants say %s", plural, path, g, w)
				}
			}
			for path, w := range want[plural] {
				if _, ok := got[path]; !ok {
					t.Errorf("%s %s: no bounds in the CRD, constants say %s", plural, path, w)
				}
			}
		}
	}
	for plural := range want {
		if !seen[plural] {
			t.Errorf("no CRD %s", plural)
		}
	}
}

type crdSchema struct {
	Minimum    *int64               `json:"minimum"`
	Maximum    *int64               `json:"maximum"`
	Properties map[string]crdSchema `json:"properties"`
	Items      *crdSchema           `json:"items"`
}

func (s crdSchema) walk(path string, out map[string]schemaBounds) {
	if s.Minimum != nil || s.Maximum != nil {
		out[path] = schemaBounds{s.Minimum, s.Maximum}
	}
	for name, p := range s.Properties {
		p.walk(path+"."+name, out)
	}
	if s.Items != nil {
		s.Items.walk(path+"[]", out)
	}
}

func eq(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func merge(ms ...map[string]schemaBounds) map[string]schemaBounds {
	out := map[string]schemaBounds{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
