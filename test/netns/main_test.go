package netnstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
)

// helperEnv switches the test binary into the loader helper: a separate process that loads (or adopts), attaches
// and applies, reports, and exits - the way the agent does across restarts.
const helperEnv = "NETNS_TEST_ROUTER_HELPER"

// helperConfig is passed to the helper as JSON in helperEnv.
type helperConfig struct {
	Netns      string      `json:"netns"` // /run/netns/NAME
	PinDir     string      `json:"pinDir"`
	Interfaces []string    `json:"interfaces"`
	Tables     maps.Tables `json:"tables"`
	Revision   string      `json:"revision"`
	// WaitStdin keeps the process alive after reporting until its stdin closes (or it is killed).
	WaitStdin bool `json:"waitStdin"`
}

// helperReport is the helper's one line of JSON on stdout.
type helperReport struct {
	Load        loader.LoadReport   `json:"load"`
	Attachments []loader.Attachment `json:"attachments"`
	Apply       maps.Report         `json:"apply"`
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(helperEnv); cfg != "" {
		if err := runHelper(cfg); err != nil {
			fmt.Fprintf(os.Stderr, "router helper: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(raw string) error {
	var cfg helperConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fmt.Errorf("parse %s: %w", helperEnv, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := netns.GetFromPath(cfg.Netns)
	if err != nil {
		return fmt.Errorf("open netns %s: %w", cfg.Netns, err)
	}
	defer ns.Close()
	spec, err := bpf.RouterSpec()
	if err != nil {
		return err
	}
	ldr, err := loader.Load(ctx, loader.Options{Spec: spec, PinDir: cfg.PinDir, NetNS: ns})
	if err != nil {
		return err
	}
	defer ldr.Close() // keeps pins and attachments: the next process adopts them
	var rep helperReport
	for _, ifn := range cfg.Interfaces {
		if _, err := ldr.Attach(ctx, ifn, loader.ModeAuto); err != nil {
			return err
		}
	}
	rep.Load, rep.Attachments = ldr.Report(), ldr.Attachments()
	set, err := maps.OpenPinned(cfg.PinDir)
	if err != nil {
		return err
	}
	defer set.Close()
	if rep.Apply, err = set.Apply(ctx, cfg.Tables, cfg.Revision); err != nil {
		return err
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return err
	}
	if cfg.WaitStdin {
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
	return nil
}

// helperProcess is a running helper.
type helperProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	report helperReport
	stderr *strings.Builder
}

// startHelper runs the test binary as the loader helper and waits for its report.
func startHelper(ctx context.Context, t *testing.T, cfg helperConfig) *helperProcess {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(raw))
	p := &helperProcess{cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		_ = cmd.Wait()
		t.Fatalf("helper report: %v; stderr: %s", err, p.stderr)
	}
	if err := json.Unmarshal(line, &p.report); err != nil {
		t.Fatalf("parse helper report %q: %v", line, err)
	}
	return p
}

// wait waits for a helper that was started without WaitStdin (or whose stdin was closed) to exit cleanly.
func (p *helperProcess) wait(t *testing.T) {
	t.Helper()
	_ = p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("helper exited with %v; stderr: %s", err, p.stderr)
	}
}

// kill ends the helper like a crash would (SIGKILL: no deferred cleanup runs).
func (p *helperProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := p.cmd.Wait(); !errors.As(err, &ee) {
		t.Fatalf("killed helper: wait returned %v, want a signal exit", err)
	}
}
