package kernellane

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrproc"
)

// TestSet is one package's tests for the lane: the package as go test names it ("./agent/nodenet") and
// its -test.run pattern.
type TestSet struct{ Package, Run string }

// Options configure Run.
type Options struct {
	// ModuleDir is the checkout; CacheDir keeps kernels and initramfs images (by kernel package).
	ModuleDir, CacheDir string
	// WorkDir holds the test binaries and the guest's out share; Run removes neither. Keep it out of the temp
	// directory whose leftovers make test checks.
	WorkDir string
	Suite   Suite
	Sets    []TestSet
	Variant Variant
	Log     io.Writer
}

// Variant is a way to boot the same kernel: its name ("" for the kernel as it is), a kernel command line
// addition, and the modules the job loads before the tests (the tests would load them on demand too).
type Variant struct {
	Name    string
	Append  string
	Modules []string
}

// Variants are the lane's ways to boot a kernel: as it is, and without VRF devices (the module blacklisted),
// so the kernel-dependent packages are tested in both VRF modes.
var Variants = map[string]Variant{
	"":      {Modules: []string{"vrf", "8021q", "ip_gre"}},
	"novrf": {Name: "novrf", Append: "modprobe.blacklist=vrf", Modules: []string{"8021q", "ip_gre"}},
}

// Outcome is one test's result in the guest, read from its test2json stream.
type Outcome struct {
	Kernel, Variant string
	Package, Test   string
	// Action is pass, fail or skip.
	Action  string
	Elapsed float64
	// Reason is the test's last output line before a skip or failure.
	Reason string
}

// Report is what one guest run of the lane gave.
type Report struct {
	Kernel *Kernel
	Result Result
	// Outcomes are the tests' results; Streams the sets' test2json streams (in the work directory), in order.
	Outcomes []Outcome
	Streams  []string
}

// Run fetches the suite's kernel, builds the initramfs and the test binaries, boots the guest and runs every set
// in it.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	k, err := Fetch(ctx, o.CacheDir, o.Suite, o.Log)
	if err != nil {
		return nil, err
	}
	rep := &Report{Kernel: k, Result: Result{RC: -1}}
	initramfs := filepath.Join(k.Dir, "initramfs-"+guestHash()+".cpio.gz")
	if err := BuildInitramfs(ctx, k, initramfs); err != nil {
		return rep, err
	}
	bin := filepath.Join(o.WorkDir, "bin")
	out := filepath.Join(o.WorkDir, "out")
	for _, d := range []string{bin, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return rep, err
		}
	}
	var job strings.Builder
	fmt.Fprintf(&job, "modprobe -a %s 2>/dev/null || true\nfailed=0\n", strings.Join(o.Variant.Modules, " "))
	for i, s := range o.Sets {
		importPath, err := goList(ctx, o.ModuleDir, s.Package)
		if err != nil {
			return rep, err
		}
		name := fmt.Sprintf("%d-%s.test", i, filepath.Base(importPath))
		build := exec.CommandContext(ctx, "go", "test", "-c", "-o", filepath.Join(bin, name), s.Package)
		build.Dir = o.ModuleDir
		if b, err := build.CombinedOutput(); err != nil {
			return rep, fmt.Errorf("go test -c %s: %w\n%s", s.Package, err, b)
		}
		stream := filepath.Join(out, name+".json")
		rep.Streams = append(rep.Streams, stream)
		fmt.Fprintf(&job, "(cd %s && exec go tool test2json -t -p %s %s -test.v=test2json -test.run %s -test.count=1 -test.timeout 20m) >%s || failed=1\n",
			strconv.Quote(filepath.Join(o.ModuleDir, s.Package)), strconv.Quote(importPath), strconv.Quote(filepath.Join(bin, name)),
			strconv.Quote(s.Run), strconv.Quote(stream))
	}
	job.WriteString("exit $failed\n")
	console, err := os.Create(filepath.Join(o.WorkDir, "console.log"))
	if err != nil {
		return rep, err
	}
	defer console.Close()
	env := map[string]string{"NETOP_TEST_PREREQS": "require", "GOFLAGS": "", "HOME": "/root"}
	// The variables by which make test names what it set up (the shipped FRR's root file system, the API-server
	// and node binaries): the guest sees the host's files, so the same paths hold there.
	for _, k := range []string{frrproc.EnvRoot, "KUBEBUILDER_ASSETS", "NETOP_K8S_BINARIES"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	boot := Boot{Kernel: k, Initramfs: initramfs, Out: out, Job: job.String(), Append: o.Variant.Append, Console: console, Env: env}
	rep.Result, err = bootAgain(ctx, guestAttempts, boot.Run, func(attempt int, err error) {
		// The work directory usually goes with the run (make test's is temporary): the ends of the console and
		// the job's log are what tells a panic, an OOM or a hung test apart afterwards.
		for _, f := range []string{console.Name(), filepath.Join(out, "job.log")} {
			fmt.Fprintf(o.Log, "--- the last %d lines of %s:\n%s", tailLines, f, tail(f, tailLines))
		}
		fmt.Fprintf(o.Log, "kernellane: %s%s, attempt %d of %d: %v\n", k.Release, variantSuffix(o.Variant.Name), attempt,
			guestAttempts, err)
		fmt.Fprintf(console, "=== attempt %d ended: %v\n", attempt, err)
	})
	if err != nil {
		return rep, fmt.Errorf("%s%s: %w (console: %s)", k.Release, variantSuffix(o.Variant.Name), err, console.Name())
	}
	for _, stream := range rep.Streams {
		oc, err := readOutcomes(stream)
		if err != nil {
			return rep, err
		}
		for j := range oc {
			oc[j].Kernel, oc[j].Variant = k.Release, o.Variant.Name
		}
		rep.Outcomes = append(rep.Outcomes, oc...)
	}
	return rep, nil
}

