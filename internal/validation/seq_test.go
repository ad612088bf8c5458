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
			checkOne(t, ValidatePrefixSeq(field.NewPath("seq"), tc.seq), tc.want, fmt.Sprintf("seq: Invalid value: %d", tc.seq))
		})
	}
}

// checkOne asserts no error when want is empty, else exactly one containing want and prefix.
func checkOne(t *testing.T, errs field.ErrorList, want, prefix string) {
	t.Helper()
	switch {
	case want == "" && len(errs) > 0:
		t.Errorf("unexpected errors: %v", errs)
	case want != "" && len(errs) != 1:
		t.Errorf("got %d errors %v, want one containing %q", len(errs), errs, want)
	case want != "" && (!strings.Contains(errs[0].Error(), want) || !strings.HasPrefix(errs[0].Error(), prefix)):
		t.Errorf("error %q, want prefix %q and %q", errs[0], prefix, want)
	}
}
