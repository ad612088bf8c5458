package frrreload

import (
	"context"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// systemd's D-Bus names (org.freedesktop.systemd1(5)).
const (
	systemdBusName   = "org.freedesktop.systemd1"
	systemdPath      = dbus.ObjectPath("/org/freedesktop/systemd1")
	systemdManager   = "org.freedesktop.systemd1.Manager"
	systemdJobResult = "done"
)

// ErrUnitJobFailed marks a systemd job that ended with a result other than
// "done" (failed, timeout, canceled, dependency, skipped).
var ErrUnitJobFailed = errors.New("systemd job did not complete")

// SystemdDBus reloads units through systemd's Manager on a D-Bus connection:
// ReloadUnit(name, "replace") queues a job, the JobRemoved signal reports
// its result.
type SystemdDBus struct {
	conn *dbus.Conn
}

// NewSystemdDBus connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS when set, else systemd's socket). The
// connection is closed when ctx ends (or by Close).
func NewSystemdDBus(ctx context.Context) (*SystemdDBus, error) {
	conn, err := dbus.ConnectSystemBus(dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("connect to the system bus: %w", err)
	}
	return &SystemdDBus{conn: conn}, nil
}

// Close closes the connection.
func (s *SystemdDBus) Close() error { return s.conn.Close() }

// ReloadUnit reloads unit and waits until systemd reports the job's result.
func (s *SystemdDBus) ReloadUnit(ctx context.Context, unit string) error {
	match := []dbus.MatchOption{
		dbus.WithMatchInterface(systemdManager),
		dbus.WithMatchMember("JobRemoved"),
		dbus.WithMatchObjectPath(systemdPath),
	}
	if err := s.conn.AddMatchSignalContext(ctx, match...); err != nil {
		return fmt.Errorf("subscribe to JobRemoved: %w", err)
	}
	defer s.conn.RemoveMatchSignalContext(context.WithoutCancel(ctx), match...) //nolint:errcheck // best effort
	// Subscribed before the call so the job's end cannot be missed.
	signals := make(chan *dbus.Signal, 32)
	s.conn.Signal(signals)
	defer s.conn.RemoveSignal(signals)

	manager := s.conn.Object(systemdBusName, systemdPath)
	// systemd only emits job signals to clients that subscribed.
	if call := manager.CallWithContext(ctx, systemdManager+".Subscribe", 0); call.Err != nil {
		var derr dbus.Error
		if !errors.As(call.Err, &derr) || derr.Name != "org.freedesktop.systemd1.AlreadySubscribed" {
			return fmt.Errorf("systemd Subscribe: %w", call.Err)
		}
	}
	var job dbus.ObjectPath
	if err := manager.CallWithContext(ctx, systemdManager+".ReloadUnit", 0, unit, "replace").Store(&job); err != nil {
		return fmt.Errorf("systemd ReloadUnit %s: %w", unit, err)
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for reload job %s of %s: %w", job, unit, ctx.Err())
		case sig, ok := <-signals:
			if !ok {
				return fmt.Errorf("wait for reload job %s of %s: D-Bus connection closed", job, unit)
			}
			if sig.Name != systemdManager+".JobRemoved" || len(sig.Body) < 4 {
				continue
			}
			if path, _ := sig.Body[1].(dbus.ObjectPath); path != job {
				continue
			}
			if result, _ := sig.Body[3].(string); result != systemdJobResult {
				return fmt.Errorf("%w: reload of %s: %s", ErrUnitJobFailed, unit, result)
			}
			return nil
		}
	}
}
