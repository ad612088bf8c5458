package lastapplied

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

func TestSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "last-good.yaml")
	s := New(path)
	st, err := s.Load()
	if err != nil || st.Good != nil || st.Failure != nil {
		t.Fatalf("missing file: %+v %v, want an empty state", st, err)
	}
	spec := v1.NodeNetworkConfigSpec{Revision: "r1", VRFs: []v1.NodeVRF{{Name: "red", ID: 1, TableID: 100, VNI: 100}}}
	want := State{
		Good:    &Good{Revision: "r1", MapVersion: spec.MapVersion(), SpecHash: SpecHash(&spec), AppliedAt: time.Unix(1700000000, 0).UTC(), Spec: spec},
		Failure: &Failure{Revision: "r2", SpecHash: "ab", Error: "step interfaces: file exists", At: time.Unix(1700000100, 0).UTC()},
	}
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := New(path).Load()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v %v, want %+v", got, err, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	// The file is YAML too: an agent of an earlier version reads it (sigs.k8s.io/yaml, as it did).
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var asYAML State
	if err := yaml.UnmarshalStrict(data, &asYAML); err != nil || !reflect.DeepEqual(asYAML, want) {
		t.Fatalf("the file read as YAML: %+v %v, want %+v", asYAML, err, want)
	}
}

func TestLoadFormats(t *testing.T) {
	spec := v1.NodeNetworkConfigSpec{Revision: "r1", VRFs: []v1.NodeVRF{{Name: "red", ID: 1, TableID: 100, VNI: 100}}}
	want := State{Good: &Good{Revision: "r1", SpecHash: SpecHash(&spec), AppliedAt: time.Unix(1700000000, 0).UTC(), Spec: spec}}
	// What earlier agents wrote: sigs.k8s.io/yaml's encoding under the same kind of comment.
	old, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, content string
		want          *State // nil: refused
	}{
		{"YAML of earlier agents", "# Written by network-agent: the last good and the last failed node configuration.\n" + string(old), &want},
		{"empty", "", &State{}},
		{"YAML, unknown field", "good: {revison: x}\n", nil},
		{"JSON, unknown field", "# c\n{\"good\": {\"revison\": \"x\"}}\n", nil},
		{"JSON, field in another case", `{"good": {"Revision": "x"}}`, nil},
		{"JSON, duplicate field", `{"good": {"revision": "x", "revision": "y"}}`, nil},
		{"JSON, cut off", "# c\n{\"good\": {\"revision\": \"x\"", nil},
		{"JSON, trailing data", `{"good": {"revision": "x"}} {}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "last-good.yaml")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := New(path).Load()
			switch {
			case tc.want == nil && err == nil:
				t.Fatalf("loads without error: %+v", got)
			case tc.want != nil && (err != nil || !reflect.DeepEqual(got, *tc.want)):
				t.Fatalf("loaded %+v %v, want %+v", got, err, *tc.want)
			}
		})
	}
}

func TestSpecHash(t *testing.T) {
	a := v1.NodeNetworkConfigSpec{Revision: "r1"}
	b := a
	b.DataPlane.Strict = true
	if SpecHash(&a) == SpecHash(&b) || SpecHash(&a) != SpecHash(&v1.NodeNetworkConfigSpec{Revision: "r1"}) {
		t.Fatal("SpecHash does not follow the content")
	}
	// The hash is defined over json.Marshal (state files keep it across agent versions); HTML characters are
	// escaped there and must be here.
	c := v1.NodeNetworkConfigSpec{Revision: "r<&>1", VRFs: []v1.NodeVRF{{Name: "red", ID: 1, TableID: 100, VNI: 100,
		RouteTargets: []string{"65000:100"}, Leaks: []v1.VRFLeak{{Source: "blue", Seq: 10, Communities: []string{"65000:1"},
			Import: []v1.NodePrefixItem{{CIDR: "10.0.0.0/24", Seq: 1, Action: v1.PrefixActionPermit}}}}}}}
	for _, s := range []*v1.NodeNetworkConfigSpec{&a, &b, &c} {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got, want := SpecHash(s), hex.EncodeToString(sum[:]); got != want {
			t.Errorf("SpecHash of %s = %s, want sha256 of json.Marshal %s", strings.TrimSpace(string(data)), got, want)
		}
	}
}
