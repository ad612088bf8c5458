package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is a long-running child (operator, agent, Prometheus) in its own process group, so a Ctrl-C on the
// terminal reaches only the demo, which then stops its children in order. Its output goes to a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProc starts argv with its output appended to logPath. env entries are added to the demo's environment.
func startProc(name, logPath string, env []string, argv ...string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log file of %s: %w", name, err)
	}
	defer f.Close() // the child keeps its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, argv[0], err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid is the child's pid, also its process group id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// checkRunning returns an error with the end of the log when the process has ended.
func (p *proc) checkRunning() error {
	if done, err := p.exited(); done {
		return fmt.Errorf("%s exited (%v); last log lines:\n%s", p.name, err, p.tail(15))
	}
	return nil
}

// stop sends SIGTERM to the process group and waits up to grace for the process to exit, then SIGKILLs the
// group. The group is killed in any case, so helpers the child started go too.
func (p *proc) stop(grace time.Duration) error {
	if done, _ := p.exited(); done {
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		return nil
	}
	if err := syscall.Kill(-p.pid(), syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", p.name, err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	var err error
	select {
	case <-p.done:
	case <-t.C:
		err = fmt.Errorf("%s ignored SIGTERM for %v, killed", p.name, grace)
	}
	if kerr := syscall.Kill(-p.pid(), syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		err = errors.Join(err, fmt.Errorf("kill %s: %w", p.name, kerr))
	}
	<-p.done
	return err
}

// tail returns the last n lines of the process's log.
func (p *proc) tail(n int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tailLines(data, n)
}

func tailLines(data []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    | ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
