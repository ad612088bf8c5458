// Package frrtest holds test helpers around frrproc: require FRR daemons
// (through test/harness/testreq), namespaces and FRR instances cleaned up with the
// test, and polling with deadlines instead of sleeps.
package frrtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// Require needs the FRR that ships (the FRR image's root file system, frrproc.EnvRoot) and returns the tools that run
// it; without it the test fails or skips with the reason, as test/harness/testreq decides.
func Require(t testing.TB) frrproc.Tools {
	t.Helper()
	root := os.Getenv(frrproc.EnvRoot)
	if root == "" {
		testreq.Need(t, "the FRR image's root file system", fmt.Errorf("%s is not set (make frr-root builds it)", frrproc.EnvRoot))
	}
	tools := frrproc.Tools{Root: root}
	testreq.Need(t, "FRR daemons", tools.CheckDaemons())
	return tools
}

// RequireHost needs the machine's own FRR (Debian 12's 8.4 here), the FRR of a host that brings its own
// (frr.mode=host), for the tests that keep it supported.
func RequireHost(t testing.TB) frrproc.Tools {
	t.Helper()
	tools := frrproc.Tools{Root: "/"}
	testreq.Need(t, "the host's FRR (make deps installs it)", tools.CheckDaemons())
	return tools
}

// FRR is one FRR the tests run against.
type FRR struct {
	// Name names it in subtests: "frr10" (the FRR that ships) or "frr8" (the host's, Debian 12's 8.4).
	Name  string
	Tools frrproc.Tools
	// Major is its major release, which says the dialect it is rendered for and diffed like.
	Major int
}

// Golden is the golden config file for this FRR: FRR 8's rendering (frr8/NAME beside it) where that differs
// from the FRR that ships, else file itself.
func (f FRR) Golden(file string) string {
	if f.Major < 10 {
		own := filepath.Join(filepath.Dir(file), "frr8", filepath.Base(file))
		if _, err := os.Stat(own); err == nil {
			return own
		}
	}
	return file
}

// Shipped is the FRR that ships (Require).
func Shipped(t testing.TB) FRR { return FRR{Name: "frr10", Tools: Require(t), Major: 10} }

// Host is the machine's own FRR 8.4 (RequireHost), which the agent keeps supporting for hosts that bring their
// own (frr.mode=host): a smaller set of tests runs against it too.
func Host(t testing.TB) FRR { return FRR{Name: "frr8", Tools: RequireHost(t), Major: 8} }

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

// Router starts FRR daemons stopped when the test ends: the shipped FRR unless opts.Tools says otherwise. On failure their
// logs are printed; FRR_TEST_KEEP=1 also keeps their directory.
func Router(t testing.TB, opts frrproc.Options) *frrproc.Instance {
	t.Helper()
	if opts.Tools.Root == "" {
		opts.Tools = Require(t)
	}
	// A deadline, not a wait: daemons start in well under a second here, but each one's chrooted start is
	// slow under QEMU's emulation in the kernel lane.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
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

// Output reads a recorded FRR answer from the test package's testdata/frr-output.
func Output(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "frr-output", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
