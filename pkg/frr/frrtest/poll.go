// Package frrtest holds test helpers around frrproc: require FRR daemons
// (through internal/testreq), namespaces and FRR instances cleaned up with the
// test, and polling with deadlines instead of sleeps.
package frrtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/network-operator/network-operator/internal/testreq"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
)

// Require needs FRR daemons that can run here; without them the test fails or
// skips with the reason, as internal/testreq decides.
func Require(t testing.TB) {
	t.Helper()
	testreq.Need(t, "FRR daemons", frrproc.Check())
}

// Netns creates a uniquely named namespace removed when the test ends.
func Netns(t testing.TB, prefix string) *frrproc.Netns {
	t.Helper()
	n, err := frrproc.NewNetns(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Delete(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return n
}

// Router starts FRR daemons stopped when the test ends. On failure their
// logs are printed; FRR_TEST_KEEP=1 also keeps their directory.
func Router(t testing.TB, opts frrproc.Options) *frrproc.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, err := frrproc.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(in.Logs())
			if os.Getenv("FRR_TEST_KEEP") != "" {
				t.Logf("kept %s", in.KeepDir())
			}
		}
		if err := in.Stop(); err != nil {
			t.Error(err)
		}
	})
	return in
}

// RequireVRF needs VRF devices (CONFIG_NET_VRF): it creates one in a scratch namespace and skips the test as a
// kernel limitation (testreq.KernelLacks) naming what needs them when the kernel refuses; any other failure of
// the probe fails the test.
func RequireVRF(t testing.TB, needs string) {
	t.Helper()
	n := Netns(t, "frrvrf-")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.IP(ctx, "link", "add", "vrfprobe", "type", "vrf", "table", "4242"); err != nil {
		testreq.KernelLacks(t, "VRF devices ("+needs+")", err)
	}
}

// Eventually polls cond every 100ms for at most timeout and fails the test
// with what, and cond's last reason, when it never holds.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(context.Context) (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	err := frrproc.Poll(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		ok, reason := cond(ctx)
		if ctx.Err() == nil || last == "" {
			last = reason // keep the last answer not cut short by the deadline
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s (last: %s)", what, timeout, last)
	}
}
