// Package laststate persists what the node agent knows must survive a restart: the last configuration that was
// applied and found healthy (the state a failed apply is rolled back to) and the last configuration that failed
// (so a restarted agent does not apply a known-bad spec again). One YAML file, replaced atomically.
package laststate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// DefaultPath is where the agent keeps its state file.
const DefaultPath = "/var/lib/network-operator/last-good.yaml"

// Good is the last configuration applied and found healthy.
type Good struct {
	Revision   string                   `json:"revision"`
	MapVersion string                   `json:"mapVersion"`
	SpecHash   string                   `json:"specHash"`
	AppliedAt  time.Time                `json:"appliedAt"`
	Spec       v1.NodeNetworkConfigSpec `json:"spec"`
}

// Failure is the last configuration that failed to apply (its previous state was restored).
type Failure struct {
	Revision string    `json:"revision"`
	SpecHash string    `json:"specHash"`
	Error    string    `json:"error"`
	At       time.Time `json:"at"`
}

// State is the content of the file.
type State struct {
	Good    *Good    `json:"good,omitempty"`
	Failure *Failure `json:"failure,omitempty"`
}

// Store reads and writes the state file.
type Store struct{ path string }

// New returns a Store for path (DefaultPath when empty). Nothing is read or created yet.
func New(path string) *Store {
	if path == "" {
		path = DefaultPath
	}
	return &Store{path: path}
}

// Path is the file's location.
func (s *Store) Path() string { return s.path }

// Load reads the state; a missing file is an empty state.
func (s *Store) Load() (State, error) {
	var st State
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read state file: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, &st); err != nil {
		return st, fmt.Errorf("state file %s: %w", s.path, err)
	}
	return st, nil
}

// Save replaces the file atomically (write to a temporary file, fsync, rename, fsync the directory), so a crash
// leaves either the old or the new state.
func (s *Store) Save(st State) error {
	data, err := yaml.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	data = append([]byte("# Written by network-agent: the last good and the last failed node configuration.\n"), data...)
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	f, err := os.CreateTemp(dir, ".last-good-*.tmp")
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(data); err != nil {
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
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("replace %s: %w", s.path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// SpecHash identifies a spec's content (sha256 over its JSON encoding, which has a fixed field order).
func SpecHash(spec *v1.NodeNetworkConfigSpec) string {
	data, err := json.Marshal(spec)
	if err != nil {
		// Plain data types only: Marshal cannot fail.
		panic(fmt.Sprintf("encode spec: %v", err))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
