// Command testsummary turns `go test -json` streams into the log and the summary that `make test` prints.
//
//	go test -json ./... | testsummary stream -json out/main.json     # compact live log; keeps the stream
//	testsummary report [-leftovers FILE] [-failure TEXT] NAME:strict|lenient|kernel:FILE ... # skips, failures, "N passed, N failed, N skipped"
//
// report exits 1 when anything failed (including a test that could not run in a strict run, and every line of
// the -leftovers file, one object left behind per line). A kernel run (the kernel lane: tests booted on another
// kernel) is strict, and its passes cover the other runs' skips for a kernel feature: each such skip names the
// kernels it passed on, and the ones no lane ran are listed.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/network-operator/network-operator/test/harness/testsummary"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: testsummary stream|report ...")
		return 2
	}
	switch args[0] {
	case "stream":
		return stream(args[1:], stdin, stdout, stderr)
	case "report":
		return report(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "testsummary: unknown command %q (want stream or report)\n", args[0])
		return 2
	}
}

func stream(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.String("json", "", "file that keeps the whole event stream (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *jsonOut == "" {
		fmt.Fprintln(stderr, "testsummary stream: -json FILE is required")
		return 2
	}
	f, err := os.Create(*jsonOut)
	if err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 1
	}
	defer f.Close()
	tee := bufio.NewWriter(f)
	r := testsummary.NewReader("", false, stdout)
	if err := r.Read(stdin, tee); err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 1
	}
	if err := tee.Flush(); err != nil {
		fmt.Fprintf(stderr, "testsummary: write %s: %v\n", *jsonOut, err)
		return 1
	}
	return 0
}

func report(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	leftovers := fs.String("leftovers", "", "file listing objects left behind, one per line")
	standinsFile := fs.String("standins", "", `file of "PKG TEST = PKG TEST" lines: a kernel skip the lane cannot run, and the lane tests that stand in for it`)
	var failures []string
	fs.Func("failure", "a failure outside the runs (e.g. a kernel lane that did not finish); repeatable", func(s string) error {
		failures = append(failures, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var runs []*testsummary.Run
	for _, spec := range fs.Args() {
		name, rest, ok1 := strings.Cut(spec, ":")
		mode, file, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || (mode != "strict" && mode != "lenient" && mode != "kernel") {
			fmt.Fprintf(stderr, "testsummary report: run %q: want NAME:strict|lenient|kernel:FILE\n", spec)
			return 2
		}
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: run %s: %v\n", name, err)
			return 1
		}
		r := testsummary.NewReader(name, mode != "lenient", nil)
		r.Run().Kernel = mode == "kernel"
		err = r.Read(f, nil)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: run %s: %v\n", name, err)
			return 1
		}
		runs = append(runs, r.Run())
	}
	extra := failures
	if *leftovers != "" {
		data, err := os.ReadFile(*leftovers)
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: %v\n", err)
			return 1
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				extra = append(extra, "left behind: "+l)
			}
		}
	}
	if len(runs) == 0 {
		fmt.Fprintln(stderr, "testsummary report: no runs given")
		return 2
	}
	var standins testsummary.Standins
	if *standinsFile != "" {
		f, err := os.Open(*standinsFile)
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: %v\n", err)
			return 1
		}
		standins, err = testsummary.ParseStandins(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: %s: %v\n", *standinsFile, err)
			return 1
		}
	}
	if t := testsummary.Summarize(stdout, runs, extra, standins); t.Failed > 0 || t.Passed == 0 {
		return 1
	}
	return 0
}
