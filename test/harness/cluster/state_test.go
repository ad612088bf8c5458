package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestDownAfterCrash leaves what a killed demo leaves - a supervisor, a child in its own process group, a
// process inside one of its namespaces, a process naming the work directory, directories - and checks that Down
// stops and removes all of it.
func TestDownAfterCrash(t *testing.T) {
	testreq.Commands(t, "nsenter")
	ctx := context.Background()
	stateDir, work, extra := t.TempDir(), t.TempDir(), t.TempDir()
	prefix := frrproc.UniqueName("nldown") + "-"
	ns := prefix + "n1"
	h, err := namedns.Create(ns)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	t.Cleanup(func() {
		if err := namedns.Delete(ns); err != nil && !errors.Is(err, namedns.ErrNotExist) {
			t.Error(err)
		}
	})

	// "sleep 300; true" keeps sh from exec'ing sleep, so the marker argument stays on sh's command line.
	start := func(marker string, setpgid bool, argv ...string) *exec.Cmd {
		t.Helper()
		if len(argv) == 0 {
			argv = []string{"sh", "-c", "sleep 300; true", marker}
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: setpgid}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait() }()
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Process.Kill() })
		return cmd
	}
	supervisor := start("supervisor", true)
	child := start(work, true)
	named := start(filepath.Join(work, "etcd"), true)
	inNS := start("", true, "nsenter", "--net=/run/netns/"+ns, "--", "sh", "-c", "sleep 300; true")

	// The supervisor's command line, once sh runs.
	var supCmdline string
	if err := wait.Poll(ctx, 10*time.Millisecond, 5*time.Second, "supervisor started", func(context.Context) (bool, string, error) {
		supCmdline = cmdline(supervisor.Process.Pid)
		return strings.Contains(supCmdline, "sleep 300"), supCmdline, nil
	}); err != nil {
		t.Fatal(err)
	}
	st := State{Supervisor: supervisor.Process.Pid, SupervisorCmdline: supCmdline, WorkDir: work, NetnsPrefix: prefix, Dirs: []string{extra},
		Processes: []ProcessRecord{{Name: "child", PGID: child.Process.Pid}}}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stateDir, StateFileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var log []string
	if err := Down(stateDir, 10*time.Second, func(f string, a ...any) { log = append(log, f) }); err != nil {
		t.Fatalf("Down: %v", err)
	}
	for name, cmd := range map[string]*exec.Cmd{"supervisor": supervisor, "child": child, "etcd stand-in": named, "process in the namespace": inNS} {
		pid := cmd.Process.Pid
		err := wait.Poll(ctx, 20*time.Millisecond, 5*time.Second, name+" gone", func(context.Context) (bool, string, error) {
			return !alive(pid, "sleep 300"), "still running", nil
		})
		if err != nil {
			t.Errorf("%s (pid %d) survived Down: %v", name, pid, err)
		}
	}
	for _, p := range []string{"/run/netns/" + ns, work, extra, filepath.Join(stateDir, StateFileName)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	// Nothing recorded: a no-op.
	if err := Down(stateDir, time.Second, func(string, ...any) {}); err != nil {
		t.Errorf("Down without state: %v", err)
	}
}
