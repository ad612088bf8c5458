package testsummary

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// stream builds a `go test -json` stream: each entry is action, package, test, output.
func stream(t *testing.T, evs ...[4]string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		data, err := json.Marshal(Event{Action: e[0], Package: e[1], Test: e[2], Output: e[3]})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

func skipped(pkg, test, reason string) [][4]string {
	return [][4]string{
		{"output", pkg, test, "=== RUN   " + test + "\n"},
		{"output", pkg, test, "    x_test.go:12: " + reason + "\n"},
		{"output", pkg, test, "--- SKIP: " + test + " (0.00s)\n"},
		{"skip", pkg, test, ""},
	}
}

func TestSummarize(t *testing.T) {
	kernel := testreq.KernelSkipPrefix + "VRF devices: operation not supported"
	excluded := testreq.ExcludedSkipPrefix + "root (it runs in the main pass)"
	missing := testreq.MissingSkipPrefix + "root: not running as root"
	cat := func(parts ...[][4]string) [][4]string {
		var out [][4]string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	pass := func(pkg, test string) [][4]string { return [][4]string{{"pass", pkg, test, ""}} }
	for _, tc := range []struct {
		name       string
		strict     bool
		events     [][4]string
		extra      []string
		want       Totals
		wantOutput []string
	}{
		{
			name:       "kernel skip is a skip, listed with its reason",
			strict:     true,
			events:     cat(pass("p", "TestA"), skipped("p", "TestVRF", kernel), pass("p", "")),
			want:       Totals{Passed: 1, Skipped: 1},
			wantOutput: []string{"p TestVRF: " + kernel, "1 passed, 0 failed, 1 skipped"},
		},
		{
			name:       "a missing prerequisite in a strict run is a failure",
			strict:     true,
			events:     cat(skipped("p", "TestRoot", missing), pass("p", "")),
			want:       Totals{Failed: 1},
			wantOutput: []string{"p TestRoot could not run: " + missing, "0 passed, 1 failed, 0 skipped"},
		},
		{
			name:   "the same skip in a lenient run is a skip",
			events: cat(skipped("p", "TestRoot", missing), pass("p", "")),
			want:   Totals{Skipped: 1},
		},
		{
			name:       "excluded tests are counted apart",
			events:     cat(pass("p", "TestA"), skipped("p", "TestRoot", excluded), pass("p", "")),
			want:       Totals{Passed: 1, Excluded: 1},
			wantOutput: []string{"1 tests that need root", "1 passed, 0 failed, 0 skipped"},
		},
		{
			name:       "a package failing outside its tests (TestMain, timeout) is a failure",
			strict:     true,
			events:     cat(pass("p", "TestA"), [][4]string{{"output", "p", "", "panic: test timed out\n"}, {"fail", "p", "", ""}}),
			want:       Totals{Passed: 1, Failed: 1},
			wantOutput: []string{"package p failed outside its tests"},
		},
		{
			name:       "a failing test fails the package once",
			strict:     true,
			events:     cat([][4]string{{"output", "p", "TestA", "    a_test.go:3: boom\n"}, {"fail", "p", "TestA", ""}, {"fail", "p", "", ""}}),
			want:       Totals{Failed: 1},
			wantOutput: []string{"p TestA"},
		},
		{
			name:       "extra failures (objects left behind) count",
			strict:     true,
			events:     pass("p", "TestA"),
			extra:      []string{"left behind: netns nl01-a"},
			want:       Totals{Passed: 1, Failed: 1},
			wantOutput: []string{"left behind: netns nl01-a", "1 passed, 1 failed, 0 skipped"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var live bytes.Buffer
			r := NewReader("main", tc.strict, &live)
			if err := r.Read(strings.NewReader(stream(t, tc.events...)), nil); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			got := Summarize(&out, []*Run{r.Run()}, tc.extra, nil)
			if got != tc.want {
				t.Errorf("totals = %+v, want %+v\n%s", got, tc.want, out.String())
			}
			for _, w := range tc.wantOutput {
				if !strings.Contains(out.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestStrayLinesAreNeverHidden(t *testing.T) {
	r := NewReader("main", true, nil)
	in := "# github.com/x/y\n./y.go:3:1: syntax error\n" + stream(t, [4]string{"pass", "p", "TestA", ""})
	if err := r.Read(strings.NewReader(in), nil); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if got := Summarize(&out, []*Run{r.Run()}, nil, nil); got.Failed != 1 {
		t.Errorf("stray output without a failure: totals %+v\n%s", got, out.String())
	}
}

func TestSkipReason(t *testing.T) {
	for _, tc := range []struct {
		out  []string
		want string
	}{
		{[]string{"=== RUN   TestX", "    x_test.go:12: kernel lacks X: y", "--- SKIP: TestX (0.00s)"}, "kernel lacks X: y"},
		{[]string{"=== RUN   TestX", "--- SKIP: TestX (0.00s)"}, "(no reason given)"},
	} {
		if got := skipReason(tc.out); got != tc.want {
			t.Errorf("skipReason(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

// Every kernel skip, on the host or in a lane, must pass on some kernel: itself or a stand-in named for it. A
// covered skip names where it passed; once a lane ran, an uncovered one fails the summary.
func TestKernelLaneCoversKernelSkips(t *testing.T) {
	const mod = "github.com/network-operator/network-operator/"
	kernel := testreq.KernelSkipPrefix + "VRF devices: operation not supported"
	host := &Run{Name: "main", Strict: true, Tests: []Result{
		{Package: mod + "nodenet", Test: "TestVRFDevices", Action: "skip", Reason: kernel},
		{Package: mod + "e2e", Test: "TestHelm/vlan", Action: "skip", Reason: kernel},
		{Package: mod + "e2e", Test: "TestHelm/other", Action: "skip", Reason: kernel},
		{Package: mod + "nodenet", Test: "TestPlan", Action: "pass"},
	}}
	lane := &Run{Name: "kernel 6.12", Strict: true, Kernel: true, Tests: []Result{
		{Package: mod + "nodenet", Test: "TestVRFDevices", Action: "pass"},
		{Package: mod + "podnet", Test: "TestApply/vlan", Action: "pass"},
	}}
	novrf := &Run{Name: "kernel 6.12 without VRF devices", Strict: true, Kernel: true, Tests: []Result{
		{Package: mod + "nodenet", Test: "TestVRFDevices", Action: "skip", Reason: kernel},
	}}
	standins, err := ParseStandins(strings.NewReader("# the e2e's vlan case\ne2e TestHelm/vlan = podnet TestApply/vlan\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		runs       []*Run
		wantFailed int
		want       []string
	}{
		"lane ran": {[]*Run{host, lane, novrf}, 1, []string{
			"[main] nodenet TestVRFDevices: " + kernel + " (passed on kernel 6.12)",
			"[kernel 6.12 without VRF devices] nodenet TestVRFDevices: " + kernel + " (passed on kernel 6.12)",
			"[main] e2e TestHelm/vlan: " + kernel + " (passed on kernel 6.12 as podnet TestApply/vlan)",
			"[main] e2e TestHelm/other: skipped for a kernel feature and passed on no kernel",
		}},
		"no lane": {[]*Run{host}, 0, []string{"[main] e2e TestHelm/other: " + kernel + "\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			tot := Summarize(&b, tc.runs, nil, standins)
			out := b.String()
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
			if tot.Failed != tc.wantFailed {
				t.Errorf("totals %+v, want %d failed", tot, tc.wantFailed)
			}
		})
	}
	if _, err := ParseStandins(strings.NewReader("e2e TestHelm/vlan podnet TestApply/vlan\n")); err == nil {
		t.Error("ParseStandins accepted a line without =")
	}
}
