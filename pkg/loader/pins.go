package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// sameProgram reports whether a and b would behave identically: same type
// and instruction tag, the same maps (by ID), except that frozen one-entry
// arrays (.rodata) may be distinct maps with equal contents, because every
// load creates its own.
func sameProgram(a, b *ebpf.Program) (bool, error) {
	ai, err := a.Info()
	if err != nil {
		return false, fmt.Errorf("program info: %w", err)
	}
	bi, err := b.Info()
	if err != nil {
		return false, fmt.Errorf("program info: %w", err)
	}
	aid, _ := ai.ID()
	bid, _ := bi.ID()
	if aid != 0 && aid == bid {
		return true, nil
	}
	if ai.Type != bi.Type || ai.Tag != bi.Tag || ai.Tag == "" {
		return false, nil
	}
	amaps, _ := ai.MapIDs()
	bmaps, _ := bi.MapIDs()
	if len(amaps) != len(bmaps) {
		return false, nil
	}
	aByName, err := mapsByName(amaps)
	if err != nil {
		return false, err
	}
	defer closeMaps(aByName)
	bByName, err := mapsByName(bmaps)
	if err != nil {
		return false, err
	}
	defer closeMaps(bByName)
	if len(aByName) != len(amaps) || len(bByName) != len(bmaps) {
		return false, nil // duplicate names: cannot pair them up
	}
	for name, am := range aByName {
		bm, ok := bByName[name]
		if !ok {
			return false, nil
		}
		same, err := sameMap(am, bm)
		if err != nil || !same {
			return false, err
		}
	}
	return true, nil
}

type namedMap struct {
	m    *ebpf.Map
	info *ebpf.MapInfo
}

func mapsByName(ids []ebpf.MapID) (map[string]namedMap, error) {
	out := map[string]namedMap{}
	for _, id := range ids {
		m, err := ebpf.NewMapFromID(id)
		if err != nil {
			closeMaps(out)
			return nil, fmt.Errorf("open map %d: %w", id, err)
		}
		info, err := m.Info()
		if err != nil {
			m.Close()
			closeMaps(out)
			return nil, fmt.Errorf("map %d info: %w", id, err)
		}
		if prev, dup := out[info.Name]; dup {
			prev.m.Close()
		}
		out[info.Name] = namedMap{m, info}
	}
	return out, nil
}

func closeMaps(ms map[string]namedMap) {
	for _, nm := range ms {
		nm.m.Close()
	}
}

func sameMap(a, b namedMap) (bool, error) {
	aid, _ := a.info.ID()
	bid, _ := b.info.ID()
	if aid == bid {
		return true, nil
	}
	frozenConst := func(i *ebpf.MapInfo) bool {
		return i.Frozen() && i.Type == ebpf.Array && i.MaxEntries == 1
	}
	if !frozenConst(a.info) || !frozenConst(b.info) || a.info.ValueSize != b.info.ValueSize {
		return false, nil
	}
	av := make([]byte, a.info.ValueSize)
	bv := make([]byte, b.info.ValueSize)
	if err := a.m.Lookup(uint32(0), av); err != nil {
		return false, fmt.Errorf("read %s: %w", a.info.Name, err)
	}
	if err := b.m.Lookup(uint32(0), bv); err != nil {
		return false, fmt.Errorf("read %s: %w", b.info.Name, err)
	}
	return bytes.Equal(av, bv), nil
}

// repinProgram pins p at path, atomically replacing what is there, and
// returns a handle that knows its pin path (p is closed).
func repinProgram(p *ebpf.Program, path string) (*ebpf.Program, error) {
	// Program names are C identifiers, so "tmp-" cannot collide (and bpffs
	// refuses dots in names).
	tmp := filepath.Join(filepath.Dir(path), "tmp-"+filepath.Base(path))
	if err := removePin(tmp); err != nil {
		return nil, err
	}
	clone, err := p.Clone()
	if err != nil {
		return nil, err
	}
	defer clone.Close()
	if err := clone.Pin(tmp); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return nil, err
	}
	np, err := ebpf.LoadPinnedProgram(path, nil)
	if err != nil {
		return nil, err
	}
	p.Close()
	return np, nil
}

