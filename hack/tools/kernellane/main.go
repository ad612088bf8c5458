// Command kernellane boots Debian's own kernels under QEMU and runs the kernel-dependent tests inside them
// (`make test-kernel`; test/harness/kernellane):
//
//	kernellane [-tests hack/kernel-lane-tests.txt] [-suites bookworm,trixie] [-variants ,novrf] [-streams DIR] [-cache DIR] [-work DIR]
//
// The tests file names, per line, the lanes a package's tests run in (a Debian suite's kernel, booted as it is or
// as a variant: "trixie,trixie/novrf"); one guest boots per lane, in the order the file first names them.
// -suites and -variants only narrow that down. It prints one line per test, kernel and variant; with -streams it also writes each guest's test2json stream as
// DIR/kernel-<release>[-<variant>].json for make test's summary. Exit status: 0 every test passed, 1 a test
// failed in a guest, 2 the lane itself failed (a kernel not fetched, a guest that did not finish).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/network-operator/network-operator/test/harness/kernellane"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kernellane", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suites := fs.String("suites", "", "only these Debian suites of the tests file, comma-separated (default: all)")
	tests := fs.String("tests", "hack/kernel-lane-tests.txt", `"LANES PACKAGE RUN-PATTERN" lines`)
	variants := fs.String("variants", "", `only these ways to boot, comma-separated ("-" as it is, "novrf" without VRF devices; default: all)`)
	only := fs.String("only", "", "only this package's line(s) of the tests file (e.g. ./test/harness/kernellane)")
	featuresDoc := fs.String("features-doc", "", "check the kernel table in FILE against the kernels' feature reports (TestKernelFeatureReport)")
	updateDoc := fs.Bool("update-doc", false, "with -features-doc: rewrite the table instead of checking it")
	streams := fs.String("streams", "", "write each guest's test2json stream to DIR/kernel-<release>[-<variant>].json")
	cache := fs.String("cache", "", "kernel cache (default: the user cache directory, /network-operator/kernels)")
	work := fs.String("work", "", "test binaries and the guests' output (default: a new directory under the cache; removed after)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			fmt.Fprintln(stderr, "kernellane:", err)
			return 1
		}
		*cache = filepath.Join(base, "network-operator", "kernels")
	}
	lanes, err := readLanes(*tests)
	if err != nil {
		fmt.Fprintln(stderr, "kernellane:", err)
		return 2
	}
	lanes = narrow(lanes, *suites, *variants, *only)
	if len(lanes) == 0 {
		fmt.Fprintf(stderr, "kernellane: no lane of %s left by -suites %q -variants %q\n", *tests, *suites, *variants)
		return 2
	}
	moduleDir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "kernellane:", err)
		return 1
	}
	if *work == "" {
		// Not under the temp directory: make test's leftover check watches it.
		if err := os.MkdirAll(*cache, 0o755); err != nil {
			fmt.Fprintln(stderr, "kernellane:", err)
			return 1
		}
		dir, err := os.MkdirTemp(*cache, "work-")
		if err != nil {
			fmt.Fprintln(stderr, "kernellane:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		*work = dir
	}
	failed, broken := false, false
	var streamsRead [][]byte
	for _, ln := range lanes {
		suite, v := ln.suite, ln.variant
		vname := v.Name
		start := time.Now()
		o := kernellane.Options{ModuleDir: moduleDir, CacheDir: *cache, WorkDir: filepath.Join(*work, suite+"-"+vname),
			Suite: kernellane.Suite{Name: suite}, Sets: ln.sets, Variant: v, Log: stderr}
		rep, err := kernellane.Run(ctx, o)
		if err != nil {
			fmt.Fprintf(stderr, "kernellane: %s %s: %v\n", suite, vname, err)
			broken = true
			continue
		}
		k, res := rep.Kernel, rep.Result
		label := k.Release
		if vname != "" {
			label += "-" + vname
		}
		if *streams != "" {
			if err := concat(filepath.Join(*streams, "kernel-"+label+".json"), rep.Streams); err != nil {
				fmt.Fprintln(stderr, "kernellane:", err)
				broken = true
			}
		}
		for _, f := range rep.Streams {
			data, err := os.ReadFile(f)
			if err != nil {
				fmt.Fprintln(stderr, "kernellane:", err)
				broken = true
			}
			streamsRead = append(streamsRead, data)
		}
		for _, oc := range rep.Outcomes {
			line := fmt.Sprintf("%-34s %-4s %-28s %s %.1fs", label, oc.Action, shortPkg(oc.Package), oc.Test, oc.Elapsed)
			if oc.Action != "pass" {
				line += "  (" + oc.Reason + ")"
				failed = failed || oc.Action == "fail"
			}
			fmt.Fprintln(stdout, line)
		}
		fmt.Fprintf(stdout, "%s: guest job rc %d, %.1fs in the guest, %.1fs with the build\n", label, res.RC,
			res.Duration.Seconds(), time.Since(start).Seconds())
		failed = failed || res.RC != 0
	}
	if *featuresDoc != "" && !broken {
		if err := kernelTable(*featuresDoc, *updateDoc, streamsRead, stdout); err != nil {
			fmt.Fprintf(stderr, "kernellane: %s: %v\n", *featuresDoc, err)
			failed = true
		}
	}
	if broken {
		return 2
	}
	if failed {
		return 1
	}
	return 0
}

// concat writes the files one after the other into path.
func concat(path string, files []string) error {
	var all []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		all = append(all, data...)
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no test stream from the guest", path)
	}
	return os.WriteFile(path, all, 0o644)
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/network-operator/network-operator/")
}

