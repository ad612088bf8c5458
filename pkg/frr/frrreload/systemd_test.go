package frrreload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// fakeSystemd serves a stand-in systemd Manager (frrtest.Systemd) on a private bus, makes that bus the system
// bus for this test, and returns a client connected through NewSystemdDBus.
func fakeSystemd(t *testing.T, units map[string]string) (*frrtest.Systemd, *SystemdDBus) {
	t.Helper()
	sd := frrtest.NewSystemd(t, units)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", sd.Address)
	s, err := NewSystemdDBus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return sd, s
}

func TestSystemdDBusReloadUnit(t *testing.T) {
	_, s := fakeSystemd(t, map[string]string{"frr.service": "done", "broken.service": "failed", "stuck.service": ""})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for i := 0; i < 3; i++ { // repeated: subscriptions and matches are cleaned up
		if err := s.ReloadUnit(ctx, "frr.service"); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
	}
	if err := s.ReloadUnit(ctx, "broken.service"); !errors.Is(err, ErrUnitJobFailed) || !strings.Contains(err.Error(), "failed") {
		t.Errorf("failed job: err = %v, want ErrUnitJobFailed", err)
	}
	var derr dbus.Error
	if err := s.ReloadUnit(ctx, "missing.service"); !errors.As(err, &derr) || derr.Name != "org.freedesktop.systemd1.NoSuchUnit" {
		t.Errorf("unknown unit: err = %v, want NoSuchUnit", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if err := s.ReloadUnit(short, "stuck.service"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("job that never ends: err = %v, want the context's deadline", err)
	}
}

// TestReloaderSystemdMethod applies a config with Method ReloadSystemd: the
// Reloader validates, installs frr.conf and asks "systemd" over D-Bus to
// reload frr.service; the stand-in manager's job does what the unit's
// ExecReload does (frr-reload.py --reload of frr.conf) against real FRR.
func TestReloaderSystemdMethod(t *testing.T) {
	frrtest.Require(t)
	ns := frrtest.Netns(t, "frrsd-")
	router := frrtest.Router(t, frrproc.Options{Netns: ns.Name})
	target := frrvty.Target{VtySocket: router.Dir, ConfDir: router.ConfDir, Tools: router.Tools()}
	var jobs atomic.Int32
	sd, client := fakeSystemd(t, map[string]string{"frr.service": "done"})
	sd.SetJob(func(string) error {
		jobs.Add(1)
		out, stderr, err := target.Run(context.Background(), "python3", reloadArgs(target, "--reload", target.ConfigPath())...)
		if err != nil {
			return fmt.Errorf("%w: %s%s", err, out, stderr)
		}
		return nil
	})
	rel, err := NewReloader(Options{Target: target, StateDir: t.TempDir(), Method: ReloadSystemd, Systemd: client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rel.Close(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "l2vni-explicit.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rel.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if jobs.Load() != 1 {
		t.Errorf("%d reload jobs, want 1", jobs.Load())
	}
	running, err := target.RunningConfig(ctx)
	if err != nil || !strings.Contains(string(running), "route-target import 65099:101") {
		t.Errorf("config not applied through the systemd reload: %v\n%s", err, running)
	}
	// A failing job is a failed apply, and the previous config comes back.
	bad := strings.Replace(string(cfg), "65099:101", "65098:101", 1)
	sd.SetJob(func(string) error { jobs.Add(1); return errors.New("ExecReload failed") })
	if _, err := rel.Apply(ctx, []byte(bad)); !errors.Is(err, ErrReloadFailed) || !errors.Is(err, ErrUnitJobFailed) {
		t.Errorf("failed reload job: err = %v, want ErrReloadFailed and ErrUnitJobFailed", err)
	}
	if onDisk, _ := os.ReadFile(target.ConfigPath()); string(onDisk) != string(cfg) {
		t.Errorf("frr.conf not restored after the failed reload")
	}
}

func TestNewReloaderOptions(t *testing.T) {
	if _, err := NewReloader(Options{}); err == nil {
		t.Error("missing StateDir accepted")
	}
	if _, err := NewReloader(Options{StateDir: t.TempDir(), Method: ReloadSystemd}); err == nil {
		t.Error("ReloadSystemd without a UnitReloader accepted")
	}
}
