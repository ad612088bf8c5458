package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/namedns"
)

// StateFileName is the file a running cluster keeps in its state directory.
const StateFileName = "state.json"

// State is what a running cluster records in its state directory, so that `down` can stop it, and clean up
// after it when its supervising process died without tearing down.
type State struct {
	// Supervisor is the pid of the process that owns everything (the demo in `up` mode), SupervisorCmdline its
	// command line (a pid the kernel reused for another process is left alone).
	Supervisor        int    `json:"supervisor"`
	SupervisorCmdline string `json:"supervisorCmdline"`
	// WorkDir holds logs, configs, kubeconfigs, Prometheus data, etcd data; every process the cluster started
	// has it on its command line.
	WorkDir string `json:"workDir"`
	// NetnsPrefix starts the name of every namespace of the cluster (/run/netns/<prefix>*).
	NetnsPrefix string `json:"netnsPrefix"`
	// PinRoot is the bpffs directory holding every node's pins.
	PinRoot string `json:"pinRoot,omitempty"`
	// Dirs are further directories of the run outside WorkDir (FRR instances, webhook certificates).
	Dirs []string `json:"dirs,omitempty"`
	// Processes are the children started in their own process group.
	Processes []ProcessRecord `json:"processes,omitempty"`
	// Endpoints a user may want while the cluster runs.
	APIServer  string `json:"apiServer,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Prometheus string `json:"prometheus,omitempty"`
	// Ready is set once the scenario has run and the cluster is left running.
	Ready bool `json:"ready"`
}

// ProcessRecord is one child process group.
type ProcessRecord struct {
	Name string `json:"name"`
	PGID int    `json:"pgid"`
}

// stateRecorder keeps the state file current (a no-op without a state directory).
type stateRecorder struct {
	mu   sync.Mutex
	path string
	st   State
}

func (r *stateRecorder) update(fn func(*State)) error {
	if r == nil || r.path == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(&r.st)
	data, err := json.MarshalIndent(r.st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// ReadState reads the state file of dir; ok is false when there is none.
func ReadState(dir string) (st State, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, StateFileName))
	if errors.Is(err, os.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("read state: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return State{}, false, fmt.Errorf("decode %s: %w", filepath.Join(dir, StateFileName), err)
	}
	return st, true, nil
}

// Down stops the cluster recorded in dir and removes what it left: it asks the supervisor to tear down
// (SIGTERM, waiting up to grace), then kills what is still there - recorded process groups, processes inside
// the cluster's namespaces, processes whose command line names the work directory (etcd, kube-apiserver) -,
// deletes the namespaces and removes the pins, the work directory and the state file. It is safe to call when
// nothing runs. logf reports what it had to clean up by hand.
func Down(dir string, grace time.Duration, logf func(format string, args ...any)) error {
	st, ok, err := ReadState(dir)
	if err != nil || !ok {
		return err
	}
	var errs []error
	supervising := func() bool {
		return st.Supervisor > 0 && st.Supervisor != os.Getpid() && syscall.Kill(st.Supervisor, 0) == nil &&
			cmdline(st.Supervisor) == st.SupervisorCmdline
	}
	if supervising() {
		logf("stopping the demo running since earlier (pid %d)", st.Supervisor)
		if err := syscall.Kill(st.Supervisor, syscall.SIGTERM); err == nil {
			_ = wait.Poll(context.Background(), 100*time.Millisecond, grace, "demo exit", func(context.Context) (bool, string, error) {
				return !supervising(), "still running", nil
			})
		}
		if supervising() {
			logf("the demo (pid %d) did not stop within %v: killing it", st.Supervisor, grace)
			_ = syscall.Kill(st.Supervisor, syscall.SIGKILL)
		}
	}
	// Whatever is left was not torn down by the supervisor.
	for _, p := range st.Processes {
		if st.WorkDir != "" && alive(p.PGID, st.WorkDir) {
			logf("killing leftover %s (process group %d)", p.Name, p.PGID)
			_ = syscall.Kill(-p.PGID, syscall.SIGKILL)
		}
	}
	if st.NetnsPrefix != "" {
		if err := deleteNamespaces(st.NetnsPrefix, logf); err != nil {
			errs = append(errs, err)
		}
	}
	if st.WorkDir != "" {
		for _, pid := range pidsMentioning(st.WorkDir) {
			logf("killing leftover process %d (%s)", pid, cmdline(pid))
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if st.PinRoot != "" {
		if err := os.RemoveAll(st.PinRoot); err != nil {
			errs = append(errs, fmt.Errorf("remove pins %s: %w", st.PinRoot, err))
		}
	}
	for _, d := range st.Dirs {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	if st.WorkDir != "" {
		if err := os.RemoveAll(st.WorkDir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", st.WorkDir, err))
		}
	}
	if err := os.Remove(filepath.Join(dir, StateFileName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// alive reports whether pid runs and its command line mentions marker (a pid the kernel reused for something
// else is left alone).
func alive(pid int, marker string) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	return strings.Contains(cmdline(pid), marker)
}

func cmdline(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
}

// pidsMentioning lists processes (not this one) whose command line contains s.
func pidsMentioning(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if strings.Contains(cmdline(pid), s) {
			out = append(out, pid)
		}
	}
	return out
}

// deleteNamespaces kills every process inside the namespaces /run/netns/<prefix>* and deletes them.
func deleteNamespaces(prefix string, logf func(format string, args ...any)) error {
	names, err := namedns.List(prefix)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		pids, err := namedns.Processes(name)
		if err != nil {
			errs = append(errs, err)
		}
		for _, pid := range pids {
			logf("killing process %d in %s (%s)", pid, name, cmdline(pid))
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		logf("deleting namespace %s", name)
		if err := namedns.Delete(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
