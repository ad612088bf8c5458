package kubenodes

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/hostsnap"
)

// hostShared is what every cluster on the host shares, in this process and in others (go test runs several
// packages at once): containerd 1.6's shim socket directory, a path compiled into containerd and its shims
// whatever a node's own state directory is (runc's state goes to each node's directory: the runc runtime's Root
// option), and the host-wide sysctls every kubelet sets.
var hostShared = hostShare{
	State:      "/run/kubenodes",
	RuntimeDir: "/run/containerd",
	Lock:       "/run",
	SysctlDir:  "/proc/sys",
	Sysctls: []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
		"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"},
}

// hostShare hands the host's shared state to clusters by lease. The first cluster in records the host as it was
// (the sysctls, whether the runtime directory existed); while any cluster holds a lease nothing shared is
// restored or removed; the last one out restores the sysctls and removes what kubenodes made. A lease whose
// process is gone (a test binary killed at its timeout) no longer counts, and its record is kept for the next
// last one out. Each cluster removes the sockets of its own shims itself.
type hostShare struct {
	// State holds the leases (a file each) and the record; it exists while a cluster runs.
	State string
	// RuntimeDir is where the shims put their sockets (<dir>/s).
	RuntimeDir string
	// Lock is an existing directory whose flock serialises every process's leases (it outlives State).
	Lock string
	// SysctlDir is /proc/sys; Sysctls the settings below it that kubelets change.
	SysctlDir string
	Sysctls   []string
}

// hostRecord is the host as the first cluster in found it.
type hostRecord struct {
	// MadeRuntimeDir: there was no runtime directory (kubenodes made it, the last one out removes it).
	MadeRuntimeDir bool              `json:"madeRuntimeDir"`
	Sysctls        map[string]string `json:"sysctls"`
	// MadeDirs are the directories clusters made on the host (their nodes' mount points), parents first.
	MadeDirs []string `json:"madeDirs,omitempty"`
}

const recordFile = "host-before.json"

// leasePrefix starts the name of a lease file; the rest names its holder (leaseName).
const leasePrefix = "lease."

// hostLease is one cluster's hold on the shared state.
type hostLease struct {
	share hostShare
	file  string
}

// acquire takes a lease; the first one in records the host and makes the runtime directory.
func (h hostShare) acquire() (*hostLease, error) {
	unlock, err := h.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := os.MkdirAll(h.State, 0o700); err != nil {
		return nil, fmt.Errorf("kubenodes host state: %w", err)
	}
	live, err := h.pruneLeases()
	if err != nil {
		return nil, err
	}
	recordPath := filepath.Join(h.State, recordFile)
	if _, err := os.Stat(recordPath); live == 0 && errors.Is(err, fs.ErrNotExist) {
		// The first one in (a record left by a crashed run is kept: it has the host as it was before that run).
		rec := hostRecord{Sysctls: map[string]string{}}
		if _, err := os.Stat(h.RuntimeDir); errors.Is(err, fs.ErrNotExist) {
			rec.MadeRuntimeDir = true
		}
		for _, k := range h.Sysctls {
			v, err := os.ReadFile(filepath.Join(h.SysctlDir, k))
			if err != nil {
				return nil, fmt.Errorf("read sysctl %s: %w", k, err)
			}
			rec.Sysctls[k] = strings.TrimSpace(string(v))
		}
		if err := h.writeRecord(rec); err != nil {
			return nil, err
		}
	}
	name, err := leaseName(os.Getpid())
	if err != nil {
		return nil, err
	}
	l := &hostLease{share: h, file: filepath.Join(h.State, leasePrefix+name)}
	if err := os.WriteFile(l.file, nil, 0o600); err != nil {
		return nil, fmt.Errorf("kubenodes lease: %w", err)
	}
	return l, nil
}

