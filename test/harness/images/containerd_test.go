package images

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// containerd is a private, throw-away containerd: its own socket, root and state below a temp dir, no CRI
// plugin (an import needs only the content store, the image store and a snapshotter).
type containerd struct {
	ctrPath, address string
}

// startContainerd starts one for the test and stops it and removes its files at the end, failed or not.
func startContainerd(t *testing.T) *containerd {
	t.Helper()
	paths := testreq.Commands(t, "containerd", "ctr")
	dir := t.TempDir() // removed after the stop below (cleanups run last-in first-out)
	c := &containerd{ctrPath: paths[1], address: filepath.Join(dir, "containerd.sock")}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.address, c.address+".ttrpc", filepath.Join(dir, "opt"))
	configPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "containerd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(paths[0], "--config", configPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Dies with the test process when that ends without its cleanups (a test timeout's panic, a signal).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting containerd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			if data, err := os.ReadFile(logPath); err == nil {
				var notable []string // its start-up chatter is level=info
				for _, l := range strings.Split(string(data), "\n") {
					if l != "" && !strings.Contains(l, "level=info") {
						notable = append(notable, l)
					}
				}
				t.Logf("containerd log, without level=info (last lines):\n%s", lastLines(strings.Join(notable, "\n"), 30))
			}
		}
	})

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		if _, err := c.ctr(ctx, "version"); err == nil {
			return c
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("containerd exited at start: %v", err)
		case <-ctx.Done():
			t.Fatalf("containerd did not answer on %s within 20 s", c.address)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ctr runs ctr against this containerd in the namespace kubelet uses.
func (c *containerd) ctr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.ctrPath, append([]string{"--address", c.address, "--namespace", "k8s.io"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// importAndList imports an archive (unpacking it into the snapshotter, which checks every layer against its
// diff ID) and returns the digest containerd lists for ref.
func (c *containerd) importAndList(ctx context.Context, archive, ref string) (string, error) {
	if _, err := c.ctr(ctx, "images", "import", archive); err != nil {
		return "", err
	}
	out, err := c.ctr(ctx, "images", "ls")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		// REF TYPE DIGEST SIZE PLATFORMS LABELS
		if f := strings.Fields(line); len(f) >= 3 && f[0] == ref {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("ctr images ls does not list %s:\n%s", ref, out)
}
