package app_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/app"
)

// --memory-limit takes a positive quantity (TestStandaloneAppliesAndCounts sees its effect); anything else is
// refused before the agent touches anything.
func TestMemoryLimitFlagErrors(t *testing.T) {
	dir := tempDir(t)
	for _, v := range []string{"0", "-64Mi", "64 MiB", "lots"} {
		t.Run(v, func(t *testing.T) {
			code, out := runAgent(t, 30*time.Second, "--config-file", filepath.Join(dir, "node.yaml"), "--listen", "",
				"--memory-limit", v)
			want := fmt.Sprintf("--memory-limit %q: want a positive quantity such as 64Mi", v)
			if code != app.ExitUsage || !strings.Contains(out, want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, app.ExitUsage, want, out)
			}
		})
	}
}
