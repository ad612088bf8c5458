package nodescale

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/app"
	agentreconcile "github.com/network-operator/network-operator/agent/reconcile"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/test/harness/bench/benchproc/reexec"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestMain(m *testing.M) { reexec.Main(m, app.Run) }

func TestSpecCounts(t *testing.T) {
	s := Scale{VRFs: 7, Prefixes: 2}
	spec := Spec(s, "r")
	if len(spec.VRFs) != 7 || len(spec.Layer2s) != 7 || len(spec.DataPlane.Interfaces) != 7 || s.Interfaces() != 28 {
		t.Fatalf("%d VRFs, %d layer-2 networks, %d router interfaces, %d interfaces: want 7, 7, 7, 28", len(spec.VRFs),
			len(spec.Layer2s), len(spec.DataPlane.Interfaces), s.Interfaces())
	}
	if got := len(spec.VRFs[3].Leaks[0].Export); got != 2 {
		t.Errorf("%d export prefixes, want 2", got)
	}
	if spec.ExpectedMapVersion != spec.MapVersion() {
		t.Error("ExpectedMapVersion is not the spec's MapVersion")
	}
}

func TestParseAgentLog(t *testing.T) {
	log := `time=2026-11-25T00:00:00Z level=INFO msg="FRR reloaded" hash=ab added=3 steps="scratch load 1.2s, vtysh -f delta 900ms"
time=2026-11-25T00:00:01Z level=INFO msg=reconciled revision=r1 result=applied duration=2.5s steps="plan 12ms, vrfs 1ms, frr 2.1s, health 3ms" err=<nil>
time=2026-11-25T00:00:02Z level=INFO msg=reconciled revision=r1 result=unchanged duration=41.5ms steps="plan 30ms, health 9ms" nodeRead=reused err=<nil>
time=2026-11-25T00:00:02Z level=INFO msg="something else" result=failed`
	recs := parseReconciles(log)
	if len(recs) != 2 {
		t.Fatalf("%d reconciles, want 2", len(recs))
	}
	if recs[0].result != "applied" || recs[0].duration != 2500*time.Millisecond || len(recs[0].steps) != 4 ||
		recs[0].steps[2] != (Step{Name: "frr", Took: 2100 * time.Millisecond}) {
		t.Errorf("first: %+v", recs[0])
	}
	if recs[1].result != "unchanged" || recs[1].nodeRead != "reused" || recs[1].duration != 41500*time.Microsecond || len(recs[1].steps) != 2 {
		t.Errorf("second: %+v", recs[1])
	}
	if got := frrSteps(log); got != "scratch load 1.2s, vtysh -f delta 900ms" {
		t.Errorf("FRR steps %q", got)
	}
}

// A standalone agent prints one line per reconcile (agent/standalone), its log lines go elsewhere.
func TestStandaloneReconciles(t *testing.T) {
	out := `note: the node has no VRF devices
reconcile applied: revision "idle-1", map version 740d868b7e83, 812ms
time=2026-11-25T00:00:01Z level=INFO msg="FRR reloaded" hash=ab
reconcile unchanged: revision "idle-1", map version 740d868b7e83, 6ms
reconcile failed: revision "idle-1", map version 740d868b7e83, 3ms: plan: boom
`
	recs := standaloneReconciles(out)
	var got []string
	for _, r := range recs {
		got = append(got, r.result)
	}
	if strings.Join(got, ",") != "applied,unchanged,failed" || !strings.HasSuffix(recs[2].line, ": plan: boom") {
		t.Errorf("reconciles %q (last line %q), want applied, unchanged, failed", got, recs[len(recs)-1].line)
	}
}

func TestMetricsSum(t *testing.T) {
	m := metricsText(`# HELP x
network_operator_reconcile_duration_seconds_count{result="applied"} 1
network_operator_reconcile_duration_seconds_count{result="unchanged"} 20
network_operator_reconcile_duration_seconds_count_other 5
network_operator_netlink_observes_total 21
`)
	for prefix, want := range map[string]float64{
		"network_operator_reconcile_duration_seconds_count":                     21,
		"network_operator_netlink_observes_total":                               21,
		`network_operator_reconcile_duration_seconds_count{result="unchanged"}`: 20,
		"network_operator_missing":                                              0,
	} {
		if got := m.sum(prefix); got != want {
			t.Errorf("sum(%s) = %v, want %v", prefix, got, want)
		}
	}
}

