// Package testsummary reads the event stream of `go test -json` (cmd/test2json): it prints a compact live log
// (one line per package, the output of what failed) and, over several runs, one summary: every skip with its
// reason, failures, and the totals as `N passed, N failed, N skipped`.
//
// Skips are classified by the message prefixes of test/harness/testreq: a kernel feature this kernel lacks is a skip;
// a test left out of the -race pass is "excluded" (it ran in the main pass); any other skip in a strict run
// (NETOP_TEST_PREREQS=require) is a test that could not run, and so a failure.
package testsummary

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// Event is one line of `go test -json`.
type Event struct {
	Time       time.Time `json:",omitempty"`
	Action     string
	Package    string  `json:",omitempty"`
	ImportPath string  `json:",omitempty"` // build events
	Test       string  `json:",omitempty"`
	Elapsed    float64 `json:",omitempty"`
	Output     string  `json:",omitempty"`
}

// Result is the end of one test (or of a package, with Test empty).
type Result struct {
	Package string
	Test    string
	Action  string // pass, fail, skip
	Elapsed float64
	// Reason is the skip message, without the file:line prefix.
	Reason string
	// Output is what the test printed (for failures).
	Output []string
}

// Run is everything one `go test -json` invocation reported.
type Run struct {
	Name   string
	Strict bool // a skip that is not a kernel skip is a failure
	// Kernel marks a run of the kernel lane (tests booted on another kernel): its passes cover the kernel skips
	// of the other runs.
	Kernel   bool
	Tests    []Result
	Packages []Result
	// Stray are lines that were not JSON events (build errors printed by an old toolchain, a crash).
	Stray []string
}

type key struct{ pkg, test string }

// Reader accumulates a Run from events and optionally writes the live log.
type Reader struct {
	run    *Run
	live   io.Writer
	output map[key][]string
}

// NewReader starts a run; live (may be nil) gets the compact log.
func NewReader(name string, strict bool, live io.Writer) *Reader {
	return &Reader{run: &Run{Name: name, Strict: strict}, live: live, output: map[key][]string{}}
}

// Read consumes a stream of events (and stray lines) until EOF; tee (may be nil) gets every line unchanged.
func (r *Reader) Read(in io.Reader, tee io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if tee != nil {
			if _, err := fmt.Fprintf(tee, "%s\n", line); err != nil {
				return fmt.Errorf("copy the event stream: %w", err)
			}
		}
		var ev Event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			r.run.Stray = append(r.run.Stray, string(line))
			r.printf("%s\n", line)
			continue
		}
		r.Event(ev)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the event stream: %w", err)
	}
	return nil
}

// Run returns what was read so far.
func (r *Reader) Run() *Run { return r.run }

func (r *Reader) printf(format string, args ...any) {
	if r.live != nil {
		fmt.Fprintf(r.live, format, args...)
	}
}

// Event consumes one event.
func (r *Reader) Event(ev Event) {
	pkg := ev.Package
	if pkg == "" {
		pkg = ev.ImportPath
	}
	k := key{pkg, ev.Test}
	switch ev.Action {
	case "output", "build-output":
		r.output[k] = append(r.output[k], strings.TrimRight(ev.Output, "\n"))
	case "build-fail":
		res := Result{Package: pkg, Action: "fail", Output: r.output[k], Reason: "build failed"}
		r.run.Packages = append(r.run.Packages, res)
		r.printf("FAIL %s [build failed]\n", pkg)
		r.printLines(res.Output)
	case "pass", "fail", "skip":
		res := Result{Package: pkg, Test: ev.Test, Action: ev.Action, Elapsed: ev.Elapsed, Output: r.output[k]}
		delete(r.output, k)
		if ev.Action == "skip" {
			res.Reason = skipReason(res.Output)
		}
		if ev.Test == "" {
			r.run.Packages = append(r.run.Packages, res)
			r.packageLine(res)
			return
		}
		r.run.Tests = append(r.run.Tests, res)
		if ev.Action == "fail" {
			r.printLines(res.Output)
		}
	}
}

