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

package webhook_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// TestNodeNetworkConfigUnderlaySchema: the API server stores IPv6 and dual-stack underlays (IPv6 VTEP, numbered,
// unnumbered and link-local neighbours) and refuses, by the CRD's schema, what no agent could take: a neighbour
// with neither interface nor address, an unknown or repeated address family.
func TestNodeNetworkConfigUnderlaySchema(t *testing.T) {
	env := shared.Get(t)
	nnc := func(name, underlay string) *unstructured.Unstructured {
		var u map[string]any
		if err := yaml.Unmarshal([]byte(underlay), &u); err != nil {
			t.Fatalf("underlay of %s: %v", name, err)
		}
		o := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"revision": "r1", "underlay": u}}}
		o.SetAPIVersion(v1.GroupVersion.String())
		o.SetKind("NodeNetworkConfig")
		o.SetName(name)
		return o
	}
	for i, tc := range []struct {
		underlay string
		want     string // "" stored
	}{
		{underlay: `{asn: 65001, routerID: 10.0.0.1, vtepAddress: "2001:db8:ff::1", addressFamilies: [IPv6],
			neighbors: [{interface: eth0, remoteASN: external}, {address: "2001:db8::1", remoteASN: "65000"},
			{interface: eth1, address: "fe80::1", remoteASN: external}]}`},
		{underlay: `{asn: 65001, routerID: 10.0.0.1, vtepAddress: 10.0.0.1, addressFamilies: [IPv4, IPv6]}`},
		{underlay: `{asn: 65001, routerID: 10.0.0.1, vtepAddress: 10.0.0.1, neighbors: [{remoteASN: external}]}`,
			want: "an underlay neighbour needs an interface (unnumbered), an address (numbered), or both"},
		{underlay: `{asn: 65001, routerID: 10.0.0.1, vtepAddress: 10.0.0.1, addressFamilies: [IPv5]}`,
			want: `spec.underlay.addressFamilies[0]: Unsupported value: "IPv5"`},
		{underlay: `{asn: 65001, routerID: 10.0.0.1, vtepAddress: 10.0.0.1, addressFamilies: [IPv6, IPv6]}`,
			want: `spec.underlay.addressFamilies[1]: Duplicate value: "IPv6"`},
		{underlay: `{asn: 65001, routerID: 10.0.0.1, vtepAddress: 10.0.0.1, addressFamilies: [IPv4, IPv6, IPv4]}`,
			want: "spec.underlay.addressFamilies: Too many: 3: must have at most 2 items"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			o := nnc(fmt.Sprintf("underlay-%d", i), tc.underlay)
			err := env.Client.Create(ctxT(t), o)
			if err == nil {
				t.Cleanup(func() { _ = env.Client.Delete(ctxT(t), o) })
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
