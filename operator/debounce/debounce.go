// Package debounce coalesces bursts of watch events into one delayed reconcile.
//
// Every event maps to the same request, added to the controller's queue with a delay. Both
// controller-runtime queues (the priority queue and client-go's delaying queue) keep the
// EARLIER ready time when a waiting item is added again, so a burst yields exactly one
// reconcile, Delay after its first event. Unlike a trailing debounce, continuous churn cannot
// postpone the snapshot forever.
package debounce

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Queue is the part of a controller's queue the handler uses.
type Queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Handler returns an event handler that enqueues req after delay for every event of any
// object type T.
func Handler[T any](req reconcile.Request, delay time.Duration) handler.TypedEventHandler[T, reconcile.Request] {
	add := func(q Queue) { q.AddAfter(req, delay) }
	return handler.TypedFuncs[T, reconcile.Request]{
		CreateFunc:  func(_ context.Context, _ event.TypedCreateEvent[T], q Queue) { add(q) },
		UpdateFunc:  func(_ context.Context, _ event.TypedUpdateEvent[T], q Queue) { add(q) },
		DeleteFunc:  func(_ context.Context, _ event.TypedDeleteEvent[T], q Queue) { add(q) },
		GenericFunc: func(_ context.Context, _ event.TypedGenericEvent[T], q Queue) { add(q) },
	}
}
