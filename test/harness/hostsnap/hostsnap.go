// Package hostsnap records what tests and demos could leave behind on a host - named network namespaces, bpffs
// pins, BPF programs and links (every tc/XDP attachment holds one), processes, mounts, temp directories, host
// interfaces, FRR instance directories and global sysctls - so that a later snapshot can be compared with it and
// every leftover named.
package hostsnap

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/pkg/namedns"
)

// Process is one process as seen in /proc.
type Process struct {
	Start   uint64 `json:"start"` // clock ticks after boot: a reused pid has another
	Comm    string `json:"comm"`
	Cmdline string `json:"cmdline"`
	Netns   string `json:"netns"` // the /proc/<pid>/ns/net link text, net:[inode]
}

// Snapshot is the state of the host at one moment.
type Snapshot struct {
	Namespaces []string          `json:"namespaces"`
	BPFFS      []string          `json:"bpffs"`
	Programs   map[uint32]string `json:"programs"`
	Links      map[uint32]string `json:"links"`
	Processes  map[int]Process   `json:"processes"`
	Mounts     []string          `json:"mounts"`
	Temp       []string          `json:"temp"`
	HostLinks  []string          `json:"hostLinks"`
	FRRDirs    []string          `json:"frrDirs"`
	// StatePaths are the node paths of the agent and of kubelets that exist (a test node that wrote to the
	// host's instead of its own leaves them).
	StatePaths []string          `json:"statePaths"`
	Sysctls    map[string]string `json:"sysctls"`
	// HostNetns is the network namespace of the process that took the snapshot (the host's).
	HostNetns string   `json:"hostNetns"`
	Errors    []string `json:"errors,omitempty"`
}

// Options say where to look; zero values mean the host's usual places.
type Options struct {
	BPFFS   string   // /sys/fs/bpf
	TempDir string   // os.TempDir()
	FRRDirs []string // /etc/frr, /var/run/frr
	// IgnoreTemp are glob patterns of names in TempDir that are not the project's (the snapshot file itself).
	IgnoreTemp []string
}

// Sysctls are the host-wide settings that tests, kubelets and CNI plugins are known to change.
var Sysctls = []string{
	"net/ipv4/ip_forward", "net/ipv4/conf/all/forwarding", "net/ipv6/conf/all/forwarding",
	"net/ipv4/conf/default/forwarding", "vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops",
	"net/core/bpf_jit_enable", "net/ipv4/conf/all/rp_filter",
}

// StatePaths are host paths the agent (its state hostPath) and the test nodes' kubelets, containerd and CNI
// use: on this machine every node has its own, so any of them appearing on the host is left behind. The test
// nodes' shims share /run/containerd (their socket directory is fixed) while a cluster runs, and /run/kubenodes
// holds the clusters' leases on it: both go with the last cluster.
var StatePaths = []string{"/var/lib/network-operator", "/var/lib/kubelet", "/var/log/pods", "/var/log/containers",
	"/etc/cni", "/var/lib/cni", "/run/containerd", "/run/kubenodes"}

// ProjectPrograms are the programs whose processes, when new and still running, are left behind even in the
// host's network namespace.
var ProjectPrograms = []string{
	"zebra", "bgpd", "staticd", "watchfrr", "bfdd", "mgmtd", "iperf3", "prometheus", "etcd", "kube-apiserver",
	"network-agent", "network-operator", "netop-demo", "kubelet", "kube-controller", "kube-scheduler",
	"kube-proxy", "containerd", "containerd-shim", "runc", "bpftrace", "dbus-daemon", "tcpdump",
}

