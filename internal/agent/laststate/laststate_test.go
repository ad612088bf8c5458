package laststate

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

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
	if err := os.WriteFile(path, []byte("good: {revison: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); err == nil {
		t.Fatal("a corrupt state file loads without error")
	}
}

func TestSpecHash(t *testing.T) {
	a := v1.NodeNetworkConfigSpec{Revision: "r1"}
	b := a
	b.DataPlane.Strict = true
	if SpecHash(&a) == SpecHash(&b) || SpecHash(&a) != SpecHash(&v1.NodeNetworkConfigSpec{Revision: "r1"}) {
		t.Fatal("SpecHash does not follow the content")
	}
}
