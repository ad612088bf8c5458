package bpf_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// oldReasons is REASON_MAX of the last program whose vrf_stats held exactly one counter per reason (before
// REASON_SLOTS): its pinned vrf_counters has a value of oldReasons counters.
const oldReasons = 29

// TestOldCountersLayoutMigrates: a node upgrading from the program whose counters value had one counter per
// reason finds its pinned vrf_counters incompatible, and the loader migrates: fresh
// maps, rebuilt tables, pins swapped, the old map gone.
func TestOldCountersLayoutMigrates(t *testing.T) {
	testreq.BPFFS(t)
	ctx := context.Background()
	parent, err := os.MkdirTemp("/sys/fs/bpf", "netop-bpf-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(parent); err != nil {
			t.Errorf("remove %s: %v", parent, err)
		}
	})
	pinDir := filepath.Join(parent, "pins")
	if err := os.Mkdir(pinDir, 0o700); err != nil {
		t.Fatal(err)
	}

	spec, err := bpf.RouterSpec()
	if err != nil {
		t.Fatal(err)
	}
	// The old map: same type, key and max_entries, value of oldReasons counters.
	cur := spec.Maps[bpf.RouterMapVrfCounters]
	old, err := ebpf.NewMap(&ebpf.MapSpec{Name: cur.Name, Type: cur.Type, KeySize: cur.KeySize,
		ValueSize: oldReasons * 16, MaxEntries: cur.MaxEntries})
	if err != nil {
		testreq.KernelLacks(t, "per-CPU array maps", err)
	}
	defer old.Close()
	if err := old.Pin(filepath.Join(pinDir, bpf.RouterMapVrfCounters)); err != nil {
		t.Fatal(err)
	}
	if cur.ValueSize == old.ValueSize() {
		t.Fatalf("vrf_counters value is still %d bytes: not the old layout", cur.ValueSize)
	}
	if cur.ValueSize != limits.ReasonSlots*16 {
		t.Fatalf("vrf_counters value %d bytes, want %d counters", cur.ValueSize, limits.ReasonSlots)
	}

	var rebuilt bool
	ldr, err := loader.Load(ctx, loader.Options{Spec: spec, PinDir: pinDir,
		Rebuild: func(ctx context.Context, coll *ebpf.Collection) error {
			rebuilt = true
			return loader.RebuildTables(func(context.Context) (maps.Tables, string, error) {
				return maps.Tables{}, "upgrade", nil
			})(ctx, coll)
		}})
	if errors.Is(err, loader.ErrNotSupported) {
		testreq.KernelLacks(t, "a feature the router needs", err)
	}
	if err != nil {
		t.Fatalf("load over the old counters: %v", err)
	}
	t.Cleanup(func() {
		if err := ldr.Remove(context.Background()); err != nil && !errors.Is(err, loader.ErrClosed) {
			t.Errorf("remove router: %v", err)
		}
	})
	if r := ldr.Report(); !rebuilt || !slices.Equal(r.Migrated, []string{bpf.RouterMapVrfCounters}) {
		t.Fatalf("load report %+v (rebuilt %v): want a migration of %s", r, rebuilt, bpf.RouterMapVrfCounters)
	}
	set, err := maps.OpenPinned(pinDir)
	if err != nil {
		t.Fatalf("open migrated maps: %v", err)
	}
	defer set.Close()
	if got := set.Maps().VrfCounters.ValueSize(); got != cur.ValueSize {
		t.Fatalf("pinned vrf_counters value %d bytes after migration, want %d", got, cur.ValueSize)
	}
	if v, err := set.Version(); err != nil || v.Revision != "upgrade" {
		t.Fatalf("version after migration %+v, %v: want the rebuilt revision", v, err)
	}
	if c, err := set.Counters(); err != nil || len(c) != 0 {
		t.Fatalf("counters after migration %+v, %v: want a fresh, empty map", c, err)
	}
}

