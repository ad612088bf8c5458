package nodespec

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/golden"
	"github.com/network-operator/network-operator/test/harness/testenv"
)

// TestGatewayNetworkSamples builds config/samples/gateway-network (the layer-2 network and the Links) into the
// configuration of a labelled node among two others: nothing is held back, both overlays flood statically to the
// other labelled node only, the unlabelled node gets neither. Run with -update to rewrite the golden file.
func TestGatewayNetworkSamples(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rev := &v1.NetworkConfigRevisionSpec{Revision: "sample"}
	for _, f := range []string{"layer2.yaml", "links.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "config", "samples", "gateway-network", f))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := testenv.DecodeObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, u := range objs {
			raw, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			switch u.GetKind() {
			case "Layer2NetworkConfiguration":
				var o v1.Layer2NetworkConfiguration
				if err := yaml.UnmarshalStrict(raw, &o); err != nil {
					t.Fatalf("%s %s: %v", f, u.GetName(), err)
				}
				rev.Layer2 = append(rev.Layer2, v1.Layer2Revision{Name: o.Name, Layer2NetworkConfigurationSpec: o.Spec})
			case v1.KindLink:
				var o v1.Link
				if err := yaml.UnmarshalStrict(raw, &o); err != nil {
					t.Fatalf("%s %s: %v", f, u.GetName(), err)
				}
				rev.Links = append(rev.Links, v1.LinkRevision{Name: o.Name, LinkSpec: o.Spec})
			default:
				t.Fatalf("%s: unexpected kind %s", f, u.GetKind())
			}
		}
	}
	rev.Sort()
	if held := HoldBack(rev); len(held) > 0 {
		t.Fatalf("samples held back: %+v", held)
	}
	label := map[string]string{"network.example.com/gateway-network": "true"}
	specs := map[string]*v1.NodeNetworkConfigSpec{}
	for name, lbls := range map[string]map[string]string{"gw-1": label, "gw-2": label, "other": nil} {
		vtep := map[string]string{"gw-1": "192.0.2.11", "gw-2": "192.0.2.12", "other": "192.0.2.13"}[name]
		spec, err := Build(rev, node(name, lbls, map[string]string{AnnotationVTEPAddress: vtep}), nil, opts())
		if err != nil {
			t.Fatal(err)
		}
		specs[name] = &spec
	}
	if errs := AssignFloodPeers(rev, specs); len(errs) > 0 {
		t.Fatal(errs)
	}
	if o := specs["other"]; len(o.Layer2s) != 0 || len(o.Links) != 0 {
		t.Errorf("the unlabelled node got %+v and %+v", o.Layer2s, o.Links)
	}
	got, err := yaml.Marshal(struct {
		Layer2s []v1.NodeLayer2 `json:"layer2s"`
		Links   []v1.NodeLink   `json:"links"`
	}{specs["gw-1"].Layer2s, specs["gw-1"].Links})
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "gateway-network-gw-1.golden.yaml"), got)
}
