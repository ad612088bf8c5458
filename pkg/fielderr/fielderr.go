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

// Package fielderr turns apimachinery field errors into one Go error that callers can match: every invalid
// input of the project (API resources, node files, BPF tables, FRR models) is reported this way, naming the field
// and the value.
package fielderr

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrInvalid marks input that cannot be used as given; the message names the field and the value. Retrying does
// not help. Every error of Join matches it with errors.Is; so do JoinClass errors whose class wraps it.
var ErrInvalid = errors.New("invalid input")

// Errors is a non-empty field.ErrorList as one error: errors.Is matches Class, errors.As finds each
// *field.Error. The message has one line per field error.
type Errors struct {
	Class error
	List  field.ErrorList
}

func (e *Errors) Error() string {
	msgs := make([]string, len(e.List))
	for i, fe := range e.List {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the class followed by the field errors.
func (e *Errors) Unwrap() []error {
	out := make([]error, 0, len(e.List)+1)
	out = append(out, e.Class)
	for _, fe := range e.List {
		out = append(out, fe)
	}
	return out
}

// Join returns list as an error matching ErrInvalid; nil when list is empty.
func Join(list field.ErrorList) error { return JoinClass(ErrInvalid, list) }

// JoinClass is Join for callers that tell kinds of problems apart: the error matches class (and what class
// wraps) instead of ErrInvalid.
func JoinClass(class error, list field.ErrorList) error {
	var out field.ErrorList
	for _, fe := range list {
		if fe != nil {
			out = append(out, fe)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &Errors{Class: class, List: out}
}
