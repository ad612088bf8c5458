package wait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var errBroken = errors.New("broken for good")

// counting returns a condition that reports the call number as progress and is done from call doneAt on
// (never when 0); at call failAt it fails permanently.
func counting(calls *int, doneAt, failAt int) Condition {
	return func(context.Context) (bool, string, error) {
		*calls++
		if *calls == failAt {
			return false, "", errBroken
		}
		return doneAt != 0 && *calls >= doneAt, fmt.Sprintf("call %d not done", *calls), nil
	}
}

func TestPoll(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name          string
		ctx           context.Context
		timeout       time.Duration
		doneAt        int
		failAt        int
		wantIs        error // nil: success
		wantMsg       []string
		wantCalls     int // 0: not checked
		wantMoreCalls int // at least this many calls
	}{
		{name: "done at once", ctx: context.Background(), timeout: time.Minute, doneAt: 1, wantCalls: 1},
		{name: "done on the third check", ctx: context.Background(), timeout: time.Minute, doneAt: 3, wantCalls: 3},
		{name: "timeout names the last progress", ctx: context.Background(), timeout: 30 * time.Millisecond,
			wantIs: ErrTimeout, wantMsg: []string{"the thing: ", "within 30ms", "(last: call ", " not done)"}, wantMoreCalls: 2},
		{name: "permanent error stops early", ctx: context.Background(), timeout: time.Minute, failAt: 2,
			wantIs: errBroken, wantMsg: []string{"the thing: broken for good"}, wantCalls: 2},
		{name: "cancelled context", ctx: cancelled, timeout: time.Minute,
			wantIs: context.Canceled, wantMsg: []string{"the thing: context canceled"}, wantCalls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := Poll(tc.ctx, time.Millisecond, tc.timeout, "the thing", counting(&calls, tc.doneAt, tc.failAt))
			switch {
			case tc.wantIs == nil && err != nil:
				t.Fatalf("Poll = %v, want success", err)
			case tc.wantIs != nil && !errors.Is(err, tc.wantIs):
				t.Fatalf("Poll = %v, want %v", err, tc.wantIs)
			}
			for _, w := range tc.wantMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Poll = %q, want it to contain %q", err, w)
				}
			}
			if tc.wantIs != context.Canceled && errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Poll = %v: a timeout is ErrTimeout, not the context's deadline", err)
			}
			if tc.wantCalls != 0 && calls != tc.wantCalls {
				t.Errorf("%d checks, want %d", calls, tc.wantCalls)
			}
			if calls < tc.wantMoreCalls {
				t.Errorf("%d checks, want at least %d", calls, tc.wantMoreCalls)
			}
		})
	}
}

// TestPollCancelWhileWaiting: cancelling the parent context ends a wait that is between checks.
func TestPollCancelWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	checked := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- Poll(ctx, time.Hour, time.Hour, "forever", func(context.Context) (bool, string, error) {
			close(checked)
			return false, "never", nil
		})
	}()
	<-checked
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("Poll = %v, want context.Canceled", err)
	}
}

// TestPollKeepsReasonBeforeDeadline: a check cut short by the deadline does not replace the last real reason.
func TestPollKeepsReasonBeforeDeadline(t *testing.T) {
	calls := 0
	err := Poll(context.Background(), time.Millisecond, 20*time.Millisecond, "x", func(ctx context.Context) (bool, string, error) {
		if calls++; calls == 1 {
			return false, "the real reason", nil
		}
		<-ctx.Done() // the second check runs into the deadline
		return false, "cut short: " + ctx.Err().Error(), nil
	})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "(last: the real reason)") {
		t.Fatalf("Poll = %v, want the reason from before the deadline", err)
	}
}

func TestPollBadInterval(t *testing.T) {
	err := Poll(context.Background(), 0, time.Second, "x", func(context.Context) (bool, string, error) { return true, "", nil })
	if !errors.Is(err, ErrBadInterval) {
		t.Fatalf("Poll = %v, want ErrBadInterval", err)
	}
}
