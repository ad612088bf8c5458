package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// Attach and Detach run in parallel for different interfaces and one at a time per interface: after many
// goroutines attached (switching hooks) and detached the same few interfaces while others read Attachments and
// Report, the loader's record of every interface matches what the kernel runs - exactly our one hook or nothing,
// no leaked link, filter or pin - and Close waits for the operations under way, after which they fail with
// ErrClosed.
func TestConcurrentAttachDetach(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	const ifaces, workersPerIface, rounds = 4, 3, 6
	var names []string
	for i := range ifaces {
		names = append(names, fmt.Sprintf("rx%d", i))
		addVeth(t, ns, names[i], fmt.Sprintf("tx%d", i))
	}
	dir := newPinDir(t)
	l := mustLoad(t, testOptions(ns, dir, defaultParams()))
	ctx := context.Background()

	// Each worker of an interface cycles through its own order of operations, so that they interleave.
	ops := []func(ifname string) error{
		func(n string) error { _, err := l.Attach(ctx, n, ModeTCX); return err },
		func(n string) error { _, err := l.Attach(ctx, n, ModeTC); return err },
		func(n string) error { return l.Detach(ctx, n) },
	}
	var wg sync.WaitGroup
	errs := make(chan error, ifaces*workersPerIface*rounds*len(ops))
	stopReading := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stopReading:
				return
			default:
			}
			for _, a := range l.Attachments() {
				if !slices.Contains(names, a.Interface) || (a.Mode != ModeTCX && a.Mode != ModeTC) {
					errs <- fmt.Errorf("attachment %+v during the run", a)
				}
			}
			_ = l.Report()
		}
	})
	for _, n := range names {
		for w := range workersPerIface {
			wg.Go(func() {
				for r := range rounds {
					for k := range ops {
						if err := ops[(w+r+k)%len(ops)](n); err != nil {
							errs <- fmt.Errorf("%s: %w", n, err)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	close(stopReading)
	readers.Wait()
	close(errs)
	for err := range errs {
		skipIfNotSupported(t, err)
		t.Error(err)
	}

	recorded := map[string]Attachment{}
	for _, a := range l.Attachments() {
		recorded[a.Interface] = a
	}
	for _, n := range names {
		h := kernelHooks(t, ns, n)
		a, ok := recorded[n]
		var wantTCX, wantFilters []int
		switch {
		case !ok:
		case a.Mode == ModeTCX:
			wantTCX = []int{int(a.ProgramID)}
			assertRunning(t, ns, a)
		case a.Mode == ModeTC:
			wantFilters = []int{int(a.ProgramID)}
			assertRunning(t, ns, a)
		}
		gotTCX, gotFilters := asInts(h.tcx), asInts(h.filterProgs())
		if !slices.Equal(gotTCX, wantTCX) || !slices.Equal(gotFilters, wantFilters) {
			t.Errorf("%s: recorded %+v (recorded: %v); the kernel runs tcx %v, cls_bpf %v", n, a, ok, gotTCX, gotFilters)
		}
	}
	var pins []string
	for _, kind := range []string{kindTCX, kindXDP} {
		entries, err := os.ReadDir(l.linkKindDir(kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			pins = append(pins, filepath.Join(l.linkKindDir(kind), e.Name()))
		}
	}
	slices.Sort(pins)
	var wantPins []string
	for _, a := range recorded {
		if a.Pin != "" {
			wantPins = append(wantPins, a.Pin)
		}
	}
	slices.Sort(wantPins)
	if !slices.Equal(pins, wantPins) {
		t.Errorf("pinned links %v, want those of the recorded attachments %v", pins, wantPins)
	}

	// Close while attaches are under way: each one either finished before or reports ErrClosed.
	var closing sync.WaitGroup
	closeErrs := make(chan error, len(names))
	for _, n := range names {
		closing.Go(func() {
			if _, err := l.Attach(ctx, n, ModeTCX); err != nil && !errors.Is(err, ErrClosed) {
				closeErrs <- fmt.Errorf("%s: %w, want success or ErrClosed", n, err)
			}
		})
	}
	if err := l.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	closing.Wait()
	close(closeErrs)
	for err := range closeErrs {
		t.Error(err)
	}
	if _, err := l.Attach(ctx, names[0], ModeTCX); !errors.Is(err, ErrClosed) {
		t.Errorf("attach after Close: %v, want ErrClosed", err)
	}
}

func asInts[T ~uint32](ids []T) []int {
	var out []int
	for _, id := range ids {
		out = append(out, int(id))
	}
	return out
}