func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " (" + v + ")"
}

// goList is the import path of a package of the module.
func goList(ctx context.Context, moduleDir, pkg string) (string, error) {
	c := exec.CommandContext(ctx, "go", "list", pkg)
	c.Dir = moduleDir
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w", pkg, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// testEvent is a line of test2json's stream.
type testEvent struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// readOutcomes turns a test2json stream into one Outcome per finished test (and one for a package that failed
// outside its tests, Test empty).
func readOutcomes(path string) ([]Outcome, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the guest's test stream: %w", err)
	}
	defer f.Close()
	last := map[string]string{}
	var out []Outcome
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Action {
		case "output":
			if l := strings.TrimSpace(ev.Output); l != "" && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "===") {
				last[ev.Test] = l
			}
		case "pass", "fail", "skip":
			if ev.Test == "" && ev.Action != "fail" {
				continue
			}
			out = append(out, Outcome{Package: ev.Package, Test: ev.Test, Action: ev.Action, Elapsed: ev.Elapsed, Reason: last[ev.Test]})
		}
	}
	return out, sc.Err()
}

// bootAgain runs boot up to attempts times while it ends with ErrNoStatus: a guest that dies without its job's
// status is booted once more, the last run's tests are the report, and a failure that repeats (a panic our code
// causes) still fails. failed hears of every failed run.
func bootAgain(ctx context.Context, attempts int, boot func(context.Context) (Result, error), failed func(attempt int, err error)) (Result, error) {
	for attempt := 1; ; attempt++ {
		res, err := boot(ctx)
		if err == nil {
			return res, nil
		}
		failed(attempt, err)
		if attempt >= attempts || !errors.Is(err, ErrNoStatus) || ctx.Err() != nil {
			return res, err
		}
	}
}

// guestAttempts is how often a guest is booted when it ends without its job's status.
const guestAttempts = 2

// tailLines is how much of a failed guest's console and job log the lane prints.
const tailLines = 60

// tail returns the last n lines of the file at path (a note when it cannot be read).
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "") + "\n"
}
