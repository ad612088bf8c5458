package podstart

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/app"
	"github.com/network-operator/network-operator/test/harness/bench/benchproc/reexec"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestMain(m *testing.M) { reexec.Main(m, app.Run) }

// TestMeasureSmall runs the measurement with three pods: a real node, the agent as a process of its own, every
// pod's interface applied and reported, every row measured. (How fast is make bench's business, not asserted.)
func TestMeasureSmall(t *testing.T) {
	testreq.Root(t)
	testreq.BPFFS(t)
	testreq.Commands(t, "containerd", "runc", "ctr", "unshare", "nsenter")
	_, err := testenv.AssetsDir()
	testreq.Need(t, "API-server binaries (kube-apiserver, etcd; make envtest builds them)", err)
	_, err = os.Stat(filepath.Join(os.Getenv("NETOP_K8S_BINARIES"), "kubelet"))
	testreq.Need(t, "node binaries (make k8s-binaries; NETOP_K8S_BINARIES names their directory)", err)
	t.Setenv(reexec.Env, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := Options{Pods: 3, Agent: os.Args[0], Log: testLog{t}}
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RunningToUp) != o.Pods || len(res.SandboxToUp) != o.Pods || len(res.CreatedToUp) != o.Pods || len(res.CreatedToRunning) != o.Pods {
		t.Fatalf("samples %+v, want %d of each", res, o.Pods)
	}
	for i := range o.Pods {
		if res.CreatedToUp[i] <= 0 || res.CreatedToRunning[i] <= 0 || res.SandboxToUp[i] <= 0 {
			t.Errorf("pod %d: created -> up %v, created -> Running %v, sandbox ready -> up %v: want each after its start", i,
				res.CreatedToUp[i], res.CreatedToRunning[i], res.SandboxToUp[i])
		}
	}
	t.Logf("Running -> interface up: %v; sandbox ready -> interface up: %v; created -> Running: %v", res.RunningToUp,
		res.SandboxToUp, res.CreatedToRunning)
	r := rows(res, nil)
	if len(r) != 4 {
		t.Fatalf("%d rows, want 4", len(r))
	}
	// Of three samples the median is the middle one; the p99 lies between it and the slowest.
	sorted := slices.Sorted(slices.Values(res.SandboxToUp))
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	if r[2].Value != ms(sorted[1]) || r[3].Value < r[2].Value || r[3].Value > ms(sorted[2]) || r[2].Err != nil || r[3].Err != nil {
		t.Errorf("rows %q %v ms, %q %v ms: want the median %v and at most the slowest %v of %v", r[2].Name, r[2].Value, r[3].Name,
			r[3].Value, sorted[1], sorted[2], sorted)
	}
	for _, row := range r {
		t.Logf("%s: %.1f %s (%s) %s", row.Name, row.Value, row.Unit, row.Status(), row.Detail)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p))
	return len(p), nil
}