func (r *Reader) packageLine(res Result) {
	switch res.Action {
	case "pass":
		r.printf("ok   %s %.1fs\n", res.Package, res.Elapsed)
	case "skip":
		r.printf("?    %s [no tests]\n", res.Package)
	default:
		r.printf("FAIL %s %.1fs\n", res.Package, res.Elapsed)
		var own []string // the package's own output (TestMain, panics, timeouts), without the test framework's lines
		for _, l := range res.Output {
			if !frameworkLine(l) {
				own = append(own, l)
			}
		}
		r.printLines(own)
	}
}

func (r *Reader) printLines(lines []string) {
	for _, l := range lines {
		r.printf("    %s\n", l)
	}
}

var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// frameworkLine is a line the testing package prints around tests.
func frameworkLine(l string) bool {
	t := strings.TrimSpace(l)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- SKIP", "PASS", "ok "} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return t == ""
}

// skipReason is the last line the test logged before --- SKIP, without its file:line prefix.
func skipReason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		if frameworkLine(out[i]) || strings.HasPrefix(strings.TrimSpace(out[i]), "--- ") {
			continue
		}
		return strings.TrimSpace(fileLine.ReplaceAllString(out[i], ""))
	}
	return "(no reason given)"
}

// Kind classifies a skip.
type Kind int

const (
	KindKernel   Kind = iota // a kernel feature this kernel lacks: allowed
	KindExcluded             // left out of the -race pass: ran in the main pass
	KindOther                // anything else: a test that could not run
)

// Classify tells what kind of skip a reason is.
func Classify(reason string) Kind {
	switch {
	case strings.HasPrefix(reason, testreq.KernelSkipPrefix):
		return KindKernel
	case strings.HasPrefix(reason, testreq.ExcludedSkipPrefix):
		return KindExcluded
	default:
		return KindOther
	}
}

// Totals are the counts over runs.
type Totals struct {
	Passed, Failed, Skipped, Excluded int
}

// Standins name, for a test that skips for a kernel feature where the kernel lane cannot run it (an end-to-end
// test on kubelet nodes), the lane tests that run its kernel-dependent part: "PKG TEST" -> ["PKG TEST", ...].
type Standins map[string][]string

// ParseStandins reads "PKG TEST = PKG TEST" lines ('#' comments, blank lines allowed).
func ParseStandins(r io.Reader) (Standins, error) {
	out := Standins{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		skipped, by, ok := strings.Cut(l, "=")
		sk, bk := strings.Fields(skipped), strings.Fields(by)
		if !ok || len(sk) != 2 || len(bk) != 2 {
			return nil, fmt.Errorf("line %d: %q: want PKG TEST = PKG TEST", n, l)
		}
		k := sk[0] + " " + sk[1]
		out[k] = append(out[k], bk[0]+" "+bk[1])
	}
	return out, sc.Err()
}

