// Package waittest adapts package wait to tests: conditions written as func() (bool, error), errors that end a
// wait at once, and a wait that fails the test.
package waittest

import (
	"context"
	"errors"
	"time"

	"github.com/network-operator/network-operator/internal/wait"
)

// Check adapts a condition written as func() (bool, error), common in tests: its error is the progress
// message (not done yet, because), unless it wraps an error made by Permanent, which ends the wait.
func Check(f func() (bool, error)) wait.Condition {
	return func(context.Context) (bool, string, error) {
		done, err := f()
		var p *permanentError
		switch {
		case done:
			return true, "", nil
		case errors.As(err, &p):
			return false, "", err
		case err != nil:
			return false, err.Error(), nil
		}
		return false, "", nil
	}
}

// Permanent marks err so a Check condition returning it (or an error wrapping it) stops the wait at once.
func Permanent(err error) error { return &permanentError{err: err} }

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// TB is the part of testing.TB that Must needs (so this package does not link package testing into binaries).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Must polls like Poll (without a parent context: it also serves in Cleanup functions, after the test's
// context ended) and fails the test when the wait fails.
func Must(tb TB, interval, timeout time.Duration, what string, cond wait.Condition) {
	tb.Helper()
	if err := wait.Poll(context.Background(), interval, timeout, "waiting for "+what, cond); err != nil {
		tb.Fatalf("%v", err)
	}
}
