package frr_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrtest/canonical"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// reloaderFor applies configs to a test router; its state dir is per test.
func reloaderFor(t *testing.T, r *frrproc.Instance) *frrreload.Reloader {
	t.Helper()
	return newReloader(t, frrreload.Options{Target: frrvty.Target{VtySocket: r.Dir, ConfDir: r.ConfDir, Tools: r.Tools()}, StateDir: t.TempDir()})
}

// newReloader is frrreload.NewReloader, closed (its scratch FRR stopped) when the test ends.
func newReloader(t *testing.T, opts frrreload.Options) *frrreload.Reloader {
	t.Helper()
	rel, err := frrreload.NewReloader(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rel.Close(); err != nil {
			t.Error(err)
		}
	})
	return rel
}

func goldenFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".conf"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGoldenAcceptedByFRR loads every golden file into a fresh zebra + bgpd
// (vtysh syntax check, then "vtysh -f" into a scratch instance in its own
// namespace): FRR must report no error. The reload diff (frr-reload.py --test's) against that
// instance must then find nothing left to change, so FRR keeps every line in
// the form the templates write it and reloads of it converge in one pass.
// It runs against the FRR that ships and the host's FRR 8.4 (with FRR 8's
// rendering where it differs, testdata/golden/frr8).
func TestGoldenAcceptedByFRR(t *testing.T) {
	t.Parallel() // independent namespaces and FRR instances; mostly waiting on FRR
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.conf"))
	if err != nil || len(files) < 20 {
		t.Fatalf("want about 20 golden files, got %d (%v)", len(files), err)
	}
	slices.Sort(files)
	for _, fl := range []func(testing.TB) frrtest.FRR{frrtest.Shipped, frrtest.Host} {
		f := fl(t)
		target := frrvty.Target{Tools: f.Tools, Version: frr.Version{Major: f.Major}}
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			for _, file := range files {
				acceptGolden(t, target, f.Golden(file))
			}
		})
	}
}

// acceptGolden is one golden file of TestGoldenAcceptedByFRR.
func acceptGolden(t *testing.T, target frrvty.Target, file string) {
	t.Run(strings.TrimSuffix(filepath.Base(file), ".conf"), func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a deadline: ~1 s each on a quiet machine
		defer cancel()
		abs, err := filepath.Abs(file)
		if err != nil {
			t.Fatal(err)
		}
		daemons := frrreload.DefaultScratchDaemons
		if data, err := os.ReadFile(abs); err == nil && strings.Contains(string(data), "\nip route ") {
			daemons = append(slices.Clone(daemons), "staticd") // a brownfield base's static routes
		}
		diff, err := canonical.Diff(t, ctx, target, abs, daemons)
		if why, ok := refusedBy10[filepath.Base(file)]; ok && target.Version.Major >= 10 {
			if err == nil || !strings.Contains(err.Error(), why) {
				t.Fatalf("FRR 10 took %s (%v); want it refused: %s", file, err, why)
			}
			return
		}
		if err != nil {
			t.Fatalf("FRR refused %s: %v", file, err)
		}
		residue := baseResidue
		if target.Version.Major >= 10 {
			residue = baseResidue10
		}
		if left := slices.DeleteFunc(diff.Significant(), func(l string) bool { return slices.Contains(residue, l) }); len(left) > 0 {
			t.Errorf("FRR keeps %s differently:\n%s", file, strings.Join(left, "\n"))
		}
	})
}

// baseResidue are lines of das-schiff's own base (testdata/brownfield/dasschiff-testdata.conf) that FRR 8.4
// never shows: under "frr defaults traditional" without "no bgp default ipv4-unicast" ipv4 unicast is active
// by default, so its explicit "neighbor X activate" lines are not kept. They are the base's, not rendered: the
// renderer leaves out its own activate lines in such an instance.
var baseResidue = []string{
	"+ router bgp 64510", "+  address-family ipv4 unicast", "+   neighbor def_mgmt activate",
	"+ router bgp 64510 vrf Vrf_mgmt", "+   neighbor mgmt_def activate",
}

// refusedBy10 are golden configs whose brownfield base FRR 10 refuses, with the line it names: das-schiff's own
// base sets the next hop 0.0.0.2 (in 0.0.0.0/8, which FRR 10's route-map validation refuses) and FRR 10 then
// refuses the whole policy transaction around it. Such a base needs that line changed before the FRR that ships
// can run it; FRR 8 takes it.
var refusedBy10 = map[string]string{"brownfield-dasschiff-testdata.conf": "line 196: set ip next-hop 0.0.0.2"}

// baseResidue10 are lines FRR 10 shows for a brownfield base with "frr defaults traditional" that the base
// does not write: "bgp enforce-first-as" in every BGP instance (FRR 10 shows it explicitly under that
// profile), next to FRR 8's residue.
var baseResidue10 = append(slices.Clone(baseResidue), "- router bgp 65000", "-  bgp enforce-first-as", "- exit",
	"- router bgp 65000 vrf mgmt_vrf", "- router bgp 65000 vrf tenant1", "- router bgp 65000 vrf taas.100",
	"- router bgp 64510", "- router bgp 64510 vrf Vrf_mgmt")