func (o Options) withDefaults() Options {
	if o.BPFFS == "" {
		o.BPFFS = "/sys/fs/bpf"
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.FRRDirs == nil {
		o.FRRDirs = []string{"/etc/frr", "/var/run/frr"}
	}
	return o
}

// Take records the host as it is now. What cannot be read is noted in Errors, never fatal.
func Take(o Options) *Snapshot {
	o = o.withDefaults()
	s := &Snapshot{Programs: map[uint32]string{}, Links: map[uint32]string{}, Processes: map[int]Process{},
		Sysctls: map[string]string{}}
	note := func(err error) {
		if err != nil {
			s.Errors = append(s.Errors, err.Error())
		}
	}
	var err error
	s.HostNetns, err = os.Readlink("/proc/self/ns/net")
	note(err)
	s.Namespaces, err = namedns.List("")
	note(err)
	s.BPFFS, err = walk(o.BPFFS, 3)
	note(err)
	note(s.readBPF())
	note(s.readProcesses())
	s.Mounts, err = mountPoints()
	note(err)
	s.Temp, err = entries(o.TempDir, o.IgnoreTemp)
	note(err)
	for _, p := range StatePaths {
		if _, err := os.Lstat(p); err == nil {
			s.StatePaths = append(s.StatePaths, p)
		}
	}
	for _, d := range o.FRRDirs {
		names, err := entries(d, nil)
		note(err)
		for _, n := range names {
			s.FRRDirs = append(s.FRRDirs, filepath.Join(d, n))
		}
	}
	links, err := netlink.LinkList()
	note(err)
	for _, l := range links {
		s.HostLinks = append(s.HostLinks, l.Attrs().Name)
	}
	sort.Strings(s.HostLinks)
	for _, k := range Sysctls {
		data, err := os.ReadFile(filepath.Join("/proc/sys", k))
		if err == nil {
			s.Sysctls[strings.ReplaceAll(k, "/", ".")] = strings.TrimSpace(string(data))
		}
	}
	return s
}

// walk lists the paths under root, depth levels deep (a missing root is empty).
func walk(root string, depth int) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		if p == root {
			return nil
		}
		out = append(out, p)
		if d.IsDir() && strings.Count(strings.TrimPrefix(p, root), "/") >= depth {
			return fs.SkipDir
		}
		return nil
	})
	return out, err
}

func entries(dir string, ignore []string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		skip := false
		for _, pattern := range ignore {
			if ok, _ := filepath.Match(pattern, e.Name()); ok {
				skip = true
			}
		}
		if !skip {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (s *Snapshot) readBPF() error {
	var errs []error
	for id := ebpf.ProgramID(0); ; {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("list BPF programs: %w", err))
			break
		}
		id = next
		desc := "?"
		if p, err := ebpf.NewProgramFromID(id); err == nil {
			if info, err := p.Info(); err == nil {
				desc = fmt.Sprintf("%s %s", info.Type, info.Name)
			}
			p.Close()
		}
		s.Programs[uint32(id)] = desc
	}
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		desc := "?"
		if info, err := it.Link.Info(); err == nil {
			desc = fmt.Sprintf("type %d, program %d", info.Type, info.Program)
		}
		s.Links[uint32(it.ID)] = desc
	}
	if err := it.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (s *Snapshot) readProcesses() error {
	es, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProcess(pid); ok {
			s.Processes[pid] = p
		}
	}
	return nil
}

// readProcess reads one user-space process; kernel threads (empty cmdline) and vanished ones give ok=false.
func readProcess(pid int) (Process, bool) {
	comm, fields, ok := procStat(pid)
	if !ok || len(fields) < 20 {
		return Process{}, false
	}
	start, _ := strconv.ParseUint(fields[19], 10, 64) // ProcessStart's field, from the same read
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	cmd, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || len(cmd) == 0 {
		return Process{}, false
	}
	ns, _ := os.Readlink(filepath.Join(dir, "ns", "net"))
	return Process{Start: start, Comm: comm, Netns: ns,
		Cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))}, true
}

func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 {
			out = append(out, fields[4])
		}
	}
	return out, sc.Err()
}

// debugfsTracing is where the kernel automounts tracefs inside debugfs.
const debugfsTracing = "/sys/kernel/debug/tracing"

