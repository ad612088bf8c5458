// Package lab builds throw-away network topologies (namespaces, veth pairs, addresses, routes in numbered tables,
// permanent neighbours, sysctls, offloads) for integration tests, and gives the helpers those tests need: run a
// command or Go code inside a namespace, ping, a sequence-numbered UDP flow with a TCP health check, iperf3, and
// `ip route get`. Every object gets a per-run unique name and is removed in t.Cleanup, also when the test fails.
package lab

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// NamePrefix starts every namespace name the lab creates, so leftovers of a killed run can be recognised.
const NamePrefix = "nl"

// maxLogicalName bounds the logical namespace name so that NamePrefix+id+"-"+name stays within 15 bytes.
const maxLogicalName = 6

// maxIfName is the kernel's IFNAMSIZ-1.
const maxIfName = 15

// ErrNotRoot is returned by NewLab when the process lacks the privileges to create namespaces.
var ErrNotRoot = errors.New("lab needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN)")

// ErrNoBPFFS is returned by PinDir when /sys/fs/bpf is not a bpffs mount (mount -t bpf bpf /sys/fs/bpf).
var ErrNoBPFFS = errors.New("/sys/fs/bpf is not a bpffs mount")

const bpffsRoot = "/sys/fs/bpf"

// TB is the part of testing.TB a Lab uses; *testing.T and *testing.B satisfy it. Not importing testing keeps it
// out of the demo, which opens its Lab with Open.
type TB interface {
	testreq.TB
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Lab owns every object created for one test: namespaces, processes and bpffs directories.
type Lab struct {
	tb   TB // nil when made by Open
	logf func(format string, args ...any)
	id   string // random hex, unique per run

	mu         sync.Mutex
	namespaces map[string]*Netns // by logical name
	order      []string          // creation order, for deterministic teardown
	procs      []*Process
	pinDirs    []string
	pinSeq     int
	closers    []func()
	macSeq     uint16
}

// onClose registers fn to run at cleanup before processes are killed and namespaces deleted.
func (l *Lab) onClose(fn func()) {
	l.mu.Lock()
	l.closers = append(l.closers, fn)
	l.mu.Unlock()
}

// New returns a Lab whose objects are removed in tb.Cleanup. Without root the test fails or skips, as
// test/harness/testreq decides.
func New(tb TB) *Lab {
	tb.Helper()
	testreq.Root(tb)
	l, err := NewLab(tb)
	if err != nil {
		tb.Fatalf("new lab: %v", err)
	}
	return l
}

// NewLab is New without the skip: it returns ErrNotRoot instead.
func NewLab(tb TB) (*Lab, error) {
	l, err := Open(WithLogf(tb.Logf))
	if err != nil {
		return nil, err
	}
	l.tb = tb
	tb.Cleanup(func() {
		for _, err := range l.Close() {
			tb.Errorf("lab cleanup: %v", err)
		}
	})
	return l, nil
}

// Option configures Open.
type Option func(*Lab)

// WithLogf sends the lab's log lines to fn (default: discarded).
func WithLogf(fn func(format string, args ...any)) Option { return func(l *Lab) { l.logf = fn } }

// Open makes a Lab outside `go test` (benchmark programs, demos). The caller must call Close; the Must* helpers
// and NS need a Lab from New.
func Open(opts ...Option) (*Lab, error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	id, err := randomID(3)
	if err != nil {
		return nil, err
	}
	l := &Lab{id: id, namespaces: map[string]*Netns{}, logf: func(string, ...any) {}}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// ID is the random part shared by every name of this lab.
func (l *Lab) ID() string { return l.id }

func randomID(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// NS returns the namespace created under the logical name, failing the test when there is none.
func (l *Lab) NS(name string) *Netns {
	ns, ok := l.Namespace(name)
	if !ok {
		l.fatalf("lab: no namespace %q", name)
	}
	return ns
}

// Namespace returns the namespace created under the logical name.
func (l *Lab) Namespace(name string) (*Netns, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ns, ok := l.namespaces[name]
	return ns, ok
}

// Namespaces lists the namespaces in creation order.
func (l *Lab) Namespaces() []*Netns {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*Netns, 0, len(l.order))
	for _, n := range l.order {
		out = append(out, l.namespaces[n])
	}
	return out
}

// AddNamespace creates one namespace named NamePrefix+id+"-"+name with lo up.
func (l *Lab) AddNamespace(name string) (*Netns, error) {
	if name == "" || len(name) > maxLogicalName || strings.ContainsAny(name, "/- \t") {
		return nil, fmt.Errorf("namespace name %q: want 1-%d bytes without '/', '-' or spaces", name, maxLogicalName)
	}
	l.mu.Lock()
	if _, dup := l.namespaces[name]; dup {
		l.mu.Unlock()
		return nil, fmt.Errorf("namespace %q: already exists in this lab", name)
	}
	l.mu.Unlock()
	full := NamePrefix + l.id + "-" + name
	ns, err := createNetns(full)
	if err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", full, err)
	}
	ns.Logical = name
	ns.lab = l
	l.mu.Lock()
	l.namespaces[name] = ns
	l.order = append(l.order, name)
	l.mu.Unlock()
	if err := ns.setUp("lo"); err != nil {
		return nil, err
	}
	return ns, nil
}

// PinDir creates a unique, empty directory on bpffs, /sys/fs/bpf/<prefix><id>/pins-N. Cleanup removes the whole
// /sys/fs/bpf/<prefix><id> tree, so siblings a user of the dir creates (e.g. "<dir>.staging") go too.
func (l *Lab) PinDir() (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(bpffsRoot, &st); err != nil || st.Type != unix.BPF_FS_MAGIC {
		return "", ErrNoBPFFS
	}
	l.mu.Lock()
	root := filepath.Join(bpffsRoot, NamePrefix+l.id)
	dir := filepath.Join(root, fmt.Sprintf("pins-%d", l.pinSeq))
	l.pinSeq++
	if len(l.pinDirs) == 0 {
		l.pinDirs = append(l.pinDirs, root)
	}
	l.mu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create pin dir: %w", err)
	}
	return dir, nil
}

