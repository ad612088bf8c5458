// Package wait polls a condition until it holds, with a deadline: the one poll loop of the project's
// production code (cluster, kubenodes, uninstall) and, through package waittest, of its tests.
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
