package lab

import (
	"context"
	"time"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/internal/wait/waittest"
)

// WaitFor polls cond every interval until it returns true, returns an error made by Permanent, or timeout (or
// ctx) ends; a timeout names the last error cond returned. It is package wait's one loop with the lab's argument
// order.
func WaitFor(ctx context.Context, timeout, interval time.Duration, cond func() (bool, error)) error {
	return wait.Poll(ctx, interval, timeout, "waiting", waittest.Check(cond))
}

// Permanent wraps an error so WaitFor gives up at once instead of retrying.
func Permanent(err error) error { return waittest.Permanent(err) }
