package frr

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/network-operator/network-operator/internal/testreq"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// fakeManager answers like systemd's Manager for ReloadUnit: it queues a job
// and reports its end with JobRemoved, after an unrelated job's signal.
type fakeManager struct {
	conn   *dbus.Conn
	nextID atomic.Uint32
	units  map[string]string // unit -> job result
	mu     sync.Mutex
	// run, when set, is the job itself (ExecReload); its error fails the job.
	run func() error
}

func (m *fakeManager) setRun(run func() error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.run = run
}

func (m *fakeManager) Subscribe() *dbus.Error { return nil }

func (m *fakeManager) ReloadUnit(name, mode string) (dbus.ObjectPath, *dbus.Error) {
	result, ok := m.units[name]
	if !ok || mode != "replace" {
		return "", dbus.NewError("org.freedesktop.systemd1.NoSuchUnit", []any{"Unit " + name + " not loaded."})
	}
	id := m.nextID.Add(2)
	job := dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id))
	m.mu.Lock()
	run := m.run
	m.mu.Unlock()
	go func() {
		if run != nil {
			if err := run(); err != nil {
				result = "failed"
			}
		}
		// Possibly before the method reply: the client must not miss it.
		_ = m.conn.Emit(systemdPath, systemdManager+".JobRemoved", id-1, dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id-1)), "other.service", "failed")
		if result != "" { // "" = the job never ends
			_ = m.conn.Emit(systemdPath, systemdManager+".JobRemoved", id, job, name, result)
		}
	}()
	return job, nil
}

// privateBus starts a dbus-daemon for the test and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	bin := testreq.Tools(t, "dbus-daemon")[0] // runs the private bus for the D-Bus reload tests
	sock := filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command(bin, "--session", "--nofork", "--nopidfile", "--print-address=1", "--address=unix:path="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon address: %v", err)
	}
	return strings.TrimSpace(line)
}

// fakeSystemd serves m on a private bus as org.freedesktop.systemd1 and
// returns a client for it.
func fakeSystemd(t *testing.T, m *fakeManager) *SystemdDBus {
	t.Helper()
	addr := privateBus(t)
	server, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	m.conn = server
	if err := server.Export(m, systemdPath, systemdManager); err != nil {
		t.Fatal(err)
	}
	if reply, err := server.RequestName(systemdBusName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v %v", systemdBusName, reply, err)
	}
	client, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSystemdDBusConn(client)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSystemdDBusReloadUnit(t *testing.T) {
	s := fakeSystemd(t, &fakeManager{units: map[string]string{"frr.service": "done", "broken.service": "failed", "stuck.service": ""}})
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
	target := Target{VtySocket: router.Dir, ConfDir: router.ConfDir}
	var jobs atomic.Int32
	m := &fakeManager{units: map[string]string{"frr.service": "done"}, run: func() error {
		jobs.Add(1)
		out, stderr, err := runCmd(context.Background(), "python3", target.reloadArgs("--reload", target.ConfigPath())...)
		if err != nil {
			return fmt.Errorf("%w: %s%s", err, out, stderr)
		}
		return nil
	}}
	rel, err := NewReloader(Options{Target: target, StateDir: t.TempDir(), Method: ReloadSystemd, Systemd: fakeSystemd(t, m)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := os.ReadFile(filepath.Join("testdata", "golden", "l2vni-explicit.conf"))
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
	m.setRun(func() error { jobs.Add(1); return errors.New("ExecReload failed") })
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