// release removes the sockets of the holder's own shims (paths below the runtime directory's s), then the
// lease; the last one out restores the host. Whatever cannot be restored or is still used is named in the error.
func (l *hostLease) release(ownSockets []string) error {
	h := l.share
	sockets := filepath.Join(h.RuntimeDir, "s")
	var errs []error
	for _, s := range ownSockets {
		if !isBelow(s, sockets) {
			errs = append(errs, fmt.Errorf("shim socket %s: not in %s", s, sockets))
			continue
		}
		if err := os.Remove(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("shim socket: %w", err))
		}
	}
	unlock, err := h.lock()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	defer unlock()
	if err := os.Remove(l.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("kubenodes lease: %w", err))
	}
	live, err := h.pruneLeases()
	if err != nil || live > 0 {
		return errors.Join(append(errs, err)...)
	}
	rec, err := h.readRecord()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for k, v := range rec.Sysctls {
		p := filepath.Join(h.SysctlDir, k)
		if cur, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(cur)) == v {
			continue
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, v, err))
		}
	}
	if rec.MadeRuntimeDir {
		if err := h.removeRuntimeDir(); err != nil {
			// The record stays: the next last one out tries again (the leftover check names it meanwhile).
			return errors.Join(append(errs, err)...)
		}
		rec.MadeRuntimeDir = false
	}
	for i := len(rec.MadeDirs) - 1; i >= 0; i-- {
		if err := os.Remove(rec.MadeDirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// What is still in use stays recorded, for the next last one out.
			rec.MadeDirs = rec.MadeDirs[:i+1]
			return errors.Join(append(errs, fmt.Errorf("made on the host: %w", err), h.writeRecord(rec))...)
		}
	}
	// Only kubenodes writes there, and no cluster holds a lease: the record goes, with what a crash left.
	if err := os.RemoveAll(h.State); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// makeDirs makes the directories (and their parents) the host lacks, recording them for the last one out.
func (l *hostLease) makeDirs(dirs ...string) error {
	h := l.share
	unlock, err := h.lock()
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := h.readRecord()
	if err != nil {
		return err
	}
	made := len(rec.MadeDirs)
	for _, dir := range dirs {
		var missing []string
		for d := filepath.Clean(dir); d != "/" && d != "."; d = filepath.Dir(d) {
			if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
				missing = append(missing, d)
			}
		}
		for i := len(missing) - 1; i >= 0; i-- {
			if err := os.Mkdir(missing[i], 0o755); err != nil {
				return errors.Join(err, h.writeRecord(rec))
			}
			rec.MadeDirs = append(rec.MadeDirs, missing[i])
		}
	}
	if len(rec.MadeDirs) == made {
		return nil
	}
	return h.writeRecord(rec)
}

