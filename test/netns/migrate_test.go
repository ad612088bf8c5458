package netnstest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// TestIncompatibleUpgradeMigrates: an upgrade whose iface_table definition changed (max_entries doubled) cannot
// reuse the pinned maps. The loader's migration builds a fresh collection, the Rebuild callback fills it from the
// desired tables, the attachments switch to the new program in place - all while a flow runs with zero loss.
func TestIncompatibleUpgradeMigrates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l := lab.New(t)
	l.MustBuild(ctx, lineTopology(lineOptions{}))
	a, r, b := l.NS("a"), l.NS("r"), l.NS("b")
	assertKernelForwardingOff(t, r, "ra", "rb")
	pinDir := l.MustPinDir()
	tables := lineTables(t, r, tableMain, "ra", "rb")

	v1 := loadRouter(t, r, pinDir, loader.Options{})
	before := map[string]loader.Attachment{}
	for _, att := range v1.attach(t, loader.ModeAuto, "ra", "rb") {
		before[att.Interface] = att
	}
	v1.apply(t, tables, "v1")

	flow, err := lab.StartFlow(ctx, lab.FlowOptions{From: a, To: b, Dst: hostB4, Rate: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if err := flow.WaitReceived(ctx, 200, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// The old version's process ends (keeping its pins), the new version starts.
	if err := v1.set.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v1.ldr.Close(); err != nil {
		t.Fatal(err)
	}

	v2spec := routerSpec(t)
	table := v2spec.Maps[maps.MapIfaceTable]
	table.MaxEntries *= 2
	wantEntries := table.MaxEntries
	var rebuilt maps.Report
	v2 := loadRouter(t, r, pinDir, loader.Options{
		Spec: v2spec,
		Rebuild: func(ctx context.Context, coll *ebpf.Collection) error {
			set, err := maps.New(routerMapsOf(coll))
			if err != nil {
				return err
			}
			defer set.Close()
			rebuilt, err = set.Apply(ctx, tables, "v2")
			return err
		},
	})
	rep := v2.ldr.Report()
	if !slices.Contains(rep.Migrated, maps.MapIfaceTable) {
		t.Fatalf("load report %+v: want a migration of %s", rep, maps.MapIfaceTable)
	}
	if rebuilt.Generation == 0 {
		t.Fatalf("Rebuild did not apply the tables (report %s)", rebuilt)
	}
	for _, att := range v2.ldr.Attachments() {
		old := before[att.Interface]
		if att.LinkID != old.LinkID || att.ProgramID == old.ProgramID {
			t.Errorf("%s: link %d program %d after migration, before link %d program %d: want the same link running a new program",
				att.Interface, att.LinkID, att.ProgramID, old.LinkID, old.ProgramID)
		}
	}
	pinned, err := ebpf.LoadPinnedMap(v2.ldr.MapPinPath(maps.MapIfaceTable), nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := pinned.Info()
	pinned.Close()
	if err != nil {
		t.Fatal(err)
	}
	if info.MaxEntries != wantEntries {
		t.Errorf("pinned %s has max_entries %d after migration, want %d", maps.MapIfaceTable, info.MaxEntries, wantEntries)
	}

	// The new maps count from zero: forwarding through them shows the new program carries the flow.
	if err := flow.WaitReceived(ctx, 200, 5*time.Second); err != nil {
		t.Fatalf("after migration: %v", err)
	}
	res, err := flow.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fwd := v2.counter(t, vrfID, maps.ReasonForwardedFib)
	t.Logf("flow across migration: %s; new maps forwarded-fib %s", res, fmtCounter(fwd))
	if !res.Clean() {
		t.Errorf("flow across migration not clean: %s", res)
	}
	if fwd.Packets < 200 {
		t.Errorf("new maps counted %d forwarded packets after migration, want >= 200", fwd.Packets)
	}
}

// routerMapsOf picks the router's maps out of a loaded collection (the loader hands Rebuild a collection).
func routerMapsOf(coll *ebpf.Collection) *bpf.RouterMaps {
	return &bpf.RouterMaps{
		IfaceTable:    coll.Maps[maps.MapIfaceTable],
		VrfTable:      coll.Maps[maps.MapVRFTable],
		RedirectTable: coll.Maps[maps.MapRedirectTable],
		SbrTable:      coll.Maps[maps.MapSBRTable],
		VrfCounters:   coll.Maps[maps.MapVRFCounters],
		Version:       coll.Maps[maps.MapVersion],
		IfaceCache:    coll.Maps[maps.MapIfaceCache],
	}
}