// TestRunSmall runs the measurement with 5 VRFs (and the idle agent): the agent as a process of its own against a
// real API server and FRR, every row measured and checked. (How fast is make bench's business, not asserted.)
func TestRunSmall(t *testing.T) {
	testreq.Root(t)
	testreq.BPFFS(t)
	frrtest.Require(t)
	_, err := testenv.AssetsDir()
	testreq.Need(t, "API-server binaries (kube-apiserver, etcd; make envtest builds them)", err)
	t.Setenv(reexec.Env, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := Options{Scale: Scale{VRFs: 5, Prefixes: 2}, Resyncs: 3, Agent: os.Args[0], Timeout: 3 * time.Minute,
		FRR: frrtest.Require(t), TCHook: "legacy"} // the default hook's attach is measured in every run (Attach)
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstApply <= 0 || len(res.Resyncs) != 3 || len(res.ReadResyncs) == 0 || res.Drift <= 0 || res.Repair.result != "applied" || res.Kernel.Bridges != 10 || res.Kernel.VXLANs != 10 || res.FRRVRFs != 5 ||
		res.Attached != 5 || res.AgentPeak <= 0 || res.AgentAnonPeak <= 0 || res.AgentBinary <= 0 ||
		res.Idle.Anon <= 0 || res.Idle.AnonPeak < res.Idle.Anon || res.Idle.Reconciles <= idleResyncs {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(formatSteps(res.FirstSteps), "frr ") || !strings.Contains(medianSteps(res.ResyncSteps), "plan ") {
		t.Errorf("steps: first apply %s, resyncs %s", formatSteps(res.FirstSteps), medianSteps(res.ResyncSteps))
	}
	for _, r := range rows(o.Scale, o.TCHook, res, nil) {
		if r.Section != "node scale, --tc-hook legacy" {
			t.Errorf("%s: section %q, want the legacy hook's own", r.Name, r.Section)
		}
		if r.Err != nil || r.Value <= 0 {
			t.Errorf("%s: %v %s, %v", r.Name, r.Value, r.Unit, r.Err)
		}
		t.Logf("%s: %.1f %s (%s) %s", r.Name, r.Value, r.Unit, r.Status(), r.Detail)
	}
}

// procStatus reads the kB fields of /proc/<pid>/status: the resident set is its anonymous, file and shared
// parts (the kernel sums them in one read).
func TestProcStatus(t *testing.T) {
	st, err := procStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st["RssAnon"] <= 0 || st["RssFile"] <= 0 || st["VmHWM"] < st["VmRSS"] ||
		st["VmRSS"] != st["RssAnon"]+st["RssFile"]+st["RssShmem"] {
		t.Errorf("VmRSS %v, VmHWM %v, RssAnon %v, RssFile %v, RssShmem %v: want VmRSS = RssAnon + RssFile + RssShmem <= VmHWM",
			st["VmRSS"], st["VmHWM"], st["RssAnon"], st["RssFile"], st["RssShmem"])
	}
	if _, err := procStatus(-1); err == nil {
		t.Error("procStatus(-1): no error")
	}
}

// TestSettle: the quiet resyncs are those after the last that read the node.
func TestSettle(t *testing.T) {
	r := func(read string) reconciled { return reconciled{nodeRead: read} }
	full, reused := agentreconcile.NodeReadFull, agentreconcile.NodeReadReused
	for _, tc := range []struct {
		in                []reconciled
		settling, quietly int
	}{
		{nil, 0, 0},
		{[]reconciled{r(full), r(reused), r(reused)}, 1, 2},
		{[]reconciled{r(full), r(reused), r(full), r(reused)}, 3, 1},
		{[]reconciled{r(reused), r(reused)}, 0, 2},
		{[]reconciled{r(reused), r(full)}, 2, 0},
	} {
		settling, quiet := settle(tc.in)
		if len(settling) != tc.settling || len(quiet) != tc.quietly {
			t.Errorf("settle(%v) = %d settling, %d quiet; want %d, %d", tc.in, len(settling), len(quiet), tc.settling, tc.quietly)
		}
	}
}

// The attach step side by side on a few bridges: both ways attach every bridge (attachOnce checks each mode)
// and leave nothing attached.
func TestAttachSideBySide(t *testing.T) {
	testreq.Root(t)
	testreq.BPFFS(t)
	l := lab.New(t)
	res, err := attachSideBySide(t.Context(), l, 5)
	if err != nil {
		t.Fatal(err)
	}
	if res.Devices != 5 || res.TCX <= 0 || res.Legacy <= 0 {
		t.Fatalf("%+v: want both times for 5 devices", res)
	}
	out, err := l.NS("attach").Output(t.Context(), "tc", "filter", "show", "dev", "ab0", "ingress")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("ab0's ingress after the measurement: %q (%v), want no filter", out, err)
	}
}
