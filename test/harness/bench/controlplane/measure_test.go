package controlplane

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/operator/app"
	"github.com/network-operator/network-operator/test/harness/bench/benchproc/reexec"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestMain(m *testing.M) { reexec.Main(m, app.Run) }

// TestRunSmall runs the scenario with 20 nodes: every figure measured, every node's configuration written once per
// revision, the pace kept.
func TestRunSmall(t *testing.T) {
	_, err := testenv.AssetsDir()
	testreq.Available(t, "API-server binaries (kube-apiserver, etcd)", err)
	t.Setenv(reexec.Env, "1")
	o := DefaultOptions()
	o.Operator, o.Nodes, o.Changes, o.MaxUnavailable, o.Timeout = os.Args[0], 20, 2, "25%", 2*time.Minute
	res, err := run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.done) != 2 || res.first <= 0 || res.hwm < res.rss || res.rss <= 0 {
		t.Errorf("first %v, done %v, rss %v, peak %v", res.first, res.done, res.rss, res.hwm)
	}
	for _, name := range procNames() {
		if res.cpu[name] <= 0 && name != procEtcd { // etcd may idle below a clock tick
			t.Errorf("CPU time of %s: %v", name, res.cpu[name])
		}
	}
	if res.allowed != 5 {
		t.Errorf("allowed %d, want 5 (25%% of 20)", res.allowed)
	}
	for i, p := range res.peak {
		if p < 1 || p > res.allowed {
			t.Errorf("change %d: %d nodes unconfirmed at once, want 1..%d", i+1, p, res.allowed)
		}
	}
	// One write of each node's configuration per revision, whatever else the operator does.
	if got := res.requests["patch nodenetworkconfigs"]; got != float64(o.Nodes*o.Changes) {
		t.Errorf("%v configuration patches, want %d; all requests %v", got, o.Nodes*o.Changes, res.requests)
	}

	r := rows(o, res, nil)
	if len(r) != 3 || r[0].Status() == "not measured" || !strings.Contains(r[2].Detail, "patch nodenetworkconfigs 1") {
		t.Errorf("rows %+v", r)
	}
}
