// Package podrecords keeps what the node agent must remember about each pod it configured and cannot read back
// from the kernel: the primary interface's and the namespace's original values before the agent tuned them (so
// removing the tuning restores them), and the interfaces it made (their host bridge and MAC, so the neighbour and
// FDB entries they left on the host can be found after the pod's network namespace is gone). One JSON file per pod
// UID in one directory, replaced atomically.
package podrecords

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultDir is where the agent keeps the records.
const DefaultDir = "/var/lib/network-operator/pods"

// ErrBadUID says a pod UID cannot name a record file.
var ErrBadUID = errors.New("not a pod UID")

// Record is what the agent remembers about one pod.
type Record struct {
	UID       string `json:"uid"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Primary holds the primary interface's values from before the agent tuned it (nil: not tuned).
	Primary *Primary `json:"primary,omitempty"`
	// Sysctls holds the original value of every sysctl the agent changed, by dotted name.
	Sysctls map[string]string `json:"sysctls,omitempty"`
	// Interfaces are the interfaces the agent made in the pod, by name.
	Interfaces []Interface `json:"interfaces,omitempty"`
}

// Primary is the primary interface's original tuning.
type Primary struct {
	Name       string `json:"name"`
	MTU        *int   `json:"mtu,omitempty"`
	TxQueueLen *int   `json:"txQueueLen,omitempty"`
}

// Interface is one interface the agent made in the pod.
type Interface struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// HostName is the host end of a veth ("" for the other kinds).
	HostName string `json:"hostName,omitempty"`
	// Bridge is the host bridge a veth's host end is a port of, or a macvlan's parent.
	Bridge string `json:"bridge,omitempty"`
	// MAC of the pod's interface.
	MAC string `json:"mac,omitempty"`
}

// Empty reports whether the record holds nothing to remember.
func (r *Record) Empty() bool {
	return r == nil || (r.Primary == nil && len(r.Sysctls) == 0 && len(r.Interfaces) == 0)
}

// Interface returns the recorded interface called name.
func (r *Record) Interface(name string) (Interface, bool) {
	if r == nil {
		return Interface{}, false
	}
	i := slices.IndexFunc(r.Interfaces, func(x Interface) bool { return x.Name == name })
	if i < 0 {
		return Interface{}, false
	}
	return r.Interfaces[i], true
}

// Merge returns what a and b remember together (b's values win where both hold one): what is on disk while an
// apply runs, so a crash in between forgets nothing of the old or the new state.
func Merge(a, b *Record) *Record {
	if a == nil {
		return b.clone()
	}
	if b == nil {
		return a.clone()
	}
	out := a.clone()
	out.Namespace, out.Name = b.Namespace, b.Name
	if b.Primary != nil {
		if out.Primary == nil || out.Primary.Name != b.Primary.Name {
			p := *b.Primary
			out.Primary = &p
		} else {
			if b.Primary.MTU != nil {
				out.Primary.MTU = b.Primary.MTU
			}
			if b.Primary.TxQueueLen != nil {
				out.Primary.TxQueueLen = b.Primary.TxQueueLen
			}
		}
	}
	for k, v := range b.Sysctls {
		if out.Sysctls == nil {
			out.Sysctls = map[string]string{}
		}
		out.Sysctls[k] = v
	}
	for _, in := range b.Interfaces {
		i := slices.IndexFunc(out.Interfaces, func(x Interface) bool { return x.Name == in.Name })
		if i >= 0 {
			out.Interfaces[i] = in
		} else {
			out.Interfaces = append(out.Interfaces, in)
		}
	}
	slices.SortFunc(out.Interfaces, func(x, y Interface) int { return strings.Compare(x.Name, y.Name) })
	return out
}

func (r *Record) clone() *Record {
	if r == nil {
		return nil
	}
	out := *r
	if r.Primary != nil {
		p := *r.Primary
		out.Primary = &p
	}
	if r.Sysctls != nil {
		out.Sysctls = make(map[string]string, len(r.Sysctls))
		for k, v := range r.Sysctls {
			out.Sysctls[k] = v
		}
	}
	out.Interfaces = slices.Clone(r.Interfaces)
	return &out
}

// Store reads and writes the records in one directory.
type Store struct{ dir string }

// New returns a Store for dir (DefaultDir when empty). Nothing is read or created yet.
func New(dir string) *Store {
	if dir == "" {
		dir = DefaultDir
	}
	return &Store{dir: dir}
}

// Dir is the records' directory.
func (s *Store) Dir() string { return s.dir }

const suffix = ".json"

// path returns the record file of a UID; UIDs are refused unless they are plain file names.
func (s *Store) path(uid string) (string, error) {
	if uid == "" || len(uid) > 128 || strings.ContainsAny(uid, "/\\\x00") || uid == "." || uid == ".." ||
		strings.HasPrefix(uid, ".") {
		return "", fmt.Errorf("record of %q: %w", uid, ErrBadUID)
	}
	return filepath.Join(s.dir, uid+suffix), nil
}

// Load reads the record of a pod; a missing file is a nil record.
func (s *Store) Load(uid string) (*Record, error) {
	p, err := s.path(uid)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pod record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("pod record %s: %w", p, err)
	}
	if r.UID != uid {
		return nil, fmt.Errorf("pod record %s: holds uid %q", p, r.UID)
	}
	return &r, nil
}

// Save replaces the record of r.UID atomically; an empty record removes the file.
func (s *Store) Save(r *Record) error {
	if r == nil {
		return errors.New("save pod record: nil record")
	}
	p, err := s.path(r.UID)
	if err != nil {
		return err
	}
	if r.Empty() {
		return s.Remove(r.UID)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode pod record: %w", err)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("pod record dir: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".record-*.tmp")
	if err != nil {
		return fmt.Errorf("pod record: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("replace %s: %w", p, err)
	}
	return nil
}

// Remove deletes the record of a pod (a missing one is fine).
func (s *Store) Remove(uid string) error {
	p, err := s.path(uid)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove pod record: %w", err)
	}
	return nil
}

// UIDs lists the pods that have a record, sorted.
func (s *Store) UIDs() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list pod records: %w", err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, suffix) && !strings.HasPrefix(n, ".") {
			out = append(out, strings.TrimSuffix(n, suffix))
		}
	}
	slices.Sort(out)
	return out, nil
}
