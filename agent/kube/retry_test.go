package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	agentreconcile "github.com/network-operator/network-operator/agent/reconcile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// A revision that fails transiently is reconciled again after 1 s, doubling to 30 s; any other outcome resets
// the backoff (a failed revision is not retried: the engine knows it as bad).
func TestRetryBackoff(t *testing.T) {
	r := &Reconciler{}
	spec := &v1.NodeNetworkConfigSpec{Revision: "r2"}
	transient := &agentreconcile.Outcome{Spec: spec, Err: agentreconcile.Transient(context.Canceled)}
	var got []time.Duration
	for range 7 {
		d, retry := r.nextRetry(transient)
		if !retry {
			t.Fatal("a transient failure is not retried")
		}
		got = append(got, d)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		30 * time.Second, 30 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
	if _, retry := r.nextRetry(&agentreconcile.Outcome{Spec: spec, Err: errors.New("file exists")}); retry {
		t.Error("a failure of the content is retried as transient")
	}
	if d, _ := r.nextRetry(transient); d != time.Second {
		t.Errorf("after another outcome the backoff starts at %v, want 1s", d)
	}
}
