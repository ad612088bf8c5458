// Command kernellane boots Debian's own kernels under QEMU and runs the kernel-dependent tests inside them
// (`make test-kernel`; internal/kernellane):
//
//	kernellane [-suites trixie] [-variants ,novrf] [-tests hack/kernel-lane-tests.txt] [-streams DIR] [-cache DIR] [-work DIR]
//
// It prints one line per test, kernel and variant; with -streams it also writes each guest's test2json stream as
// DIR/kernel-<release>[-<variant>].json for make test's summary. Exit status: 0 every test passed, 1 a test
// failed in a guest, 2 the lane itself failed (a kernel not fetched, a guest that did not finish).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/network-operator/network-operator/internal/kernellane"
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
	suites := fs.String("suites", "trixie", "Debian suites whose current generic kernel to boot, comma-separated")
	tests := fs.String("tests", "hack/kernel-lane-tests.txt", `"PACKAGE RUN-PATTERN" lines`)
	variants := fs.String("variants", ",novrf", `ways to boot each kernel, comma-separated: "" as it is, "novrf" without VRF devices`)
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
	sets, err := readSets(*tests)
	if err != nil {
		fmt.Fprintln(stderr, "kernellane:", err)
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
	for _, suite := range strings.Split(*suites, ",") {
		for _, vname := range strings.Split(*variants, ",") {
			v, ok := kernellane.Variants[vname]
			if !ok {
				fmt.Fprintf(stderr, "kernellane: unknown variant %q\n", vname)
				return 2
			}
			start := time.Now()
			o := kernellane.Options{ModuleDir: moduleDir, CacheDir: *cache, WorkDir: filepath.Join(*work, suite+"-"+vname),
				Suite: kernellane.Suite{Name: suite}, Sets: sets, Variant: v, Log: stderr}
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

func readSets(path string) ([]kernellane.TestSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sets []kernellane.TestSet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		fields := strings.Fields(l)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s: %q: want PACKAGE RUN-PATTERN", path, l)
		}
		sets = append(sets, kernellane.TestSet{Package: fields[0], Run: fields[1]})
	}
	return sets, sc.Err()
}
