package webhook_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// TestDasSchiffObjects applies das-schiff users' objects (testdata/dasschiff-legacy-api.yaml, from das-schiff's
// published docs, group adapted) as `kubectl apply --validate=strict` does - unknown fields are errors - in an
// order that puts every dependent before what it references, and checks each is stored exactly as written: the
// one stored form is das-schiff's spelling (nothing is rewritten).
func TestDasSchiffObjects(t *testing.T) {
	env := shared.Get(t)
	data, err := os.ReadFile(filepath.Join("testdata", "dasschiff-legacy-api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range objs {
		n++
		u.SetName("ds-" + u.GetName())
		want, _, _ := unstructured.NestedMap(u.Object, "spec")
		if err := env.Client.Create(ctxT(t), u, client.FieldValidation("Strict")); err != nil {
			t.Fatalf("%s %s refused: %v", u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() {
			if err := env.Client.Delete(context.Background(), u); err != nil {
				t.Errorf("delete %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		})
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(ctxT(t), client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		stored, _, _ := unstructured.NestedMap(got.Object, "spec")
		if w, g := mustJSON(t, want), mustJSON(t, stored); w != g {
			t.Errorf("%s %s stored as\n  %v\nwant as written\n  %v", u.GetKind(), u.GetName(), stored, want)
		}
	}
	if n != 7 {
		t.Fatalf("applied %d objects, want the 7 of the file", n)
	}
}

// mustJSON encodes v canonically (sorted keys, numbers alike whatever type the decoder picked).
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
