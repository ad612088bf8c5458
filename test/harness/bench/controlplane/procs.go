package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Processes whose CPU time a change costs (cpuShare): the operator, the control plane and this process (the
// simulated agents and their informer; the benchmark's own work is small).
const (
	procOperator  = "operator"
	procAPIServer = "kube-apiserver"
	procEtcd      = "etcd"
	procAgents    = "agents"
)

// procNames lists them in the order the detail names them.
func procNames() []string { return []string{procOperator, procAPIServer, procEtcd, procAgents} }

// procs are the pids of the processes of a run.
type procs map[string]int

// findProcs finds kube-apiserver and etcd among this process's children (envtest starts them) and adds the
// operator and this process.
func findProcs(operator int) (procs, error) {
	p := procs{procOperator: operator, procAgents: os.Getpid()}
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		st, err := parseStat(string(b))
		if err != nil || st.ppid != os.Getpid() || (st.comm != procAPIServer && st.comm != procEtcd) {
			continue
		}
		if p[st.comm], err = strconv.Atoi(filepath.Base(filepath.Dir(f))); err != nil {
			return nil, fmt.Errorf("pid of %s: %w", f, err)
		}
	}
	for _, name := range procNames() {
		if p[name] == 0 {
			return nil, fmt.Errorf("no %s process among this process's children", name)
		}
	}
	return p, nil
}

// cpu reads the CPU time each process used so far.
func (p procs) cpu() (map[string]time.Duration, error) {
	out := make(map[string]time.Duration, len(p))
	for name, pid := range p {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, fmt.Errorf("CPU time of %s: %w", name, err)
		}
		st, err := parseStat(string(b))
		if err != nil {
			return nil, fmt.Errorf("CPU time of %s: %w", name, err)
		}
		out[name] = st.cpu
	}
	return out, nil
}

// stat is what the benchmark reads of a /proc/<pid>/stat line.
type stat struct {
	comm string
	ppid int
	cpu  time.Duration // utime + stime
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on every Linux architecture Go supports).
const clockTicks = 100

// parseStat reads a /proc/<pid>/stat line: the command name is in parentheses and may hold spaces.
func parseStat(text string) (stat, error) {
	open, end := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 0 || end < open {
		return stat{}, errors.New("/proc stat: no command name")
	}
	st := stat{comm: text[open+1 : end]}
	// After ")": state (field 3 of the line), ppid 4, ..., utime 14, stime 15.
	f := strings.Fields(text[end+1:])
	if len(f) < 13 {
		return stat{}, fmt.Errorf("/proc stat: %d fields", len(f))
	}
	var err error
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return stat{}, fmt.Errorf("/proc stat: ppid: %w", err)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return stat{}, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	st.cpu = time.Duration(ticks) * time.Second / clockTicks
	return st, nil
}