// Diff names everything in after that was not in before (and every sysctl that changed), one finding per line.
// Processes count when they are new and either run a project program or sit in another network namespace than
// the snapshot's; exclude lists pids never to report (the checking process and its ancestors).
func Diff(before, after *Snapshot, exclude map[int]bool) []string {
	var out []string
	add := func(kind string, items []string) {
		for _, it := range items {
			out = append(out, kind+" "+it)
		}
	}
	add("network namespace", newItems(before.Namespaces, after.Namespaces))
	add("bpffs path", topmost(newItems(before.BPFFS, after.BPFFS)))
	for id, desc := range after.Programs {
		if _, ok := before.Programs[id]; !ok {
			out = append(out, fmt.Sprintf("BPF program %d (%s)", id, desc))
		}
	}
	for id, desc := range after.Links {
		if _, ok := before.Links[id]; !ok {
			out = append(out, fmt.Sprintf("BPF link %d (%s)", id, desc))
		}
	}
	hostNetns := after.HostNetns
	for pid, p := range after.Processes {
		if exclude[pid] {
			continue
		}
		if old, ok := before.Processes[pid]; ok && old.Start == p.Start {
			continue
		}
		if (hostNetns != "" && p.Netns != hostNetns) || isProjectProgram(p.Comm) {
			out = append(out, fmt.Sprintf("process %d %s (%s, %s)", pid, p.Comm, p.Cmdline, p.Netns))
		}
	}
	for _, m := range newItems(before.Mounts, after.Mounts) {
		switch m {
		case namedns.Dir: // made a shared mount point on purpose, as iproute2 does, and kept
		case debugfsTracing: // the kernel automounts tracefs there when a tool (bpftrace) first looks
		default:
			out = append(out, "mount "+m)
		}
	}
	add("temp entry", newItems(before.Temp, after.Temp))
	add("host interface", newItems(before.HostLinks, after.HostLinks))
	add("FRR directory", newItems(before.FRRDirs, after.FRRDirs))
	add("node state path", newItems(before.StatePaths, after.StatePaths))
	for k, v := range before.Sysctls {
		if now, ok := after.Sysctls[k]; ok && now != v {
			out = append(out, fmt.Sprintf("sysctl %s changed: %s -> %s", k, v, now))
		}
	}
	sort.Strings(out)
	return out
}

// Ancestors are pid and the processes above it, up to pid 1 (excluded from Diff: the checker and its callers).
func Ancestors(pid int) map[int]bool {
	out := map[int]bool{}
	for pid > 1 && !out[pid] {
		out[pid] = true
		_, fields, ok := procStat(pid)
		if !ok || len(fields) < 2 {
			break
		}
		pid, _ = strconv.Atoi(fields[1])
	}
	return out
}

// procStat reads /proc/<pid>/stat: comm, and the fields after it (state, ppid, ...). comm is in parentheses and
// may hold spaces, so the fields are those after the last ')'.
func procStat(pid int) (comm string, fields []string, ok bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", nil, false
	}
	open, closing := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
	if open < 0 || closing < open {
		return "", nil, false
	}
	return string(stat)[open+1 : closing], strings.Fields(string(stat)[closing+1:]), true
}

// ProcessStart is when a process started, in clock ticks after boot (field 22 of /proc/<pid>/stat): with the pid,
// it names one process (a reused pid has another start). The error wraps fs.ErrNotExist when there is no such pid.
func ProcessStart(pid int) (uint64, error) {
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
		return 0, err
	}
	_, fields, ok := procStat(pid)
	if !ok || len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unreadable", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

func isProjectProgram(comm string) bool {
	if strings.HasSuffix(comm, ".test") { // a go test binary
		return true
	}
	// comm is cut to 15 bytes (kube-controller-manager -> kube-controller), hence the prefix match.
	return slices.ContainsFunc(ProjectPrograms, func(p string) bool { return strings.HasPrefix(comm, p) })
}

// newItems is after minus before, counting repeats (a second mount on the same point is new).
func newItems(before, after []string) []string {
	seen := map[string]int{}
	for _, b := range before {
		seen[b]++
	}
	var out []string
	for _, a := range after {
		if seen[a] > 0 {
			seen[a]--
			continue
		}
		out = append(out, a)
	}
	return out
}

// topmost drops paths below another listed path.
func topmost(paths []string) []string {
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		if len(out) > 0 && strings.HasPrefix(p, out[len(out)-1]+"/") {
			continue
		}
		out = append(out, p)
	}
	return out
}
