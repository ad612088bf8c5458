package benchproc

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/syncbuf"
)

func start(t *testing.T, script string) (*Proc, *syncbuf.Buffer) {
	t.Helper()
	out := &syncbuf.Buffer{}
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdout, cmd.Stderr = out, out
	p, err := Start("test process", cmd, func() ([]byte, error) { return []byte(out.String()), nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	return p, out
}

// waitOutput waits until the process printed want (it has then set up its signal handling).
func waitOutput(t *testing.T, out *syncbuf.Buffer, want string) {
	t.Helper()
	err := wait.Poll(context.Background(), 10*time.Millisecond, 10*time.Second, "output "+want, func(context.Context) (bool, string, error) {
		return strings.Contains(out.String(), want), out.String(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStop(t *testing.T) {
	// A process that stops on SIGTERM gets a grace far above any scheduling delay of a loaded machine; the one that
	// ignores it a short one, as it is killed after the grace whatever it is.
	const stops, ignores = 20 * time.Second, 300 * time.Millisecond
	for _, c := range []struct {
		name        string
		script      string
		cleanly     bool
		grace       time.Duration
		wantErr     string // "" = no error
		wantRunning bool   // before the stop
	}{
		// Short sleeps in a loop: the shell runs a trap between commands, whenever the signal came (a "wait" for a
		// background sleep could miss a signal that arrived just before it).
		{"exits on SIGTERM", "echo ready; while :; do sleep 0.05; done", false, stops, "", true},
		{"exits 3 on SIGTERM, any exit wanted", "trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done", false, stops, "", true},
		{"exits 3 on SIGTERM, clean exit wanted", "trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done", true, stops, "exited with exit status 3", true},
		{"exits 0 on SIGTERM, clean exit wanted", "trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done", true, stops, "", true},
		{"ignores SIGTERM", "trap '' TERM; echo ready; while :; do sleep 0.05; done", false, ignores, "did not stop within", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, out := start(t, c.script)
			waitOutput(t, out, "ready")
			if err := p.Running(); (err == nil) != c.wantRunning {
				t.Fatalf("Running: %v, want running %v", err, c.wantRunning)
			}
			stop := p.Stop
			if c.cleanly {
				stop = p.StopCleanly
			}
			err := stop(c.grace)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("stop: %v, want no error", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("stop: %v, want an error with %q", err, c.wantErr)
			}
			if err := p.Running(); err == nil {
				t.Error("Running after the stop: nil, want the exit")
			}
		})
	}
}

func TestRunningNamesTheExitAndTheOutput(t *testing.T) {
	p, out := start(t, "echo the reason it failed; exit 7")
	waitOutput(t, out, "the reason")
	err := wait.Poll(context.Background(), 10*time.Millisecond, 10*time.Second, "exit", func(context.Context) (bool, string, error) {
		return p.Running() != nil, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg := p.Running().Error(); !strings.Contains(msg, "exit status 7") || !strings.Contains(msg, "the reason it failed") {
		t.Errorf("Running: %q, want the exit status and the output", msg)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	p, out := start(t, "head -c 10000 /dev/zero | tr '\\0' a; echo END; sleep 60")
	waitOutput(t, out, "END")
	tail := p.Tail()
	if len(tail) != tailBytes+len("...") || !strings.HasPrefix(tail, "...") || !strings.HasSuffix(tail, "END\n") {
		t.Errorf("Tail: %d bytes, starts %q, want %d bytes ending in END", len(tail), tail[:10], tailBytes+3)
	}
	if len(p.Output()) != 10004 {
		t.Errorf("Output: %d bytes, want 10004", len(p.Output()))
	}
}

func TestWriteKubeconfig(t *testing.T) {
	path := t.TempDir() + "/kubeconfig"
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key")}}
	if err := WriteKubeconfig(cfg, "agent", path); err != nil {
		t.Fatal(err)
	}
	got, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Host != cfg.Host || string(got.CAData) != "ca" || string(got.CertData) != "cert" || string(got.KeyData) != "key" {
		t.Errorf("read back %+v, want %+v", got, cfg)
	}
	if err := WriteKubeconfig(&rest.Config{}, "agent", path); err == nil || !strings.Contains(err.Error(), "no API server address") {
		t.Errorf("empty config: %v, want an error naming the missing address", err)
	}
}

func TestFreeAddr(t *testing.T) {
	a, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, "127.0.0.1:") || strings.HasSuffix(a, ":0") {
		t.Errorf("FreeAddr: %q, want 127.0.0.1 with a port", a)
	}
}
