package frrreload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// refusingVtysh writes a vtysh that stands in for FRR refusing a command: "vtysh -f FILE" fails, as FRR's
// refusals do, when FILE's name matches one of the globs and it holds word; everything else (-C, -m, -c) is the
// real vtysh. frr-reload.py finds it too (it runs the vtysh of --bindir).
func refusingVtysh(t *testing.T, word string, globs ...string) string {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/bash
file=
for ((i = 1; i <= $#; i++)); do
  case ${!i} in
    -C|-m) exec /usr/bin/vtysh "$@" ;;
    -f) j=$((i + 1)); file=${!j} ;;
  esac
done
if [[ -n $file ]] && grep -q '` + word + `' "$file"; then
  for glob in ` + strings.Join(globs, " ") + `; do
    if [[ $(basename "$file") == $glob ]]; then
      echo "line 1: % Unknown command[4]: refused by the test" >&2
      exit 2
    fi
  done
fi
exec /usr/bin/vtysh "$@"
`
	path := filepath.Join(dir, "vtysh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDeltaRefusedFallsBack: FRR refuses part of the delta; frr-reload.py then applies the config, and the
// result says so.
func TestDeltaRefusedFallsBack(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := testReloader(t, Options{Target: frrvty.Target{VtyshPath: refusingVtysh(t, "pl_fallback", ".frr-delta-*")}, ScratchDaemons: []string{}})
	base := goldenConf(t, "full")
	if res, err := r.Apply(ctx, base); err != nil || res.Path != PathDelta {
		t.Fatalf("base config: %+v, %v; want path %q", res, err, PathDelta)
	}
	cfg := insert(t, base, "ip prefix-list pl_peer_calico_in ", "ip prefix-list pl_fallback seq 5 permit 10.0.0.0/8\n")
	res, err := r.Apply(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != PathDeltaThenScript || !strings.Contains(res.PathReason, "refused by the test") || len(res.Residual) > 0 {
		t.Errorf("path %q (%s), residual %q; want %q after the refusal and nothing left", res.Path, res.PathReason, res.Residual, PathDeltaThenScript)
	}
	running, err := r.Target().RunningConfig(ctx)
	if err != nil || !strings.Contains(string(running), "ip prefix-list pl_fallback seq 5 permit 10.0.0.0/8") {
		t.Errorf("frr-reload.py did not apply the config: %v\n%s", err, running)
	}
}

// TestDeltaAndScriptRefusedRollBack: FRR refuses the delta and frr-reload.py's reload too: the previous config
// is restored, on disk and in the daemons.
func TestDeltaAndScriptRefusedRollBack(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := testReloader(t, Options{Target: frrvty.Target{VtyshPath: refusingVtysh(t, "pl_poison", ".frr-delta-*", "reload-*.txt")}, ScratchDaemons: []string{}})
	base := goldenConf(t, "full")
	if _, err := r.Apply(ctx, base); err != nil {
		t.Fatal(err)
	}
	before, err := r.Target().RunningConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := insert(t, base, "ip prefix-list pl_peer_calico_in ", "ip prefix-list pl_poison seq 5 permit 10.0.0.0/8\n")
	res, err := r.Apply(ctx, cfg)
	if !errors.Is(err, ErrReloadFailed) || !strings.Contains(err.Error(), "previous config restored") {
		t.Fatalf("Apply = %+v, %v; want ErrReloadFailed with the previous config restored", res, err)
	}
	after, err := r.Target().RunningConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("running config after the rollback differs:\n%s\nbefore:\n%s", after, before)
	}
	if onDisk, err := os.ReadFile(r.Target().ConfigPath()); err != nil || string(onDisk) != string(base) {
		t.Errorf("frr.conf is not the previous config after the rollback (%v)", err)
	}
	if last, err := r.LastApplied(); err != nil || string(last) != string(base) {
		t.Errorf("last applied config is not the previous one (%v)", err)
	}
}

// TestPlanPath: every rendered config goes by the delta, except the one whose base leaves its structure to
// vtysh; with systemd, systemd reloads.
func TestPlanPath(t *testing.T) {
	r, err := NewReloader(Options{StateDir: t.TempDir(), ScratchDaemons: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "*.conf"))
	if err != nil || len(files) < 20 {
		t.Fatalf("want the golden configs, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		cfg, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want := PathDelta
		if filepath.Base(f) == "brownfield-dasschiff-testdata.conf" {
			want = PathReloadScript // das-schiff's base indents its address-family lines deeper than the rendered ones
		}
		if path, why := r.PlanPath(cfg); path != want || (why == "") != (want == PathDelta) {
			t.Errorf("%s: %q (%s), want %q", filepath.Base(f), path, why, want)
		}
	}
	sd, err := NewReloader(Options{StateDir: t.TempDir(), Method: ReloadSystemd, Systemd: nopSystemd{}, ScratchDaemons: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if path, _ := sd.PlanPath(goldenConf(t, "full")); path != PathSystemd {
		t.Errorf("systemd reloader: %q", path)
	}
}

type nopSystemd struct{}

func (nopSystemd) ReloadUnit(context.Context, string) error { return nil }

// TestDeltaRefusalRedacted: a delta FRR refuses (here without a scratch instance to refuse it first: a password
// for a neighbor that does not exist) is rolled back, and neither the error nor the result shows the password.
func TestDeltaRefusalRedacted(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := testReloader(t, Options{ScratchDaemons: []string{}})
	base := goldenConf(t, "full")
	if _, err := r.Apply(ctx, base); err != nil {
		t.Fatal(err)
	}
	cfg := insert(t, base, " bgp listen range", " neighbor 10.7.7.7 password hunter2\n")
	res, err := r.Apply(ctx, cfg)
	if !errors.Is(err, ErrReloadFailed) {
		t.Fatalf("Apply = %+v, %v; want ErrReloadFailed", res, err)
	}
	if res.Path != PathDeltaThenScript {
		t.Errorf("path %q, want %q", res.Path, PathDeltaThenScript)
	}
	for what, s := range map[string]string{"error": err.Error(), "path reason": res.PathReason,
		"diff": strings.Join(append(res.Diff.Add, res.Diff.Delete...), "\n")} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "s3cret") {
			t.Errorf("the %s shows a password: %s", what, s)
		}
	}
	if !strings.Contains(res.PathReason, "neighbor 10.7.7.7 password <redacted>") {
		t.Errorf("the path reason does not name the refused line: %s", res.PathReason)
	}
}
