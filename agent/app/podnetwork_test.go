package app_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/app"
)

// Pod networking and dataplane flags the agent refuses before touching anything.
func TestPodNetworkFlagErrors(t *testing.T) {
	dir := tempDir(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"standalone", []string{"--config-file", filepath.Join(dir, "node.yaml"), "--pod-network"},
			"--pod-network needs Kubernetes mode"},
		{"unknown netns source", []string{"--node-name", "n1", "--pod-network", "--pod-netns", "proc"},
			`--pod-netns: unknown netns source "proc": want auto, path or pid`},
		{"unknown tc hook", []string{"--node-name", "n1", "--tc-hook", "tc"}, `--tc-hook "tc": want tcx or legacy`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out := runAgent(t, 30*time.Second, append(c.args, "--listen", "")...)
			if code != app.ExitUsage || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, app.ExitUsage, c.want, out)
			}
		})
	}
}
