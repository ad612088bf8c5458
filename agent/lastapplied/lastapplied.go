// Package lastapplied persists what the node agent knows must survive a restart: the last configuration that was
// applied and found healthy (the state a failed apply is rolled back to) and the last configuration that failed
// (so a restarted agent does not apply a known-bad spec again). One file, replaced atomically: indented JSON
// under a comment line, which is YAML too (files of earlier agents are YAML and still load).
package lastapplied

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	k8sjson "sigs.k8s.io/json"
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
	if err := decode(data, &st); err != nil {
		return State{}, fmt.Errorf("state file %s: %w", s.path, err)
	}
	return st, nil
}

// MoveAside renames an unreadable state file to <file>.unreadable-<UTC time> (kept for a post-mortem; the next
// Save writes a fresh one) and returns the new path.
func (s *Store) MoveAside() (string, error) {
	to := fmt.Sprintf("%s.unreadable-%s", s.path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(s.path, to); err != nil {
		return "", fmt.Errorf("move the unreadable state file aside: %w", err)
	}
	return to, nil
}

// decode reads the JSON this package writes, or the YAML earlier agents wrote; both strictly (no unknown or
// duplicate fields).
func decode(data []byte, st *State) error {
	body := data
	for len(body) > 0 && body[0] == '#' { // the header comment
		_, body, _ = bytes.Cut(body, []byte("\n"))
	}
	if body = bytes.TrimSpace(body); len(body) == 0 || body[0] != '{' {
		return yaml.UnmarshalStrict(data, st)
	}
	strict, err := k8sjson.UnmarshalStrict(body, st)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// header starts the file.
const header = "# Written by network-agent: the last good and the last failed node configuration (JSON, which is YAML too).\n"

// Save replaces the file atomically (write to a temporary file, fsync, rename, fsync the directory), so a crash
// leaves either the old or the new state. The state is encoded straight into the file: YAML (sigs.k8s.io/yaml
// converts JSON through generic maps) allocated ~100 MB and held ~35 MB at once for a spec of 1000 VRFs.
func (s *Store) Save(st State) error {
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
	if err := encode(f, st); err != nil {
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

func encode(w io.Writer, st State) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.WriteString(header); err != nil {
		return err
	}
	enc := json.NewEncoder(bw)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	return bw.Flush()
}

// SpecHash identifies a spec's content: sha256 over its json.Marshal encoding (fixed field order). The encoding
// is streamed into the hash instead of copied out (the agent hashes its spec several times per reconcile).
func SpecHash(spec *v1.NodeNetworkConfigSpec) string {
	h := sha256.New()
	w := &withoutNewline{w: h}
	if err := json.NewEncoder(w).Encode(spec); err != nil || !w.held || w.last != '\n' {
		// Plain data types only: encoding cannot fail, and Encode ends the value with a newline.
		panic(fmt.Sprintf("encode spec: %v", err))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// withoutNewline passes on all but the last byte written, which json.Encoder adds and json.Marshal does not.
type withoutNewline struct {
	w    io.Writer
	last byte
	held bool
}

func (t *withoutNewline) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if t.held {
		if _, err := t.w.Write([]byte{t.last}); err != nil {
			return 0, err
		}
	}
	if _, err := t.w.Write(p[:len(p)-1]); err != nil {
		return 0, err
	}
	t.last, t.held = p[len(p)-1], true
	return len(p), nil
}
