package swap

import (
	"testing"

	"github.com/network-operator/network-operator/pkg/maps"
)

func TestTablesSizesAndVariants(t *testing.T) {
	for _, n := range []int{10, 1000, 10000} {
		a, err := Tables(n, 0)
		if err != nil {
			t.Fatalf("Tables(%d): %v", n, err)
		}
		b, err := Tables(n, 1)
		if err != nil {
			t.Fatalf("Tables(%d, 1): %v", n, err)
		}
		if got := len(a.Interfaces) + len(a.VRFs) + len(a.Redirects); got != n {
			t.Errorf("Tables(%d) has %d entries", n, got)
		}
		d := maps.DiffTables(a, b)
		// Interfaces change key (VLAN), so they count as removed+added; VRFs and redirects change value.
		if d.VRFs.Changed != len(a.VRFs) || d.Redirects.Changed != len(a.Redirects) || d.Interfaces.Added != len(a.Interfaces) {
			t.Errorf("variants of %d differ by %+v, want every entry", n, d)
		}
	}
}

func TestTablesTooLarge(t *testing.T) {
	if _, err := Tables(100000, 0); err == nil {
		t.Fatal("Tables(100000) succeeded; it exceeds the maps' limits")
	}
}
