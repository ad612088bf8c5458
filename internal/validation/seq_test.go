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

package validation

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/bgp"
)

// TestASNLimitsMatchTheAPI: the CRD bounds of AS numbers (api/v1alpha1) are the BGP rule's (pkg/bgp).
func TestASNLimitsMatchTheAPI(t *testing.T) {
	if v1.MinASN != bgp.MinASN || v1.MaxASN != bgp.MaxASN || v1.ASTrans != bgp.ASTrans {
		t.Fatalf("api: ASN %d..%d, AS_TRANS %d; pkg/bgp: %d..%d, %d", v1.MinASN, v1.MaxASN, v1.ASTrans,
			bgp.MinASN, bgp.MaxASN, bgp.ASTrans)
	}
}

func TestValidatePrefixSeq(t *testing.T) {
	tests := []struct {
		seq  int64
		want string
	}{
		{0, ""}, {1, ""}, {4294967295, ""},
		{-1, "prefix-list sequence must be within 1..4294967295 (0: from the position)"},
		{4294967296, "prefix-list sequence must be within 1..4294967295"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.seq), func(t *testing.T) {
			errs := ValidatePrefixSeq(field.NewPath("seq"), tc.seq)
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if prefix := fmt.Sprintf("seq: Invalid value: %d", tc.seq); len(errs) != 1 ||
				!strings.HasPrefix(errs[0].Error(), prefix) || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("errors %v, want one starting %q containing %q", errs, prefix, tc.want)
			}
		})
	}
}
