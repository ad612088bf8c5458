package frrtest

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// systemd's D-Bus names (org.freedesktop.systemd1(5)).
const (
	systemdBusName = "org.freedesktop.systemd1"
	systemdPath    = dbus.ObjectPath("/org/freedesktop/systemd1")
	systemdManager = "org.freedesktop.systemd1.Manager"
)

// Systemd stands in for systemd's Manager on a private dbus-daemon (removed with the test): ReloadUnit queues a
// job, runs the job function (the unit's ExecReload) when one is set, and reports the job's end with JobRemoved -
// after an unrelated job's signal, and possibly before the method reply, as systemd may.
type Systemd struct {
	// Address is the bus address; point DBUS_SYSTEM_BUS_ADDRESS at it to make it "the system bus".
	Address string
	m       *manager
}

// NewSystemd starts the bus and serves the manager on it. units maps each known unit to the result its reload
// jobs end with: "done", "failed", ..., or "" for a job that never ends.
func NewSystemd(t testing.TB, units map[string]string) *Systemd {
	t.Helper()
	addr := privateBus(t)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to the private bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	m := &manager{conn: conn, units: units}
	if err := conn.Export(m, systemdPath, systemdManager); err != nil {
		t.Fatalf("export the manager: %v", err)
	}
	if reply, err := conn.RequestName(systemdBusName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v %v", systemdBusName, reply, err)
	}
	return &Systemd{Address: addr, m: m}
}

// SetJob makes every following reload job run job(unit); its error fails the job.
func (s *Systemd) SetJob(job func(unit string) error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.job = job
}

// Reloads returns the units reloaded so far, in order.
func (s *Systemd) Reloads() []string {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return append([]string(nil), s.m.reloads...)
}

// manager is the exported D-Bus object: only its methods returning *dbus.Error are callable.
type manager struct {
	conn    *dbus.Conn
	units   map[string]string
	nextID  atomic.Uint32
	mu      sync.Mutex
	job     func(unit string) error
	reloads []string
}

func (m *manager) Subscribe() *dbus.Error { return nil }

func (m *manager) ReloadUnit(name, mode string) (dbus.ObjectPath, *dbus.Error) {
	result, ok := m.units[name]
	if !ok || mode != "replace" {
		return "", dbus.NewError("org.freedesktop.systemd1.NoSuchUnit", []any{"Unit " + name + " not loaded."})
	}
	id := m.nextID.Add(2)
	job := dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id))
	m.mu.Lock()
	run := m.job
	m.reloads = append(m.reloads, name)
	m.mu.Unlock()
	go func() {
		if run != nil {
			if err := run(name); err != nil {
				result = "failed"
			}
		}
		_ = m.conn.Emit(systemdPath, systemdManager+".JobRemoved", id-1,
			dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id-1)), "other.service", "failed")
		if result != "" { // "" = the job never ends
			_ = m.conn.Emit(systemdPath, systemdManager+".JobRemoved", id, job, name, result)
		}
	}()
	return job, nil
}

// privateBus starts a dbus-daemon for the test and returns its address.
func privateBus(t testing.TB) string {
	t.Helper()
	bin := testreq.Tools(t, "dbus-daemon")[0] // runs the private bus for the D-Bus reload tests
	sock := filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command(bin, "--session", "--nofork", "--nopidfile", "--print-address=1", "--address=unix:path="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
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
