// Command leftovers records the host before a test run or demo and names everything of it left afterwards.
//
//	leftovers snapshot FILE          record the host (namespaces, pins, BPF programs, processes, mounts, ...)
//	leftovers check [-o OUT] FILE    compare with FILE; print one line per leftover (also to OUT); exit 1 if any
//
// On a machine shared with other work, LEFTOVERS_IGNORE_TEMP lists glob patterns (space-separated) of temp
// directory entries that are not the project's (e.g. an editor's); CI sets nothing.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/network-operator/network-operator/test/harness/hostsnap"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: leftovers snapshot FILE | leftovers check [-o OUT] FILE")
		return 2
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "check: also write the findings to this file")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: leftovers snapshot FILE | leftovers check [-o OUT] FILE")
		return 2
	}
	file := fs.Arg(0)
	opts := hostsnap.Options{IgnoreTemp: append([]string{filepath.Base(file)}, strings.Fields(os.Getenv("LEFTOVERS_IGNORE_TEMP"))...)}
	switch args[0] {
	case "snapshot":
		data, err := json.MarshalIndent(hostsnap.Take(opts), "", " ")
		if err == nil {
			err = os.WriteFile(file, data, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "leftovers: %v\n", err)
			return 1
		}
		return 0
	case "check":
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "leftovers: %v\n", err)
			return 1
		}
		var before hostsnap.Snapshot
		if err := json.Unmarshal(data, &before); err != nil {
			fmt.Fprintf(stderr, "leftovers: %s: %v\n", file, err)
			return 1
		}
		findings := hostsnap.Diff(&before, hostsnap.Take(opts), hostsnap.Ancestors(os.Getpid()))
		if *out != "" {
			text := strings.Join(findings, "\n")
			if text != "" {
				text += "\n"
			}
			if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
				fmt.Fprintf(stderr, "leftovers: %v\n", err)
				return 1
			}
		}
		if len(findings) == 0 {
			fmt.Fprintln(stdout, "leftovers: nothing left behind")
			return 0
		}
		fmt.Fprintf(stdout, "leftovers: %d objects left behind:\n", len(findings))
		for _, f := range findings {
			fmt.Fprintf(stdout, "  %s\n", f)
		}
		return 1
	default:
		fmt.Fprintf(stderr, "leftovers: unknown command %q\n", args[0])
		return 2
	}
}
