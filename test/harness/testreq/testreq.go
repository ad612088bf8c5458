// Package testreq decides what a test does when something it needs is missing.
//
// Tests call it instead of skipping by themselves, so that one switch (the environment variable
// NETOP_TEST_PREREQS, set by `make test`) turns every missing prerequisite into a failure in CI:
//
//   - "skip" (the default, `make test-unit` on a laptop): a missing prerequisite skips the test with the reason.
//   - "require" (`make test`): a missing prerequisite that the project installs or sets up itself fails the
//     test, naming it.
//   - "exclude" (the `-race` pass of `make test`): every test that needs root, namespaces, bpffs, FRR or another
//     host tool skips at once, present or not; it already ran in the main pass.
//
// Only a kernel feature that this kernel lacks may skip in every mode (KernelLacks), and only after the test
// detected it. hack/tools/testsummary lists those skips at the end of `make test` and counts any other skip
// in a "require" run as a failure.
package testreq

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// TB is the part of testing.TB these checks use. Taking it instead of testing.TB keeps the standard testing
// package out of programs that link the harness (the demo, hack/binary-deps.sh).
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// EnvMode names the environment variable that selects the Mode.
const EnvMode = "NETOP_TEST_PREREQS"

// Mode is what a missing prerequisite does to a test.
type Mode string

const (
	ModeSkip    Mode = "skip"
	ModeRequire Mode = "require"
	ModeExclude Mode = "exclude"
)

// Skip message prefixes: hack/tools/testsummary classifies skips by them.
const (
	// KernelSkipPrefix starts the message of a skip for a kernel feature this kernel lacks.
	KernelSkipPrefix = "kernel lacks "
	// ExcludedSkipPrefix starts the message of a skip in the "exclude" pass.
	ExcludedSkipPrefix = "excluded from this pass: needs "
	// MissingSkipPrefix starts the message of a skip for a missing prerequisite in the "skip" mode.
	MissingSkipPrefix = "missing prerequisite: "
)

// CurrentMode reads the mode from the environment; an unknown value is reported by Need as a failure.
func CurrentMode() (Mode, error) {
	switch m := Mode(os.Getenv(EnvMode)); m {
	case "":
		return ModeSkip, nil
	case ModeSkip, ModeRequire, ModeExclude:
		return m, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q, %q or %q", EnvMode, m, ModeSkip, ModeRequire, ModeExclude)
	}
}

// Need states that the test needs what, a privileged host prerequisite (e.g. "root", "FRR"); missing is nil when
// it is there, else why not. In the "exclude" mode the test is skipped either way.
func Need(tb TB, what string, missing error) {
	tb.Helper()
	need(tb, what, missing, true)
}

// Available states that the test needs what, an unprivileged prerequisite (a tool, the API-server binaries):
// like Need, except that the "exclude" pass runs the test when it is there.
func Available(tb TB, what string, missing error) {
	tb.Helper()
	need(tb, what, missing, false)
}

func need(tb TB, what string, missing error, privileged bool) {
	tb.Helper()
	mode, err := CurrentMode()
	if err != nil {
		tb.Fatal(err)
	}
	switch {
	case mode == ModeExclude && (privileged || missing != nil):
		tb.Skipf("%s%s (it runs in the main pass)", ExcludedSkipPrefix, what)
	case missing == nil:
		return
	case mode == ModeRequire:
		tb.Fatalf("missing prerequisite %s: %v (make test installs and sets it up; run it as root)", what, missing)
	default:
		tb.Skipf("%s%s: %v", MissingSkipPrefix, what, missing)
	}
}

// KernelLacks skips the test because this kernel lacks feature; detected is the error that showed it (a
// failed probe, ErrNotSupported). It must never be called on a guess.
func KernelLacks(tb TB, feature string, detected error) {
	tb.Helper()
	if detected == nil {
		tb.Fatalf("testreq.KernelLacks(%q) without the error that detected it", feature)
	}
	tb.Skipf("%s%s: %v", KernelSkipPrefix, feature, detected)
}

// ErrNotRoot says the process is not root.
var ErrNotRoot = errors.New("not running as root (uid 0)")

// Root needs uid 0 (namespaces, BPF, netlink writes).
func Root(tb TB) {
	tb.Helper()
	Need(tb, "root", rootErr())
}

func rootErr() error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("%w: euid %d", ErrNotRoot, uid)
	}
	return nil
}

// BPFFS needs root and a bpffs mounted at /sys/fs/bpf.
func BPFFS(tb TB) {
	tb.Helper()
	Root(tb)
	Need(tb, "bpffs at /sys/fs/bpf", fsErr("/sys/fs/bpf", unix.BPF_FS_MAGIC, "mount -t bpf bpf /sys/fs/bpf"))
}

// Tracefs needs root and tracefs at /sys/kernel/tracing.
func Tracefs(tb TB) {
	tb.Helper()
	Root(tb)
	Need(tb, "tracefs at /sys/kernel/tracing",
		fsErr("/sys/kernel/tracing", unix.TRACEFS_MAGIC, "mount -t tracefs tracefs /sys/kernel/tracing"))
}

func fsErr(path string, magic int64, fix string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("statfs %s: %w (%s)", path, err, fix)
	}
	if st.Type != magic {
		return fmt.Errorf("%s is not mounted as the expected file system (%s)", path, fix)
	}
	return nil
}

// Commands needs root and each named program in PATH; it returns their paths in order.
func Commands(tb TB, names ...string) []string {
	tb.Helper()
	Root(tb)
	return Tools(tb, names...)
}

// Tools needs each named program in PATH (without needing root); it returns their paths in order.
func Tools(tb TB, names ...string) []string {
	tb.Helper()
	paths := make([]string, len(names))
	for i, n := range names {
		p, err := exec.LookPath(n)
		Available(tb, n, err)
		paths[i] = p
	}
	return paths
}