// lane is one guest: a suite's kernel booted as a variant, and the tests it runs.
type lane struct {
	suite   string
	variant kernellane.Variant
	sets    []kernellane.TestSet
}

// readLanes reads "LANES PACKAGE RUN-PATTERN" lines (LANES: suite[/variant],...) into lanes, in the order the file
// first names them.
func readLanes(path string) ([]lane, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lanes []lane
	at := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		fields := strings.Fields(l)
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: %q: want LANES PACKAGE RUN-PATTERN", path, n, l)
		}
		for _, name := range strings.Split(fields[0], ",") {
			suite, vname, _ := strings.Cut(name, "/")
			v, ok := kernellane.Variants[vname]
			if suite == "" || !ok {
				return nil, fmt.Errorf("%s:%d: lane %q: want SUITE or SUITE/VARIANT (variants: novrf)", path, n, name)
			}
			i, seen := at[name]
			if !seen {
				i = len(lanes)
				at[name] = i
				lanes = append(lanes, lane{suite: suite, variant: v})
			}
			lanes[i].sets = append(lanes[i].sets, kernellane.TestSet{Package: fields[1], Run: fields[2]})
		}
	}
	return lanes, sc.Err()
}

// kernelTable checks (or rewrites) doc's kernel table against the feature reports in the guests' streams.
func kernelTable(doc string, update bool, streams [][]byte, stdout io.Writer) error {
	reports, err := kernellane.ReadFeatureReports(streams...)
	if err != nil {
		return err
	}
	if len(reports) == 0 {
		return errors.New("no kernel feature report in the guests' streams (TestKernelFeatureReport did not run)")
	}
	data, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	table := kernellane.FeatureTable(reports)
	out, err := kernellane.SpliceTable(data, table, update)
	if err != nil {
		if errors.Is(err, kernellane.ErrStaleTable) {
			return fmt.Errorf("%w (make kernel-table rewrites it)", err)
		}
		return err
	}
	if update {
		fmt.Fprintf(stdout, "kernel table (%d kernel reports) written to %s\n", len(reports), doc)
		return os.WriteFile(doc, out, 0o644)
	}
	fmt.Fprintf(stdout, "kernel table (%d kernel reports) in %s: up to date\n", len(reports), doc)
	return nil
}

// narrow keeps the lanes of the named suites and variants ("" keeps all; variant "-" is the kernel as it is) and,
// with only, that package's sets.
func narrow(lanes []lane, suites, variants, only string) []lane {
	keep := func(list, v string) bool {
		if list == "" {
			return true
		}
		if v == "" {
			v = "-"
		}
		return slices.Contains(strings.Split(list, ","), v)
	}
	var out []lane
	for _, ln := range lanes {
		if !keep(suites, ln.suite) || !keep(variants, ln.variant.Name) {
			continue
		}
		if only != "" {
			ln.sets = slices.DeleteFunc(slices.Clone(ln.sets), func(s kernellane.TestSet) bool { return s.Package != only })
			if len(ln.sets) == 0 {
				continue
			}
		}
		out = append(out, ln)
	}
	return out
}
