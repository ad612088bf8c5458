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

package fielderr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestJoin(t *testing.T) {
	errNode := errors.New("node problem")
	errMissing := fmt.Errorf("missing: %w", ErrInvalid)
	list := field.ErrorList{field.Invalid(field.NewPath("a"), 1, "bad"), nil, field.Required(field.NewPath("b"), "")}
	tests := []struct {
		name    string
		err     error
		is, not []error
	}{
		{"Join", Join(list), []error{ErrInvalid}, []error{errNode}},
		{"class of its own", JoinClass(errNode, list), []error{errNode}, []error{ErrInvalid}},
		{"class wrapping ErrInvalid", JoinClass(errMissing, list), []error{errMissing, ErrInvalid}, []error{errNode}},
		{"wrapped and joined", fmt.Errorf("node x: %w", errors.Join(JoinClass(errNode, list), Join(list))), []error{errNode, ErrInvalid}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range tc.is {
				if !errors.Is(tc.err, target) {
					t.Errorf("errors.Is(%v) = false", target)
				}
			}
			for _, target := range tc.not {
				if errors.Is(tc.err, target) {
					t.Errorf("errors.Is(%v) = true", target)
				}
			}
			var fe *field.Error
			if !errors.As(tc.err, &fe) || fe.Field != "a" {
				t.Errorf("errors.As *field.Error: %v", fe)
			}
			if !strings.Contains(tc.err.Error(), "a: Invalid value: 1: bad\nb: Required value") {
				t.Errorf("message %q", tc.err)
			}
		})
	}
	if Join(nil) != nil || Join(field.ErrorList{nil}) != nil {
		t.Error("Join of no errors is not nil")
	}
}
