package waittest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	notYet := errors.New("not yet")
	for _, tc := range []struct {
		name         string
		done         bool
		err          error
		wantDone     bool
		wantProgress string
		wantErr      bool
	}{
		{name: "done", done: true, wantDone: true},
		{name: "done wins over an error", done: true, err: Permanent(notYet), wantDone: true},
		{name: "not done, no reason"},
		{name: "an error is progress", err: notYet, wantProgress: "not yet"},
		{name: "a permanent error ends the wait", err: Permanent(notYet), wantErr: true},
		{name: "a wrapped permanent error ends the wait", err: fmt.Errorf("%w: revision failed", Permanent(notYet)), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, progress, err := Check(func() (bool, error) { return tc.done, tc.err })(context.Background())
			if done != tc.wantDone || progress != tc.wantProgress || (err != nil) != tc.wantErr {
				t.Fatalf("Check = %v, %q, %v; want %v, %q, error %v", done, progress, err, tc.wantDone, tc.wantProgress, tc.wantErr)
			}
			if err != nil && !errors.Is(err, notYet) {
				t.Errorf("permanent error %v does not wrap the original", err)
			}
		})
	}
}

// fakeTB records Fatalf (a real one would end the goroutine).
type fakeTB struct{ fatal string }

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }

func TestMust(t *testing.T) {
	var ok fakeTB
	Must(&ok, time.Millisecond, time.Minute, "done", func(context.Context) (bool, string, error) { return true, "", nil })
	if ok.fatal != "" {
		t.Errorf("Must failed a condition that holds: %s", ok.fatal)
	}
	var late fakeTB
	Must(&late, time.Millisecond, 10*time.Millisecond, "the answer", func(context.Context) (bool, string, error) { return false, "still 41", nil })
	if !strings.Contains(late.fatal, "waiting for the answer: ") || !strings.Contains(late.fatal, "(last: still 41)") {
		t.Errorf("Must's failure %q does not say what was waited for and why", late.fatal)
	}
	var _ TB = t // testing.TB satisfies TB
}
