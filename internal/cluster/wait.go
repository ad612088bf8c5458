package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimeout is returned by poll when the condition did not hold before the deadline.
var ErrTimeout = errors.New("condition not met before the deadline")

// poll calls cond every interval until it reports true, returns an error, or timeout (or ctx) ends. cond also
// returns why it is not done yet; the last reason goes into the timeout error, so a failure says what was
// missing rather than only that time ran out.
func poll(parent context.Context, interval, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	last := ""
	for {
		ok, reason, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		if ctx.Err() == nil || last == "" {
			last = reason
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("%s: %w", what, parent.Err())
			}
			if last != "" {
				return fmt.Errorf("%s: %w within %v (last: %s)", what, ErrTimeout, timeout, last)
			}
			return fmt.Errorf("%s: %w within %v", what, ErrTimeout, timeout)
		case <-t.C:
		}
	}
}
