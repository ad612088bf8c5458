// Package machine describes the host a benchmark ran on, for the lines above the result table.
package machine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Describe returns one line: date, kernel, CPU model and count, Go version, and the git commit when known.
func Describe(ctx context.Context) string {
	var u unix.Utsname
	kernel := "unknown kernel"
	if unix.Uname(&u) == nil {
		kernel = "Linux " + unix.ByteSliceToString(u.Release[:])
	}
	parts := []string{time.Now().UTC().Format("2006-01-02 15:04 UTC"), kernel,
		fmt.Sprintf("%d x %s", runtime.NumCPU(), cpuModel()), runtime.Version()}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			// Other work on the machine inflates every figure; the reader should know.
			parts = append(parts, "load average "+strings.Join(f[:3], " ")+" at start")
		}
	}
	if c := commit(ctx); c != "" {
		parts = append(parts, "commit "+c)
	}
	return strings.Join(parts, ", ")
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "CPU"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "CPU"
}

func commit(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += " (modified)"
	}
	return c
}