// swapPins pins the new collection and the existing links into a staging
// directory laid out like PinDir and exchanges the two directories in one
// renameat2(RENAME_EXCHANGE), so a reader never sees a mix of old and new
// maps. The old pins end up in the staging directory and are removed. The
// collection's handles are reopened from their final pins.
func (l *Loader) swapPins(coll *ebpf.Collection) error {
	staging := l.stagingDir()
	if err := os.RemoveAll(staging); err != nil {
		return fmt.Errorf("clear staging dir: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(staging) }
	stage := func(live string) string {
		rel, _ := filepath.Rel(l.opts.PinDir, live)
		return filepath.Join(staging, rel)
	}
	for _, dir := range l.pinDirs() {
		if err := os.Mkdir(stage(dir), 0o700); err != nil {
			cleanup()
			return fmt.Errorf("create staging dir: %w", err)
		}
	}
	for _, ms := range l.spec.Maps {
		if !pinnable(ms) {
			continue
		}
		m := coll.Maps[mapKey(l.spec, ms.Name)]
		if err := pinClone(m, stage(l.mapPin(ms.Name))); err != nil {
			cleanup()
			return fmt.Errorf("stage map %s: %w", ms.Name, err)
		}
	}
	for name, p := range coll.Programs {
		if err := pinClone(p, stage(l.progPin(name))); err != nil {
			cleanup()
			return fmt.Errorf("stage program %s: %w", name, err)
		}
	}
	for ifname, a := range l.atts {
		if a.lnk == nil {
			continue
		}
		if err := pinLinkAgain(a.lnk, stage(a.Pin)); err != nil {
			cleanup()
			return fmt.Errorf("stage link of %s: %w", ifname, err)
		}
	}

	err := unix.Renameat2(unix.AT_FDCWD, staging, unix.AT_FDCWD, l.opts.PinDir, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// No RENAME_EXCHANGE here: replace entry by entry. Links are
		// already pinned in PinDir (same objects).
		err = l.renameEntries(staging)
	}
	if err != nil {
		cleanup()
		return fmt.Errorf("swap pin dirs: %w", err)
	}
	cleanup()

	// The swap is done; from here on nothing may fail the migration.
	// Reopening from the pins only makes the handles know their pin path.
	for name, m := range coll.Maps {
		ms := l.spec.Maps[name]
		if ms == nil || !pinnable(ms) {
			continue
		}
		if nm, err := ebpf.LoadPinnedMap(l.mapPin(ms.Name), nil); err == nil {
			coll.Maps[name] = nm
			m.Close()
		} else {
			l.opts.Logger.Warn("reopen pinned map", "map", name, "err", err)
		}
	}
	for name, p := range coll.Programs {
		if np, err := ebpf.LoadPinnedProgram(l.progPin(name), nil); err == nil {
			coll.Programs[name] = np
			p.Close()
		} else {
			l.opts.Logger.Warn("reopen pinned program", "program", name, "err", err)
		}
	}
	return nil
}

func (l *Loader) renameEntries(staging string) error {
	for _, sub := range []string{"", "progs"} {
		entries, err := os.ReadDir(filepath.Join(staging, sub))
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			from := filepath.Join(staging, sub, e.Name())
			to := filepath.Join(l.opts.PinDir, sub, e.Name())
			if err := os.Rename(from, to); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapKey finds the collection key of the map whose spec is named name.
func mapKey(spec *ebpf.CollectionSpec, name string) string {
	for key, ms := range spec.Maps {
		if ms.Name == name {
			return key
		}
	}
	return name
}

type clonePinner[T any] interface {
	Clone() (T, error)
	Pin(string) error
	Close() error
}

// pinClone pins obj at path through a clone, so obj keeps its own pin path.
func pinClone[T clonePinner[T]](obj T, path string) error {
	c, err := obj.Clone()
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Pin(path)
}

// pinLinkAgain adds a second pin of the same link at path (Link.Pin would
// move the existing pin instead).
func pinLinkAgain(l link.Link, path string) error {
	info, err := l.Info()
	if err != nil {
		return err
	}
	dup, err := link.NewFromID(info.ID)
	if err != nil {
		return err
	}
	defer dup.Close()
	return dup.Pin(path)
}
