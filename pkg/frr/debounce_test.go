package frr

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestDebouncer(t *testing.T) {
	var mu sync.Mutex
	var applied []string
	release := make(chan struct{}, 10)
	started := make(chan string, 10)
	done := make(chan Result, 10)
	d := NewDebouncer(200*time.Millisecond, func(ctx context.Context, cfg []byte) (Result, error) {
		mu.Lock()
		applied = append(applied, string(cfg))
		mu.Unlock()
		started <- string(cfg)
		<-release
		return Result{Hash: string(cfg)}, nil
	}, func(r Result, err error) { done <- r })
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- d.Run(ctx) }()

	wait := func(want string) {
		t.Helper()
		select {
		case r := <-done:
			if r.Hash != want {
				t.Fatalf("applied %q, want %q", r.Hash, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing applied, want %q", want)
		}
	}

	// A burst costs one apply, of the newest config.
	for _, c := range []string{"a", "b", "c"} {
		d.Submit([]byte(c))
	}
	release <- struct{}{}
	wait("c")

	// A config submitted while an apply runs is applied afterwards.
	d.Submit([]byte("d"))
	select {
	case <-started: // "c"
	default:
		t.Fatal("apply of c did not report its start")
	}
	select {
	case c := <-started:
		if c != "d" {
			t.Fatalf("started %q, want d", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("apply of d never started")
	}
	d.Submit([]byte("e"))
	release <- struct{}{}
	wait("d")
	release <- struct{}{}
	wait("e")

	mu.Lock()
	got := slices.Clone(applied)
	mu.Unlock()
	if !slices.Equal(got, []string{"c", "d", "e"}) {
		t.Errorf("applied %q, want [c d e]", got)
	}
	cancel()
	if err := <-runErr; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
}
