package cluster

import (
	"context"
	"time"

	"github.com/network-operator/network-operator/internal/wait"
)

// poll is wait.Poll, for counters.go (kept until that file calls wait.Poll itself).
func poll(ctx context.Context, interval, timeout time.Duration, what string, cond wait.Condition) error {
	return wait.Poll(ctx, interval, timeout, what, cond)
}
