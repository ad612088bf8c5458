package frr

import (
	"context"
	"sync"
	"time"
)

// ApplyFunc applies one config (Reloader.Apply fits).
type ApplyFunc func(ctx context.Context, cfg []byte) (Result, error)

// Debouncer collects configs submitted in quick succession and applies only
// the newest, Delay after the first submission of a burst. A burst of
// reconciles thus costs one reload.
type Debouncer struct {
	delay  time.Duration
	apply  ApplyFunc
	onDone func(Result, error)

	mu      sync.Mutex
	pending []byte
	has     bool
	wake    chan struct{}
}

// NewDebouncer returns a Debouncer; onDone (may be nil) sees every outcome.
func NewDebouncer(delay time.Duration, apply ApplyFunc, onDone func(Result, error)) *Debouncer {
	return &Debouncer{delay: delay, apply: apply, onDone: onDone, wake: make(chan struct{}, 1)}
}

// Submit records cfg as the newest desired config. It never blocks.
func (d *Debouncer) Submit(cfg []byte) {
	d.mu.Lock()
	d.pending, d.has = cfg, true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run applies submitted configs until ctx ends. A config submitted while an
// apply runs is applied in the next round.
func (d *Debouncer) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	if !timer.Stop() {
		<-timer.C
	}
	armed := false
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-d.wake:
			if !armed {
				timer.Reset(d.delay)
				armed = true
			}
		case <-timer.C:
			armed = false
			d.mu.Lock()
			cfg, has := d.pending, d.has
			d.pending, d.has = nil, false
			d.mu.Unlock()
			if !has {
				continue
			}
			res, err := d.apply(ctx, cfg)
			if d.onDone != nil {
				d.onDone(res, err)
			}
		}
	}
}
