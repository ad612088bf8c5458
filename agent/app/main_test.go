package app_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/syncbuf"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/network-operator/network-operator/agent/app"
	"github.com/network-operator/network-operator/agent/standalone"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// reexecEnv makes the test binary run the agent instead of the tests: the tests start "the agent binary" as a
// real child process (kill -9, restarts) without a separate go build.
const reexecEnv = "NETWORK_AGENT_TEST_REEXEC"

func TestMain(m *testing.M) {
	if os.Getenv(reexecEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// agent is one running agent process.
type agent struct {
	t       testing.TB
	cmd     *exec.Cmd
	out     *syncbuf.Buffer
	done    chan struct{}
	err     error
	listen  string
	stopped bool
}

// freePort returns a local TCP address nobody listens on.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// runAgent runs the agent to completion and returns its exit status and output.
func runAgent(t testing.TB, timeout time.Duration, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), reexecEnv+"=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("agent %v did not finish within %v:\n%s", args, timeout, out)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run agent: %v", err)
	}
	return code, string(out)
}

// startAgent starts a long-running agent; it is killed at cleanup (its output is logged when the test failed).
func startAgent(t testing.TB, listen string, args ...string) *agent {
	t.Helper()
	if listen != "" {
		args = append(args, "--listen", listen)
	} else {
		args = append(args, "--listen", "")
	}
	a := &agent{t: t, out: &syncbuf.Buffer{}, done: make(chan struct{}), listen: listen}
	a.cmd = exec.Command(os.Args[0], args...)
	a.cmd.Env = append(os.Environ(), reexecEnv+"=1")
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start agent: %v", err)
	}
	go func() {
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		a.kill(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("agent (pid %d) output:\n%s", a.cmd.Process.Pid, a.out.String())
		}
	})
	return a
}

// kill sends sig and waits for the process to end.
func (a *agent) kill(sig syscall.Signal) {
	select {
	case <-a.done:
		return
	default:
	}
	_ = a.cmd.Process.Signal(sig)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// running fails the test when the agent exited.
func (a *agent) running() error {
	select {
	case <-a.done:
		return lab.Permanent(fmt.Errorf("agent exited: %v\n%s", a.err, a.out.String()))
	default:
		return nil
	}
}

// scrape reads /metrics.
func (a *agent) scrape() (map[string]*dto.MetricFamily, error) {
	text, err := a.get("/metrics")
	if err != nil {
		return nil, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(strings.NewReader(text))
}

func (a *agent) get(path string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + a.listen + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return string(b), nil
}

// counter sums the values of a metric family's series whose labels include match.
func counter(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
	var sum float64
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range match {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		}
	}
	return sum
}

// waitStatus polls the status file until cond holds.
func waitStatus(t testing.TB, a *agent, path string, timeout time.Duration, what string, cond func(*v1.NodeNetworkConfig) bool) *v1.NodeNetworkConfig {
	t.Helper()
	var last *v1.NodeNetworkConfig
	err := lab.WaitFor(context.Background(), timeout, 50*time.Millisecond, func() (bool, error) {
		if a != nil {
			if err := a.running(); err != nil {
				return false, err
			}
		}
		nnc, err := standalone.ReadStatus(path)
		if err != nil {
			return false, err
		}
		last = nnc
		return cond(nnc), nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last status: %+v)", what, err, statusOf(last))
	}
	return last
}

func statusOf(n *v1.NodeNetworkConfig) any {
	if n == nil {
		return nil
	}
	return n.Status
}

// tempDir is a private directory removed at cleanup.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "agent-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func writeFileAtomic(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
