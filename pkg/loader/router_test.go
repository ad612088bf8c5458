package loader

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/netnsrun"
	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/maps"
)

// The real router: every attach mode runs it, and an incompatible upgrade of
// one of its maps migrates with the tables rebuilt through pkg/maps.

func ifindex(t testing.TB, ns netns.NsHandle, name string) uint32 {
	t.Helper()
	var idx int
	if err := netnsrun.Run(ns, func() error {
		iface, err := net.InterfaceByName(name)
		if err == nil {
			idx = iface.Index
		}
		return err
	}); err != nil {
		t.Fatalf("ifindex of %s: %v", name, err)
	}
	return uint32(idx)
}

// passTables puts each interface in pass mode in its own VRF (i+1), so the
// router counts its frames under "passed-mode" in that VRF.
func passTables(t testing.TB, ns netns.NsHandle, ifnames []string) maps.Tables {
	var tbl maps.Tables
	for i, name := range ifnames {
		vrf := uint32(i + 1)
		tbl.VRFs = append(tbl.VRFs, maps.VRF{ID: vrf, TableID: 100 + vrf})
		tbl.Interfaces = append(tbl.Interfaces, maps.Interface{Ifindex: ifindex(t, ns, name), VRF: vrf, Mode: maps.ModePass})
	}
	return tbl
}

// expectRouterCounted sends n frames from sender and waits for exactly n
// more "passed-mode" packets in vrf.
func expectRouterCounted(t *testing.T, ns netns.NsHandle, set *maps.Set, sender string, vrf uint32, n int) {
	t.Helper()
	read := func() uint64 {
		cs, err := set.Counters()
		if err != nil {
			t.Fatalf("read counters: %v", err)
		}
		for _, c := range cs {
			if c.VRF == vrf {
				return c.ByReason[maps.ReasonPassedMode].Packets
			}
		}
		return 0
	}
	before := read()
	sendFrames(t, ns, sender, n)
	var got uint64
	eventually(t, 3*time.Second, "router counters", func() bool { got = read(); return got >= before+uint64(n) })
	if got != before+uint64(n) {
		t.Fatalf("vrf %d passed-mode = %d, want %d", vrf, got, before+uint64(n))
	}
}

func TestRouterAttachModes(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	recv := []string{"r0", "r1", "r2", "r3"}
	send := []string{"s0", "s1", "s2", "s3"}
	modes := []Mode{ModeTCX, ModeTC, ModeXDPGeneric, ModeXDPNative}
	for i := range recv {
		addVeth(t, ns, recv[i], send[i])
	}
	ctx := context.Background()
	l := mustLoad(t, Options{PinDir: newPinDir(t), NetNS: ns}) // embedded router
	rm, err := l.RouterMaps()
	if err != nil {
		t.Fatalf("RouterMaps: %v", err)
	}
	if rm.IfaceCache == nil {
		t.Fatal("RouterMaps without iface_cache: the agent's tables would never fill it")
	}
	set, err := maps.New(rm)
	if err != nil {
		t.Fatalf("maps.New: %v", err)
	}
	defer set.Close()
	if _, err := set.Apply(ctx, passTables(t, ns, recv), "attach-modes"); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	attached := 0
	for i, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			a, err := l.Attach(ctx, recv[i], mode)
			skipIfNotSupported(t, err)
			if err != nil {
				t.Fatalf("Attach(%s, %s): %v", recv[i], mode, err)
			}
			attached++
			assertRunning(t, ns, a)
			expectRouterCounted(t, ns, set, send[i], uint32(i+1), 5)
		})
	}
	// A restart with the same router adopts every attachment (all four where the kernel has tcx) untouched.
	l.Close()
	l = mustLoad(t, Options{PinDir: l.PinDir(), NetNS: ns})
	if r := l.Report(); r.Adopted != attached || attached < len(modes)-1 || r.Updated != 0 || len(r.ProgramsReplaced) != 0 || len(r.Created) != 0 {
		t.Fatalf("restart report: %+v", r)
	}
	if err := l.Remove(ctx); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	for _, r := range recv {
		if h := kernelHooks(t, ns, r); len(h.tcx) != 0 || h.xdp != 0 || len(h.filters) != 0 {
			t.Fatalf("%s hooks after Remove: %+v", r, h)
		}
	}
}

func TestRouterMigration(t *testing.T) {
	requireRoot(t)
	u := newUpgradeLab(t)
	ctx := context.Background()
	recv := []string{"r0", "r1", "r2"}

	l1 := mustLoad(t, Options{PinDir: u.dir, NetNS: u.ns})
	before := u.attachAll(t, l1)
	rm, err := l1.RouterMaps()
	if err != nil {
		t.Fatalf("RouterMaps: %v", err)
	}
	set1, err := maps.New(rm)
	if err != nil {
		t.Fatalf("maps.New: %v", err)
	}
	tables := passTables(t, u.ns, recv)
	if _, err := set1.Apply(ctx, tables, "v1"); err != nil {
		t.Fatalf("Apply v1: %v", err)
	}
	set1.Close()
	oldRedirect := mapID(t, l1.Map("redirect_table"))
	l1.Close()

	// The upgrade grows redirect_table: its pinned copy is incompatible.
	spec, err := bpf.LoadRouter()
	if err != nil {
		t.Fatalf("LoadRouter: %v", err)
	}
	spec.Maps["redirect_table"].MaxEntries *= 2
	rebuilt := false
	l2 := mustLoad(t, Options{
		Spec: spec, PinDir: u.dir, NetNS: u.ns,
		Rebuild: RebuildTables(func(context.Context) (maps.Tables, string, error) {
			rebuilt = true
			return tables, "v2", nil
		}),
	})
	r := l2.Report()
	if !rebuilt || !slices.Equal(r.Migrated, []string{"redirect_table"}) || r.Updated != 3 {
		t.Fatalf("report %+v (rebuilt %v)", r, rebuilt)
	}
	if got := pinnedMapID(t, u.dir+"/redirect_table"); got == oldRedirect || got != mapID(t, l2.Map("redirect_table")) {
		t.Fatalf("redirect_table pin %d, old %d, loaded %d", got, oldRedirect, mapID(t, l2.Map("redirect_table")))
	}
	for ifname, was := range before {
		now := attachmentOf(t, l2, ifname)
		if now.LinkID != was.LinkID || now.ProgramID != progIDFor(t, l2, was.Mode) {
			t.Fatalf("%s: after migration %+v, before %+v", ifname, now, was)
		}
	}
	// Anyone opening the pins now sees the rebuilt generation.
	pinned, err := maps.OpenPinned(u.dir)
	if err != nil {
		t.Fatalf("OpenPinned: %v", err)
	}
	defer pinned.Close()
	snap, err := pinned.Dump(ctx)
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	if snap.Version.Revision != "v2" || !snap.Tables.Equal(tables) {
		t.Fatalf("pinned generation %q tables %+v, want v2 %+v", snap.Version.Revision, snap.Tables, tables)
	}
	for i, r := range recv {
		expectRouterCounted(t, u.ns, pinned, u.peers[r], uint32(i+1), 4)
	}
}