func (h hostShare) readRecord() (hostRecord, error) {
	var rec hostRecord
	p := filepath.Join(h.State, recordFile)
	data, err := os.ReadFile(p)
	if err != nil {
		return rec, fmt.Errorf("kubenodes host record: %w", err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("kubenodes host record %s: %w", p, err)
	}
	return rec, nil
}

// writeRecord replaces the record (a rename: a reader never sees half of it).
func (h hostShare) writeRecord(rec hostRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	p := filepath.Join(h.State, recordFile)
	if err := os.WriteFile(p+".new", data, 0o600); err != nil {
		return fmt.Errorf("kubenodes host record: %w", err)
	}
	return os.Rename(p+".new", p)
}

// removeRuntimeDir removes the runtime directory kubenodes made, with the sockets of shims that no longer run
// (no cluster does: they are kubenodes' shims, killed without removing them).
func (h hostShare) removeRuntimeDir() error {
	if err := removeDeadSockets(filepath.Join(h.RuntimeDir, "s")); err != nil {
		return err
	}
	// runc's state used to be here (before each node got its own Root): empty leftovers of that go too.
	for _, sub := range []string{"s", "runc/k8s.io", "runc", "."} {
		p := filepath.Join(h.RuntimeDir, sub)
		err := os.Remove(p)
		if errors.Is(err, syscall.ENOTEMPTY) {
			left, _ := os.ReadDir(p)
			names := make([]string, 0, len(left))
			for _, e := range left {
				names = append(names, e.Name())
			}
			return fmt.Errorf("%s still holds %s after every cluster stopped", p, strings.Join(names, ", "))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// leases lists the holders' lease files: those whose process still runs, and those whose process is gone (a
// test binary killed at its timeout). Other files (the record) are not leases.
func (h hostShare) leases() (live, gone []string, err error) {
	entries, err := os.ReadDir(h.State)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		holder, ok := strings.CutPrefix(e.Name(), leasePrefix)
		switch {
		case !ok:
		case leaseHolderAlive(holder):
			live = append(live, holder)
		default:
			gone = append(gone, e.Name())
		}
	}
	return live, gone, nil
}

// pruneLeases removes the leases of processes that are gone and counts the others.
func (h hostShare) pruneLeases() (int, error) {
	live, gone, err := h.leases()
	if err != nil {
		return 0, err
	}
	for _, name := range gone {
		if err := os.Remove(filepath.Join(h.State, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("stale kubenodes lease: %w", err)
		}
	}
	return len(live), nil
}

// otherHolders counts the leases held by running processes other than this one.
func (h hostShare) otherHolders() (int, error) {
	live, _, err := h.leases()
	own := strconv.Itoa(os.Getpid()) + "-"
	return len(slices.DeleteFunc(live, func(l string) bool { return strings.HasPrefix(l, own) })), err
}

// lock takes an exclusive flock on h.Lock and returns its release.
func (h hostShare) lock() (func(), error) {
	f, err := os.Open(h.Lock)
	if err != nil {
		return nil, fmt.Errorf("kubenodes lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("kubenodes lock %s: %w", h.Lock, err)
	}
	return func() { f.Close() }, nil // closing the only descriptor releases the flock
}

// leaseName names a lease after its holder: pid, the process's start time (a reused pid has another) and a
// random part (one process may run several clusters).
func leaseName(pid int) (string, error) {
	start, err := hostsnap.ProcessStart(pid)
	if err != nil {
		return "", err
	}
	r := make([]byte, 4)
	if _, err := rand.Read(r); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d-%d-%x", pid, start, r), nil
}

// leaseHolderAlive tells whether the process that took a lease still runs (a holder name that does not parse
// counts as alive: it is not ours to judge).
func leaseHolderAlive(name string) bool {
	parts := strings.Split(name, "-")
	if len(parts) != 3 {
		return true
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	got, err := hostsnap.ProcessStart(pid)
	return err == nil && got == start
}

// removeDeadSockets removes the unix sockets in dir that nothing listens on.
func removeDeadSockets(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		c, err := net.DialTimeout("unix", p, time.Second)
		if err == nil {
			c.Close()
			continue // a shim still serves it
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// shimSocket is the socket containerd 1.6 gives the shim of task id in namespace ns of the containerd at
// address (runtime/v2/shim.SocketAddress: the sha256 of their path join, below <runtime dir>/s).
func (h hostShare) shimSocket(address, ns, id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(address, ns, id)))
	return filepath.Join(h.RuntimeDir, "s", hex.EncodeToString(sum[:]))
}

// shimSockets are the sockets of the running shims of the containerd at address, from their command lines
// (-namespace NS -id ID -address ADDRESS).
func (h hostShare) shimSockets(address string) []string {
	var out []string
	for _, p := range processesWithArgs("-address " + address) {
		args := p.args
		flags := map[string]string{}
		for i := 0; i+1 < len(args); i++ {
			if strings.HasPrefix(args[i], "-") {
				flags[strings.TrimLeft(args[i], "-")] = args[i+1]
			}
		}
		if flags["address"] == address && flags["namespace"] != "" && flags["id"] != "" {
			out = append(out, h.shimSocket(address, flags["namespace"], flags["id"]))
		}
	}
	return out
}

// isBelow tells whether p is inside dir.
func isBelow(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}
