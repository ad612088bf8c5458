// Package standalone runs the node agent without Kubernetes (for provisioning): it applies the NodeNetworkConfig
// (or das-schiff) file given with --config-file and keeps it applied - the file is re-read when it changes
// (fsnotify on its directory, so editors that replace the file are seen too) and drift is repaired every
// resync period. The status the Kubernetes agent would write is kept in a status file.
package standalone

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/network-operator/network-operator/agent/frrmodel"
	"github.com/network-operator/network-operator/agent/nodestatus"
	"github.com/network-operator/network-operator/agent/reconcile"
	"github.com/network-operator/network-operator/agent/specfile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Options configure Run.
type Options struct {
	File   string
	Engine *reconcile.Engine
	// Resync repairs drift this often (default 30 s).
	Resync time.Duration
	// Once applies the file one time and returns (ErrNotApplied when the node does not run it).
	Once bool
	// StatusFile, when set, receives the node's status as a NodeNetworkConfig document after every reconcile.
	StatusFile string
	// Passwords resolves BGP password Secret references (nil: specs with passwordSecretRef fail).
	Passwords frrmodel.PasswordFunc
	// Env is what the node says that the file cannot (the VTEP address and where to discover it).
	Env specfile.Env
	// Rewrite, when set, receives the file's FRR replacements (das-schiff's replacements) at every read.
	Rewrite *Rewrite
	// Out receives one line per reconcile (and the file's conversion notes).
	Out    io.Writer
	Logger *slog.Logger
}

// ErrNotApplied is returned by a --once run whose file could not be applied (the last good state runs).
var ErrNotApplied = errors.New("configuration not applied")

// Run applies the file and, unless Once, keeps it applied until ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Resync <= 0 {
		o.Resync = 30 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &runner{o: o}
	r.resumeStatus()
	if o.Once {
		doc, err := r.read()
		if err != nil {
			return err
		}
		out := r.reconcile(ctx, doc)
		if !out.Applied() {
			return fmt.Errorf("%w: %v", ErrNotApplied, cmpErr(out.Err, out.HealthErr))
		}
		return nil
	}

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", o.File, err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(o.File)); err != nil {
		return fmt.Errorf("watch %s: %w", filepath.Dir(o.File), err)
	}

	var doc *specfile.Document
	load := func() {
		d, err := r.read()
		if err != nil {
			fmt.Fprintf(o.Out, "config file: %v (keeping the current configuration)\n", err)
			return
		}
		doc = d
	}
	load()
	if doc != nil {
		r.reconcile(ctx, doc)
	}
	tick := time.NewTicker(o.Resync)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			if filepath.Clean(ev.Name) != filepath.Clean(o.File) || ev.Op == fsnotify.Chmod {
				continue
			}
			prev := r.hash
			load()
			if doc != nil && r.hash != prev {
				fmt.Fprintf(o.Out, "config file changed\n")
				r.reconcile(ctx, doc)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			o.Logger.Error("file watcher", "err", err)
		case <-tick.C:
			if doc == nil {
				load()
			}
			if doc != nil {
				r.reconcile(ctx, doc)
			}
		}
	}
}

type runner struct {
	o      Options
	hash   [32]byte
	status v1.NodeNetworkConfigStatus
}

// resumeStatus continues from the status file a previous run left (as the Kubernetes agent continues from the
// object's status): conditions keep their transition times across restarts.
func (r *runner) resumeStatus() {
	if r.o.StatusFile == "" {
		return
	}
	prev, err := ReadStatus(r.o.StatusFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.o.Logger.Warn("previous status file not used", "err", err)
	default:
		r.status = prev.Status
	}
}

func (r *runner) read() (*specfile.Document, error) {
	data, err := os.ReadFile(r.o.File)
	if err != nil {
		return nil, fmt.Errorf("read node config file: %w", err)
	}
	doc, err := specfile.Parse(data, r.o.Env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.o.File, err)
	}
	if r.o.Rewrite != nil {
		r.o.Rewrite.Set(doc.Replacements)
	}
	h := sha256.Sum256(data)
	if h != r.hash {
		for _, n := range doc.Notes {
			fmt.Fprintf(r.o.Out, "note: %s\n", n)
		}
	}
	r.hash = h
	return doc, nil
}

func (r *runner) reconcile(ctx context.Context, doc *specfile.Document) *reconcile.Outcome {
	out := r.o.Engine.Reconcile(ctx, &doc.Spec, r.o.Passwords)
	line := fmt.Sprintf("reconcile %s: revision %q, map version %.12s, %s", out.Result, doc.Spec.Revision, out.MapVersion,
		out.Duration.Round(time.Millisecond))
	if out.Err != nil {
		line += fmt.Sprintf(": %v", out.Err)
	} else if out.HealthErr != nil {
		line += fmt.Sprintf(": unhealthy: %v", out.HealthErr)
	}
	fmt.Fprintln(r.o.Out, line)
	r.status = nodestatus.Build(out, r.status, 0, metav1.Now())
	if r.o.StatusFile != "" {
		if err := writeStatus(r.o.StatusFile, doc.Name, &doc.Spec, r.status); err != nil {
			r.o.Logger.Error("write status file", "err", err)
		}
	}
	return out
}

// writeStatus writes the node's status as a NodeNetworkConfig document, atomically.
func writeStatus(path, name string, spec *v1.NodeNetworkConfigSpec, st v1.NodeNetworkConfigStatus) error {
	nnc := v1.NodeNetworkConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "NodeNetworkConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       *spec,
		Status:     st,
	}
	data, err := yaml.Marshal(nnc)
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write status file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write status file: %w", err)
	}
	return nil
}

// ReadStatus reads a status file written by Run.
func ReadStatus(path string) (*v1.NodeNetworkConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read status file: %w", err)
	}
	var nnc v1.NodeNetworkConfig
	if err := yaml.Unmarshal(data, &nnc); err != nil {
		return nil, fmt.Errorf("status file %s: %w", path, err)
	}
	return &nnc, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
