package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// Command returns a command that runs inside the namespace through nsenter. It does not use `ip netns exec`,
// which mounts a private /sys and so hides /sys/fs/bpf. The command gets its own process group, and is killed
// with its children when ctx ends or when the test process dies.
func (n *Netns) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	full := append([]string{"--net=" + n.Path, "--", name}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", full...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd) }
	return cmd
}

// Output runs a command inside the namespace and returns its combined output; the error includes that output.
func (n *Netns) Output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := n.Command(ctx, name, args...)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	out := buf.String()
	if err != nil {
		return out, &CmdError{NS: n.Logical, Args: append([]string{name}, args...), Output: out, Err: err}
	}
	return out, nil
}

// CmdError is a failed command run in a namespace.
type CmdError struct {
	NS     string
	Args   []string
	Output string
	Err    error
}

func (e *CmdError) Error() string {
	return fmt.Sprintf("in %s: %s: %v: %s", e.NS, strings.Join(e.Args, " "), e.Err, strings.TrimSpace(e.Output))
}

func (e *CmdError) Unwrap() error { return e.Err }

// ExitCode returns the exit code of the command, or -1 when it did not exit normally.
func (e *CmdError) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// Process is a command running in the background inside a namespace; the lab kills it at cleanup.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error

	mu  sync.Mutex
	out bytes.Buffer
}

type lockedWriter struct{ p *Process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// Start runs a command in the background inside the namespace. It ends when it exits, when ctx ends, or at
// cleanup, whichever comes first.
func (n *Netns) Start(ctx context.Context, name string, args ...string) (*Process, error) {
	p := &Process{done: make(chan struct{})}
	p.Cmd = n.Command(ctx, name, args...)
	p.Cmd.Stdout = lockedWriter{p}
	p.Cmd.Stderr = lockedWriter{p}
	if err := p.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", name, n.Logical, err)
	}
	n.lab.track(p)
	go func() {
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit or ctx to end.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Output is what the process wrote so far (stdout and stderr).
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Kill kills the process group and waits for the process to be reaped.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = killGroup(p.Cmd)
	<-p.done
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	// Negative pid: the whole process group (Setpgid made the child its leader).
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