// MustPinDir is PinDir failing the test on error; without bpffs the test fails or skips, as test/harness/testreq
// decides.
func (l *Lab) MustPinDir() string {
	d, err := l.PinDir()
	if errors.Is(err, ErrNoBPFFS) && l.tb != nil {
		testreq.Need(l.tb, "bpffs at /sys/fs/bpf", err)
	}
	if err != nil {
		l.fatalf("%v", err)
	}
	return d
}

// nextMAC hands out locally administered, unicast MACs that are unique within the lab and easy to read:
// 02:6c:<id byte>:00:<seq hi>:<seq lo>.
func (l *Lab) nextMAC() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.macSeq++
	idb, _ := hex.DecodeString(l.id[:2])
	return []byte{0x02, 0x6c, idb[0], 0x00, byte(l.macSeq >> 8), byte(l.macSeq)}
}

// Close kills processes, deletes namespaces and pin dirs. It is registered with Cleanup; calling it twice is safe.
func (l *Lab) Close() []error {
	l.mu.Lock()
	procs := l.procs
	l.procs = nil
	order := l.order
	l.order = nil
	nss := l.namespaces
	l.namespaces = map[string]*Netns{}
	pins := l.pinDirs
	l.pinDirs = nil
	closers := l.closers
	l.closers = nil
	l.mu.Unlock()

	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].Kill()
	}
	for i := len(order) - 1; i >= 0; i-- {
		if err := nss[order[i]].destroy(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range pins {
		if err := os.RemoveAll(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove pin dir %s: %w", d, err))
		}
	}
	return errs
}

func (l *Lab) track(p *Process) {
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()
}

// Logf logs through the test (or the WithLogf function).
func (l *Lab) Logf(format string, args ...any) {
	if l.tb != nil {
		l.tb.Helper()
	}
	l.logf(format, args...)
}

// fatalf fails the test; a Lab from Open has no test, so it panics (the Must* helpers are for tests).
func (l *Lab) fatalf(format string, args ...any) {
	if l.tb == nil {
		panic(fmt.Sprintf(format, args...))
	}
	l.tb.Helper()
	l.tb.Fatalf(format, args...)
}