// TestAdoptPinsWithoutSBRTable: a node upgrading from the program before sbr_table has every other map pinned. The
// loader adopts them (no migration: the live generation keeps forwarding), creates sbr_table, and the live
// generation, which has no sbr entries, is unchanged for the new tables code: applying it again is a no-op.
func TestAdoptPinsWithoutSBRTable(t *testing.T) {
	testreq.BPFFS(t)
	ctx := context.Background()
	parent, err := os.MkdirTemp("/sys/fs/bpf", "netop-bpf-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(parent); err != nil {
			t.Errorf("remove %s: %v", parent, err)
		}
	})
	pinDir := filepath.Join(parent, "pins")
	tables := maps.Tables{VRFs: []maps.VRF{{ID: 1, TableID: 100}, {ID: 2, TableID: limits.MainTableID}}}
	load := func() *loader.Loader {
		t.Helper()
		spec, err := bpf.RouterSpec()
		if err != nil {
			t.Fatal(err)
		}
		ldr, err := loader.Load(ctx, loader.Options{Spec: spec, PinDir: pinDir})
		if errors.Is(err, loader.ErrNotSupported) {
			testreq.KernelLacks(t, "a feature the router needs", err)
		}
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		return ldr
	}
	apply := func(tb maps.Tables, rev string) maps.Report {
		t.Helper()
		set, err := maps.OpenPinned(pinDir)
		if err != nil {
			t.Fatalf("open pinned maps: %v", err)
		}
		defer set.Close()
		rep, err := set.Apply(ctx, tb, rev)
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		return rep
	}

	old := load()
	first := apply(tables, "old")
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	// What the old program left: everything but sbr_table.
	if err := os.Remove(filepath.Join(pinDir, bpf.RouterMapSbrTable)); err != nil {
		t.Fatal(err)
	}

	ldr := load()
	t.Cleanup(func() {
		if err := ldr.Remove(context.Background()); err != nil && !errors.Is(err, loader.ErrClosed) {
			t.Errorf("remove router: %v", err)
		}
	})
	r := ldr.Report()
	if len(r.Migrated) != 0 || !slices.Equal(r.Created, []string{bpf.RouterMapSbrTable}) ||
		!slices.Contains(r.Reused, bpf.RouterMapVrfTable) {
		t.Fatalf("load report %+v: want sbr_table created, the other maps reused, no migration", r)
	}
	if rep := apply(tables, "old"); !rep.NoOp || rep.Generation != first.Generation {
		t.Fatalf("the adopted generation again: %s, want a no-op of generation %d", rep, first.Generation)
	}
	withSBR := tables
	withSBR.SBR = []maps.SBR{{Prefix: netip.MustParsePrefix("10.50.0.0/24"), VRF: 1}}
	if rep := apply(withSBR, "new"); rep.Changes.SBR.Added != 1 {
		t.Fatalf("apply with sbr: %s", rep)
	}
}

// TestAdoptPinsWithoutIfaceCache: a node upgrading from the program before iface_cache has every other map
// pinned. The loader adopts them and creates iface_cache; the live generation has no cache, so applying the same
// tables again writes them anew with their cache (one generation more, no changes) instead of a no-op, and only
// the next apply is one.
func TestAdoptPinsWithoutIfaceCache(t *testing.T) {
	testreq.BPFFS(t)
	ctx := context.Background()
	parent, err := os.MkdirTemp("/sys/fs/bpf", "netop-bpf-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(parent); err != nil {
			t.Errorf("remove %s: %v", parent, err)
		}
	})
	pinDir := filepath.Join(parent, "pins")
	tables := maps.Tables{
		VRFs:       []maps.VRF{{ID: 1, TableID: 100}},
		Interfaces: []maps.Interface{{Ifindex: 1, VRF: 1, Mode: maps.ModeRoute}},
	}
	load := func() *loader.Loader {
		t.Helper()
		spec, err := bpf.RouterSpec()
		if err != nil {
			t.Fatal(err)
		}
		ldr, err := loader.Load(ctx, loader.Options{Spec: spec, PinDir: pinDir})
		if errors.Is(err, loader.ErrNotSupported) {
			testreq.KernelLacks(t, "a feature the router needs", err)
		}
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		return ldr
	}
	apply := func() maps.Report {
		t.Helper()
		set, err := maps.OpenPinned(pinDir)
		if err != nil {
			t.Fatalf("open pinned maps: %v", err)
		}
		defer set.Close()
		rep, err := set.Apply(ctx, tables, "rev")
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		return rep
	}

	old := load()
	first := apply()
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	// What the old program left: everything but iface_cache.
	if err := os.Remove(filepath.Join(pinDir, bpf.RouterMapIfaceCache)); err != nil {
		t.Fatal(err)
	}

	ldr := load()
	t.Cleanup(func() {
		if err := ldr.Remove(context.Background()); err != nil && !errors.Is(err, loader.ErrClosed) {
			t.Errorf("remove router: %v", err)
		}
	})
	if r := ldr.Report(); len(r.Migrated) != 0 || !slices.Equal(r.Created, []string{bpf.RouterMapIfaceCache}) {
		t.Fatalf("load report %+v: want iface_cache created, the other maps reused, no migration", r)
	}
	if rep := apply(); rep.NoOp || rep.Generation != first.Generation+1 || !rep.Changes.Zero() {
		t.Fatalf("the adopted generation again: %s, want generation %d with no changes", rep, first.Generation+1)
	}
	if rep := apply(); !rep.NoOp {
		t.Fatalf("third apply: %s, want a no-op", rep)
	}
}
