// Package wait polls a condition until it holds, with a deadline: the one poll loop of the project's
// production code (cluster, kubenodes, uninstall) and, through Must, of its tests.
//
// A condition returns whether it is done, a progress message (what is still missing: the timeout error
// carries the last one, so a failure says why, not only that time ran out) and an error, which is permanent:
// it ends the wait at once.
package wait

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimeout is returned (wrapped) when the condition did not hold before the deadline.
var ErrTimeout = errors.New("condition not met before the deadline")

// ErrBadInterval is returned for an interval that is not positive.
var ErrBadInterval = errors.New("want a positive interval")

// Condition is checked until it is done. progress says what is missing; a non-nil error is permanent.
type Condition func(ctx context.Context) (done bool, progress string, err error)

// Poll checks cond at once and then every interval until it is done, returns an error, timeout passes or ctx
// ends. Every error starts with what; a timeout wraps ErrTimeout and names the last progress message, a
// cancelled ctx wraps ctx's error, a permanent error is wrapped as it is.
func Poll(ctx context.Context, interval, timeout time.Duration, what string, cond Condition) error {
	if interval <= 0 {
		return fmt.Errorf("%s: poll interval %v: %w", what, interval, ErrBadInterval)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := ""
	for {
		done, progress, err := cond(wctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if done {
			return nil
		}
		// A check that ran into the deadline usually only reports that: keep the reason before it.
		if progress != "" && (wctx.Err() == nil || last == "") {
			last = progress
		}
		select {
		case <-wctx.Done():
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if last != "" {
				return fmt.Errorf("%s: %w within %v (last: %s)", what, ErrTimeout, timeout, last)
			}
			return fmt.Errorf("%s: %w within %v", what, ErrTimeout, timeout)
		case <-tick.C:
		}
	}
}

// Check adapts a condition written as func() (bool, error), common in tests: its error is the progress
// message (not done yet, because), unless it wraps an error made by Permanent, which ends the wait.
func Check(f func() (bool, error)) Condition {
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
func Must(tb TB, interval, timeout time.Duration, what string, cond Condition) {
	tb.Helper()
	if err := Poll(context.Background(), interval, timeout, "waiting for "+what, cond); err != nil {
		tb.Fatalf("%v", err)
	}
}
