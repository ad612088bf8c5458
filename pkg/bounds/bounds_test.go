package bounds

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVNI(t *testing.T) {
	for _, tc := range []struct {
		vni  int64
		want string // "" = valid
	}{
		{0, "spec.vni: Invalid value: 0: VNI must be within 1..16777215"},
		{-1, "spec.vni: Invalid value: -1: VNI must be within 1..16777215"},
		{1, ""},
		{MaxVNI, ""},
		{MaxVNI + 1, "spec.vni: Invalid value: 16777216: VNI must be within 1..16777215"},
	} {
		errs := VNI(field.NewPath("spec", "vni"), tc.vni)
		switch {
		case tc.want == "" && len(errs) != 0:
			t.Errorf("VNI(%d) = %v, want valid", tc.vni, errs)
		case tc.want != "" && (len(errs) != 1 || errs[0].Error() != tc.want):
			t.Errorf("VNI(%d) = %v, want %q", tc.vni, errs, tc.want)
		}
	}
}
