package loader

import (
	"context"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/maps"
)

// RouterMaps returns the router's maps as the typed struct pkg/maps takes
// (maps.New). The Loader keeps ownership: do not close them; they are
// invalid after Close. Fails when the loaded spec is not the router.
func (l *Loader) RouterMaps() (*bpf.RouterMaps, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.coll == nil {
		return nil, ErrClosed
	}
	return routerMaps(l.coll)
}

// routerMaps views coll's maps without taking them out of it (unlike
// Collection.Assign, which transfers ownership).
func routerMaps(coll *ebpf.Collection) (*bpf.RouterMaps, error) {
	m := &bpf.RouterMaps{
		IfaceTable:    coll.Maps[maps.MapIfaceTable],
		VrfTable:      coll.Maps[maps.MapVRFTable],
		RedirectTable: coll.Maps[maps.MapRedirectTable],
		SbrTable:      coll.Maps[maps.MapSBRTable],
		VrfCounters:   coll.Maps[maps.MapVRFCounters],
		Version:       coll.Maps[maps.MapVersion],
		IfaceCache:    coll.Maps[maps.MapIfaceCache],
	}
	// The cache too: pkg/maps would work without it, but every packet would then take the hash tables' path.
	for name, mp := range map[string]*ebpf.Map{
		maps.MapIfaceTable: m.IfaceTable, maps.MapVRFTable: m.VrfTable, maps.MapRedirectTable: m.RedirectTable,
		maps.MapSBRTable: m.SbrTable, maps.MapVRFCounters: m.VrfCounters, maps.MapVersion: m.Version,
		maps.MapIfaceCache: m.IfaceCache,
	} {
		if mp == nil {
			return nil, fmt.Errorf("router map %s: missing from the loaded collection", name)
		}
	}
	return m, nil
}

// RebuildTables adapts desired state to Options.Rebuild for the router:
// on migration it applies desired() to the new collection through pkg/maps
// (one generation, version flipped), before any interface switches to it.
func RebuildTables(desired func(ctx context.Context) (maps.Tables, string, error)) func(context.Context, *ebpf.Collection) error {
	return func(ctx context.Context, coll *ebpf.Collection) error {
		tables, revision, err := desired(ctx)
		if err != nil {
			return fmt.Errorf("desired tables: %w", err)
		}
		set, err := maps.FromCollection(coll)
		if err != nil {
			return fmt.Errorf("open new router maps: %w", err)
		}
		defer set.Close()
		if _, err := set.Apply(ctx, tables, revision); err != nil {
			return fmt.Errorf("apply revision %q to new maps: %w", revision, err)
		}
		return nil
	}
}