// TestReloadTransitions walks one router through golden configs with the
// production path (validate, frr-reload.py, converge). Removing a VRF that
// leaks into the cluster VRF needs a second frr-reload.py pass: it deletes
// "router bgp X vrf Y" before the "import vrf Y" lines that keep it alive; the same holds for a routing table's
// instance.
func TestReloadTransitions(t *testing.T) {
	frrtest.Require(t)
	t.Parallel() // independent namespaces and FRR instances; mostly waiting on FRR
	ns := frrtest.Netns(t, "frrtrans-")
	router := frrtest.Router(t, frrproc.Options{Netns: ns.Name})
	rel := reloaderFor(t, router)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, name := range []string{"underlay-only", "full", "leak-ipv6", "routing-table-leak", "underlay-only"} {
		res, err := rel.Apply(ctx, goldenFile(t, name))
		if err != nil {
			t.Fatalf("apply %s: %v", name, err)
		}
		t.Logf("%s: validate %v, reload %v, +%d -%d lines", name, res.Validate.Round(time.Millisecond),
			res.Reload.Round(time.Millisecond), len(res.Diff.Add), len(res.Diff.Delete))
		if len(res.Residual) > 0 {
			t.Errorf("%s: FRR still differs after reload: %q", name, res.Residual)
		}
		if res.Path != frrreload.PathDelta {
			t.Errorf("%s: applied by %q (%s), want the delta", name, res.Path, res.PathReason)
		}
		running, err := router.Vtysh(ctx, "show running-config")
		if err != nil {
			t.Fatal(err)
		}
		if name == "underlay-only" && (strings.Contains(string(running), "vrf tenant") || strings.Contains(string(running), "vrf taas")) {
			t.Errorf("%s: tenant VRF or routing table left behind:\n%s", name, running)
		}
	}
}

// TestPathspaceReload drives daemons started with FRR's pathspace (-N), as
// "frrinit.sh start NS" does, through a Reloader that only knows the
// pathspace: vtysh and frr-reload.py find sockets and files themselves, and
// frr.conf stays the rendered file (frr-reload.py does not rewrite it).
func TestPathspaceReload(t *testing.T) {
	tools := frrtest.Require(t)
	t.Parallel()
	ns := frrtest.Netns(t, "frrps-")
	ps := frrproc.UniqueName("nops")
	router := frrtest.Router(t, frrproc.Options{Netns: ns.Name, Pathspace: ps})
	rel := newReloader(t, frrreload.Options{Target: frrvty.Target{Pathspace: ps, Tools: tools}, StateDir: t.TempDir()})
	if got := rel.Target().ConfigPath(); got != router.ConfigPath() {
		t.Fatalf("config path %s, daemons read %s", got, router.ConfigPath())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := goldenFile(t, "l2vni-explicit")
	res, err := rel.Apply(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Residual) > 0 {
		t.Errorf("residual diff %q", res.Residual)
	}
	running, err := rel.Target().RunningConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(running), "rd 65000:101") {
		t.Errorf("running config lacks the applied VNI:\n%s", running)
	}
	onDisk, err := os.ReadFile(router.ConfigPath())
	if err != nil || string(onDisk) != string(cfg) {
		t.Errorf("frr.conf in the pathspace is not the rendered file (err %v)", err)
	}
}

// Restarted: FRR that restarted with the applied config (from its frr.conf) needs nothing; FRR that came back
// from an empty config is seen, and the next Apply of the same config reloads it instead of skipping.
func TestRestartedFRRIsSeen(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ns := frrtest.Netns(t, "frrrestart-")
	router := frrtest.Router(t, frrproc.Options{Netns: ns.Name})
	rel := reloaderFor(t, router)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := goldenFile(t, "underlay-only")
	if _, err := rel.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if restarted, err := rel.Restarted(ctx); err != nil || restarted {
		t.Fatalf("nothing restarted: Restarted %v, %v", restarted, err)
	}
	// bgpd restarts with the applied config in its frr.conf: restarted, but nothing lost.
	must(t, os.WriteFile(router.ConfigPath(), cfg, 0o644))
	must(t, router.Restart(ctx, "bgpd"))
	if restarted, err := rel.Restarted(ctx); err != nil || restarted {
		t.Fatalf("bgpd back with the applied config: Restarted %v, %v; want nothing lost", restarted, err)
	}
	// bgpd comes back empty, as a fresh FRR pod with another frr.conf would.
	must(t, os.WriteFile(router.ConfigPath(), nil, 0o644))
	must(t, router.Restart(ctx, "bgpd"))
	if restarted, err := rel.Restarted(ctx); err != nil || !restarted {
		t.Fatalf("bgpd back empty: Restarted %v, %v; want the loss seen", restarted, err)
	}
	res, err := rel.Apply(ctx, cfg)
	if err != nil || res.Skipped {
		t.Fatalf("Apply after the loss: skipped %v, %v; want a reload", res.Skipped, err)
	}
	running, err := router.Vtysh(ctx, "show running-config")
	must(t, err)
	if !strings.Contains(string(running), "router bgp 65000") {
		t.Errorf("FRR after the reload:\n%s", running)
	}
}
