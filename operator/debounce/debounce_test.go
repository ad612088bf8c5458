package debounce

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/network-operator/network-operator/internal/wait/waittest"
)

var req = reconcile.Request{NamespacedName: types.NamespacedName{Name: "snapshot"}}

func cm(name string) client.Object {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waittest.Must(t, time.Millisecond, 10*time.Second, what, func(context.Context) (bool, string, error) { return cond(), "", nil })
}

// getWithin returns the next item or fails the test when none arrives in time.
func getWithin(t *testing.T, q Queue, d time.Duration) reconcile.Request {
	t.Helper()
	got := make(chan reconcile.Request, 1)
	go func() {
		item, shutdown := q.Get()
		if !shutdown {
			got <- item
		}
	}()
	select {
	case r := <-got:
		return r
	case <-time.After(d):
		t.Fatalf("no item within %s", d)
		return reconcile.Request{}
	}
}

// TestBurstFiresOnceAfterFirstEvent steps a fake clock through a burst of events.
func TestBurstFiresOnceAfterFirstEvent(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	t.Cleanup(q.ShutDown)
	h := Handler[client.Object](req, time.Second)
	ctx := context.Background()

	steps := []struct {
		at    time.Duration
		event func()
	}{
		{0, func() { h.Create(ctx, event.TypedCreateEvent[client.Object]{Object: cm("a")}, q) }},
		{300 * time.Millisecond, func() {
			h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: cm("a"), ObjectNew: cm("a")}, q)
		}},
		{600 * time.Millisecond, func() { h.Delete(ctx, event.TypedDeleteEvent[client.Object]{Object: cm("a")}, q) }},
		{900 * time.Millisecond, func() { h.Generic(ctx, event.TypedGenericEvent[client.Object]{Object: cm("b")}, q) }},
	}
	start := clk.Now()
	for _, s := range steps {
		clk.SetTime(start.Add(s.at))
		s.event()
		if n := q.Len(); n != 0 {
			t.Fatalf("at %s: %d items ready, want 0 before the delay", s.at, n)
		}
	}
	clk.SetTime(start.Add(999 * time.Millisecond))
	if n := q.Len(); n != 0 {
		t.Fatalf("at 999ms: %d items ready, want 0", n)
	}
	// Ready one delay after the FIRST event, although the last came 100 ms ago.
	clk.SetTime(start.Add(time.Second))
	eventually(t, "the debounced request", func() bool { return q.Len() == 1 })
	if got := getWithin(t, q, 5*time.Second); got != req {
		t.Fatalf("got %v, want %v", got, req)
	}
	q.Done(req)
	if n := q.Len(); n != 0 {
		t.Fatalf("burst produced %d extra reconciles", n)
	}

	// A later burst produces its own reconcile.
	h.Create(ctx, event.TypedCreateEvent[client.Object]{Object: cm("c")}, q)
	clk.SetTime(start.Add(2 * time.Second))
	eventually(t, "the second burst", func() bool { return q.Len() == 1 })
}

// TestPriorityQueueCoalescesAndPullsEarlier checks the same contract on controller-runtime's
// default queue: a burst gives one item, and an event pulls a far-away requeue earlier.
func TestPriorityQueueCoalescesAndPullsEarlier(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("debounce-test")
	t.Cleanup(q.ShutDown)
	h := Handler[client.Object](req, 50*time.Millisecond)
	ctx := context.Background()

	q.AddAfter(req, time.Hour) // e.g. a RequeueAfter from the last reconcile
	for range 20 {
		h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: cm("a"), ObjectNew: cm("a")}, q)
	}
	if n := q.Len(); n != 0 {
		t.Fatalf("%d items ready at once, want 0 before the delay", n)
	}
	if got := getWithin(t, q, 10*time.Second); got != req {
		t.Fatalf("got %v, want %v", got, req)
	}
	q.Done(req)
	if n := q.Len(); n != 0 {
		t.Fatalf("burst of 20 events produced %d extra reconciles", n+1)
	}
}
