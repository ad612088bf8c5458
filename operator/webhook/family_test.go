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

package webhook

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// TestVTEPFamilyAtAdmission: with the operator's --underlay-vtep-family the layer-2 and Link webhooks refuse static
// flooding peers of the other family, naming the field and value; without it (Options{}) any one family goes.
// (A fake API reader: the rule is the webhook's wiring of Options, the rest is internal/validation's.)
func TestVTEPFamilyAtAdmission(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := fake.NewClientBuilder().WithScheme(scheme).Build()
	static := func(peers ...string) *v1.Flooding { return &v1.Flooding{Mode: v1.FloodingStatic, Peers: peers} }
	l2 := func(f *v1.Flooding) *v1.Layer2NetworkConfiguration {
		return &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
			Spec: v1.Layer2NetworkConfigurationSpec{ID: 300, VNI: 3000, MTU: 1500, Flooding: f}}
	}
	link := func(f *v1.Flooding) *v1.Link {
		return &v1.Link{ObjectMeta: metav1.ObjectMeta{Name: "vx"},
			Spec: v1.LinkSpec{InterfaceName: "vxgw", VXLAN: &v1.VXLANLink{VNID: 4000, Port: 4789, Flooding: f}}}
	}
	for _, tc := range []struct {
		name   string
		family v1.IPFamily
		peers  []string
		want   string // "" admitted
	}{
		{name: "IPv6 peers in an IPv6 fabric", family: v1.IPv6, peers: []string{"2001:db8::1", "2001:db8::2"}},
		{name: "IPv4 peers, family not configured", peers: []string{"192.0.2.1"}},
		{name: "IPv4 peer in an IPv6 fabric", family: v1.IPv6, peers: []string{"192.0.2.1"},
			want: `flooding.peers[0]: Invalid value: "192.0.2.1": an IPv4 address, but the fabric's VTEPs are IPv6`},
		{name: "IPv6 peer in an IPv4 fabric", family: v1.IPv4, peers: []string{"2001:db8::1"},
			want: `flooding.peers[0]: Invalid value: "2001:db8::1": an IPv6 address, but the fabric's VTEPs are IPv4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			_, l2Err := (&layer2Validator{reader: r, vtepFamily: tc.family}).ValidateCreate(ctx, l2(static(tc.peers...)))
			_, linkErr := (&linkValidator{reader: r, vtepFamily: tc.family}).ValidateCreate(ctx, link(static(tc.peers...)))
			for what, err := range map[string]error{"Layer2NetworkConfiguration": l2Err, "Link": linkErr} {
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s refused: %v", what, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("%s: err = %v, want it to contain %q", what, err, tc.want)
				}
			}
		})
	}
}
