package reconcile

import (
	"context"
	"errors"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/frrmodel"
)

// ErrTransient marks an error that says nothing about a spec's content: the apply was cancelled (the agent got
// SIGTERM), the kernel interrupted a netlink dump, a Secret or the API server did not answer for a moment. The
// engine records no failure for it (no failedRevision, no rollback): the node keeps what it has, and the same
// spec is tried again with backoff.
var ErrTransient = errors.New("transient error, retrying")

// Transient marks err as transient (nil stays nil), for callers that know, e.g. the Secret reader.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

type transientError struct{ err error }

func (e *transientError) Error() string   { return e.err.Error() }
func (e *transientError) Unwrap() []error { return []error{ErrTransient, e.err} }

// IsTransient tells whether err (of a plan, an apply step or a health check) is a fault rather than a refusal
// of the content. Cancellation and deadlines count, and so does any error while ctx is done: a step cut short
// by the cancellation fails with whatever its tool says (a killed frr-reload.py, an interrupted syscall).
func IsTransient(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, ErrTransient) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, netlink.ErrDumpInterrupted) || errors.Is(err, frrmodel.ErrSecretUnavailable) || ctx.Err() != nil
}

// StepTimeout bounds one apply step once the reconcile's context is cancelled: a step that started finishes
// (never half a netlink phase or half an FRR reload) within this, and the apply stops before the next step. The
// chart's terminationGracePeriodSeconds covers it.
const StepTimeout = 60 * time.Second

// stepContext is the context a step runs with: not cancelled with ctx (the step finishes), but bounded by
// StepTimeout from the moment ctx is done.
func stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(StepTimeout, cancel)
		context.AfterFunc(sctx, func() { t.Stop() })
	})
	return sctx, func() {
		stop()
		cancel()
	}
}
