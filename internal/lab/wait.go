package lab

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimeout is returned by WaitFor when the condition did not hold before the deadline.
var ErrTimeout = errors.New("condition not met before deadline")

// WaitFor polls cond every interval until it returns true, returns an error, or timeout (or ctx) ends. The last
// non-nil error cond returned while false is reported with the timeout.
func WaitFor(ctx context.Context, timeout, interval time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil && errors.Is(err, errStopWaiting) {
			return err
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%w after %v: %w", ErrTimeout, timeout, err)
			}
			return fmt.Errorf("%w after %v", ErrTimeout, timeout)
		case <-tick.C:
		}
	}
}

var errStopWaiting = errors.New("stop waiting")

// Permanent wraps an error so WaitFor gives up at once instead of retrying.
func Permanent(err error) error { return fmt.Errorf("%w: %w", errStopWaiting, err) }