// Summarize writes the summary of runs and extra failures (e.g. objects left behind) to w and returns the
// totals; the caller fails when Totals.Failed > 0. Once a kernel lane ran, a test skipped for a kernel feature
// that passed in no run (itself, or a stand-in of it) is a failure: some kernel must run every test.
func Summarize(w io.Writer, runs []*Run, extraFailures []string, standins Standins) Totals {
	var t Totals
	var skips, failures, uncovered []string
	covered := coverage(runs)
	lane := slices.ContainsFunc(runs, func(r *Run) bool { return r.Kernel })
	for _, run := range runs {
		excluded := 0
		for _, res := range run.Tests {
			name := fmt.Sprintf("%s %s", short(res.Package), res.Test)
			switch res.Action {
			case "pass":
				t.Passed++
			case "fail":
				t.Failed++
				failures = append(failures, fmt.Sprintf("[%s] %s", run.Name, name))
			case "skip":
				switch kind := Classify(res.Reason); {
				case kind == KindExcluded:
					excluded++
				case kind == KindOther && run.Strict:
					t.Failed++
					failures = append(failures, fmt.Sprintf("[%s] %s could not run: %s", run.Name, name, res.Reason))
				default:
					t.Skipped++
					line := fmt.Sprintf("[%s] %s: %s", run.Name, name, res.Reason)
					if kind == KindKernel {
						if by := coveredBy(covered, standins, res.Package, res.Test); len(by) > 0 {
							line += " (passed on " + strings.Join(by, ", ") + ")"
						} else {
							uncovered = append(uncovered, fmt.Sprintf("[%s] %s", run.Name, name))
						}
					}
					skips = append(skips, line)
				}
			}
		}
		t.Excluded += excluded
		for _, p := range run.Packages {
			if p.Action == "fail" && !hasFailedTest(run, p.Package) {
				// A build failure, a TestMain that exited, a panic or a timeout outside any test.
				t.Failed++
				failures = append(failures, fmt.Sprintf("[%s] package %s failed outside its tests", run.Name, short(p.Package)))
			}
		}
		if len(run.Stray) > 0 && !anyFailed(run) {
			// go test printed something that is not an event and reported no failure: flag it, never hide it.
			t.Failed++
			failures = append(failures, fmt.Sprintf("[%s] %d lines of output that are not test events (first: %q)",
				run.Name, len(run.Stray), run.Stray[0]))
		}
		if len(run.Tests) == 0 {
			t.Failed++
			failures = append(failures, fmt.Sprintf("[%s] no test ran", run.Name))
		}
		if excluded > 0 {
			fmt.Fprintf(w, "[%s] %d tests that need root, namespaces or host tools ran only in the main pass\n", run.Name, excluded)
		}
	}
	for _, f := range extraFailures {
		t.Failed++
		failures = append(failures, f)
	}
	sort.Strings(skips)
	if len(skips) > 0 {
		fmt.Fprintf(w, "\nSkipped (%d):\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if len(uncovered) > 0 && lane {
		sort.Strings(uncovered)
		for _, u := range uncovered {
			t.Failed++
			failures = append(failures, u+": skipped for a kernel feature and passed on no kernel")
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\nFailed (%d):\n", len(failures))
		for _, f := range failures {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", t.Passed, t.Failed, t.Skipped)
	return t
}

// coverage names, for every test that passed, the runs it passed in (a kernel lane's or the host's).
func coverage(runs []*Run) map[key][]string {
	out := map[key][]string{}
	for _, run := range runs {
		for _, res := range run.Tests {
			k := key{res.Package, res.Test}
			if res.Action == "pass" && !slices.Contains(out[k], run.Name) {
				out[k] = append(out[k], run.Name)
			}
		}
	}
	return out
}

// coveredBy lists where a kernel-skipped test, or one of its stand-ins, passed.
func coveredBy(covered map[key][]string, standins Standins, pkg, test string) []string {
	by := slices.Clone(covered[key{pkg, test}])
	for _, s := range standins[short(pkg)+" "+test] {
		sp, st, _ := strings.Cut(s, " ")
		for _, run := range covered[key{modulePath + sp, st}] {
			by = append(by, run+" as "+s)
		}
	}
	return by
}

func hasFailedTest(run *Run, pkg string) bool {
	for _, res := range run.Tests {
		if res.Package == pkg && res.Action == "fail" {
			return true
		}
	}
	return false
}

func anyFailed(run *Run) bool {
	for _, p := range run.Packages {
		if p.Action == "fail" {
			return true
		}
	}
	return false
}

// modulePath prefixes the packages of test events.
const modulePath = "github.com/network-operator/network-operator/"

func short(pkg string) string {
	return strings.TrimPrefix(pkg, modulePath)
}
