package maps

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// requireBPF: creating BPF maps needs root.
func requireBPF(t testing.TB) {
	t.Helper()
	testreq.Root(t)
}

// newMaps creates the router's maps unpinned (or pinned in pinDir when set),
// letting the test change specs first (e.g. shrink a table).
func newMaps(t testing.TB, pinDir string, mutate func(map[string]*ebpf.MapSpec)) *bpf.RouterMaps {
	t.Helper()
	requireBPF(t)
	spec, err := bpf.RouterSpec()
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]*ebpf.MapSpec{}
	names := append(MapNames[:], MapIfaceCache)
	for _, name := range names {
		specs[name] = spec.Maps[name].Copy()
		if pinDir == "" {
			specs[name].Pinning = ebpf.PinNone
		}
	}
	if mutate != nil {
		mutate(specs)
	}
	var m bpf.RouterMaps
	ptrs := map[string]**ebpf.Map{MapIfaceTable: &m.IfaceTable, MapVRFTable: &m.VrfTable,
		MapRedirectTable: &m.RedirectTable, MapSBRTable: &m.SbrTable, MapVRFCounters: &m.VrfCounters, MapVersion: &m.Version,
		MapIfaceCache: &m.IfaceCache}
	for _, name := range names {
		mp, err := ebpf.NewMapWithOptions(specs[name], ebpf.MapOptions{PinPath: pinDir})
		if errors.Is(err, ebpf.ErrNotSupported) {
			testreq.KernelLacks(t, "BPF map "+name, err)
		}
		if errors.Is(err, os.ErrPermission) {
			testreq.Need(t, "permission to create BPF maps", fmt.Errorf("create map %s: %w", name, err))
		}
		if err != nil {
			t.Fatalf("create map %s: %v", name, err)
		}
		*ptrs[name] = mp
	}
	t.Cleanup(func() { m.Close() })
	return &m
}

func newSet(t testing.TB, m *bpf.RouterMaps) *Set {
	t.Helper()
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawSlots counts the entries per slot in all four tables.
func rawSlots(t *testing.T, s *Set) [2]int {
	t.Helper()
	slots, err := s.readSlots()
	if err != nil {
		t.Fatal(err)
	}
	var n [2]int
	for i, e := range slots {
		n[i] = len(e.ifaceKeys) + len(e.vrfKeys) + len(e.redirectKeys) + len(e.sbrKeys)
	}
	return n
}

func mustDump(t *testing.T, s *Set) Snapshot {
	t.Helper()
	snap, err := s.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestApplyDiffNoOpAndSwap(t *testing.T) {
	s := newSet(t, newMaps(t, "", nil))
	ctx := context.Background()

	v, err := s.Version()
	if err != nil || v.Generation != 0 {
		t.Fatalf("fresh maps: version %+v, %v", v, err)
	}

	a := validTables()
	rep, err := s.Apply(ctx, a, "rev-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	want := Diff{Interfaces: Change{Added: 4}, VRFs: Change{Added: 2}, Redirects: Change{Added: 2}}
	if rep.NoOp || rep.Generation != 1 || rep.Slot != 1 || rep.Changes != want {
		t.Fatalf("first apply: %+v", rep)
	}
	snap := mustDump(t, s)
	if !snap.Tables.Equal(a) || snap.Version.Generation != 1 || snap.Version.Revision != "rev-a" ||
		snap.Version.TablesHash != a.Hash() {
		t.Fatalf("dump after first apply: %+v", snap)
	}
	if tables, err := s.DumpTables(ctx); err != nil || !tables.Tables.Equal(a) || tables.Version != snap.Version || tables.Counters != nil {
		t.Fatalf("tables only after first apply: %+v, %v (dump %+v)", tables, err, snap)
	}
	if n := rawSlots(t, s); n != [2]int{0, 8} {
		t.Fatalf("entries per slot %v, want [0 8]", n)
	}

	// Same tables in another order, same revision: nothing to do.
	b := validTables()
	b.Interfaces[0], b.Interfaces[2] = b.Interfaces[2], b.Interfaces[0]
	rep, err = s.Apply(ctx, b, "rev-a")
	if err != nil || !rep.NoOp || rep.Generation != 1 || !rep.Changes.Zero() {
		t.Fatalf("repeat apply: %+v, %v", rep, err)
	}

	// Only the revision changes: a new generation with zero changes.
	rep, err = s.Apply(ctx, b, "rev-b")
	if err != nil || rep.NoOp || rep.Generation != 2 || rep.Slot != 0 || !rep.Changes.Zero() {
		t.Fatalf("revision-only apply: %+v, %v", rep, err)
	}

	c := validTables()
	c.Interfaces = c.Interfaces[:3]                   // -1 (ifindex 5)
	c.Interfaces[0].Strict = true                     // ~1
	c.Redirects = c.Redirects[1:]                     // -1
	c.VRFs = append(c.VRFs, VRF{ID: 3, TableID: 300}) // +1
	rep, err = s.Apply(ctx, c, "rev-c")
	if err != nil {
		t.Fatal(err)
	}
	want = Diff{Interfaces: Change{Removed: 1, Changed: 1}, VRFs: Change{Added: 1}, Redirects: Change{Removed: 1}}
	if rep.Generation != 3 || rep.Slot != 1 || rep.Changes != want {
		t.Fatalf("third apply: %+v", rep)
	}
	if rep.Duration <= 0 || rep.Phases.Write <= 0 || rep.Phases.Grace <= 0 {
		t.Errorf("phase durations not measured: %+v", rep.Phases)
	}
	snap = mustDump(t, s)
	if !snap.Tables.Equal(c) || snap.Version.Generation != 3 {
		t.Fatalf("dump after third apply: %+v", snap)
	}
	if n := rawSlots(t, s); n != [2]int{0, 3 + 3 + 1} {
		t.Fatalf("entries per slot %v, want [0 7]", n)
	}

	// A full 64-byte revision (a SHA-256 in hex) fits without NUL.
	full := strings.Repeat("0123456789abcdef", 4)
	if rep, err = s.Apply(ctx, c, full); err != nil {
		t.Fatalf("64-byte revision: %v", err)
	}
	if v, err := s.Version(); err != nil || v.Revision != full || v.Generation != rep.Generation {
		t.Fatalf("64-byte revision read back as %+v, %v", v, err)
	}
	if rep, err = s.Apply(ctx, c, full); err != nil || !rep.NoOp {
		t.Fatalf("same 64-byte revision again: %+v, %v", rep, err)
	}

	// Empty tables are a real generation, too.
	rep, err = s.Apply(ctx, Tables{}, "empty")
	if err != nil || rep.Generation != 5 {
		t.Fatalf("empty apply: %+v, %v", rep, err)
	}
	if n := rawSlots(t, s); n != [2]int{0, 0} {
		t.Fatalf("entries per slot %v after emptying", n)
	}
}

func TestApplyInvalidWritesNothing(t *testing.T) {
	s := newSet(t, newMaps(t, "", nil))
	ctx := context.Background()
	if _, err := s.Apply(ctx, validTables(), "good"); err != nil {
		t.Fatal(err)
	}
	before := mustDump(t, s)

	bad := validTables()
	bad.VRFs[1].TableID = 0
	bad.Interfaces = append(bad.Interfaces, Interface{Ifindex: 20, VRF: 42, Mode: ModeRoute})
	_, err := s.Apply(ctx, bad, "bad")
	if !errors.Is(err, fielderr.ErrInvalid) {
		t.Fatalf("invalid tables: err %v, want fielderr.ErrInvalid", err)
	}
	for _, want := range []string{"vrfs[1].tableID: Invalid value: 0: reserved", "interfaces[4].vrf: Invalid value: 42: not in vrfs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = s.Apply(ctx, validTables(), strings.Repeat("a", 65))
	if !errors.Is(err, ErrRevisionTooLong) {
		t.Errorf("65-byte revision: err %v", err)
	}
	_, err = s.Apply(ctx, validTables(), "a\x00b")
	if !errors.Is(err, fielderr.ErrInvalid) {
		t.Errorf("revision with NUL: err %v", err)
	}
	after := mustDump(t, s)
	if !after.Tables.Equal(before.Tables) || after.Version != before.Version {
		t.Fatalf("invalid apply changed live state:\n%+v\n%+v", before, after)
	}
	if n := rawSlots(t, s); n[1-after.Version.Slot] != 0 {
		t.Fatalf("inactive slot has %d entries", n[1-after.Version.Slot])
	}
}

func TestApplyWriteFailureKeepsOldGeneration(t *testing.T) {
	// redirect_table holds 3 entries: the live generation's 2 plus 1 more, so
	// writing a second generation of 2 fails after iface and vrf entries and
	// one redirect were written.
	m := newMaps(t, "", func(specs map[string]*ebpf.MapSpec) { specs[MapRedirectTable].MaxEntries = 3 })
	s := newSet(t, m)
	ctx := context.Background()
	a := validTables()
	if _, err := s.Apply(ctx, a, "a"); err != nil {
		t.Fatal(err)
	}
	before := mustDump(t, s)

	b := validTables()
	b.VRFs[0].VNI = 99
	b.Redirects[0].EgressIfindex = 11
	b.Redirects[1].EgressIfindex = 12
	rep, err := s.Apply(ctx, b, "b")
	if err == nil {
		t.Fatalf("apply into a full map succeeded: %+v", rep)
	}
	if errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), MapRedirectTable) ||
		!strings.Contains(err.Error(), "map full (max_entries 3)") {
		t.Errorf("error does not name the failing table: %v", err)
	}
	t.Log(err)
	after := mustDump(t, s)
	if after.Version != before.Version || !after.Tables.Equal(a) {
		t.Fatalf("failed apply changed the live generation:\n%+v\n%+v", before, after)
	}
	if n := rawSlots(t, s); n[1-after.Version.Slot] != 0 {
		t.Fatalf("partial generation left behind: %v entries per slot", n)
	}

	// With room again the same Apply works and continues the generation.
	b.Redirects = b.Redirects[:1]
	b.Interfaces = b.Interfaces[:3]
	rep, err = s.Apply(ctx, b, "b")
	if err != nil || rep.Generation != before.Version.Generation+1 {
		t.Fatalf("apply after failure: %+v, %v", rep, err)
	}
}

func TestApplyCancelledWritesNothing(t *testing.T) {
	s := newSet(t, newMaps(t, "", nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Apply(ctx, validTables(), "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled apply: %v", err)
	}
	if n := rawSlots(t, s); n != [2]int{} {
		t.Fatalf("cancelled apply wrote %v", n)
	}
}

func TestAdoptPinnedGeneration(t *testing.T) {
	testreq.BPFFS(t)
	dir, err := os.MkdirTemp("/sys/fs/bpf", "maps-test-")
	testreq.Need(t, "a writable bpffs at /sys/fs/bpf", err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	m := newMaps(t, dir, nil)
	s := newSet(t, m)
	ctx := context.Background()
	for i := range 3 {
		if _, err := s.Apply(ctx, validTables(), fmt.Sprintf("r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	live := mustDump(t, s)

	// A new process: open the pins, see the same generation, continue from it.
	s2, err := OpenPinned(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	adopted := mustDump(t, s2)
	if adopted.Version != live.Version || !adopted.Tables.Equal(live.Tables) {
		t.Fatalf("adopted %+v, live %+v", adopted, live)
	}
	rep, err := s2.Apply(ctx, validTables(), "r2")
	if err != nil || !rep.NoOp {
		t.Fatalf("re-apply of the live state after reopen: %+v, %v", rep, err)
	}
	next := validTables()
	next.VRFs[0].VNI = 5
	rep, err = s2.Apply(ctx, next, "r3")
	if err != nil || rep.Generation != live.Version.Generation+1 || rep.Slot != 1-live.Version.Slot {
		t.Fatalf("apply after reopen: %+v, %v (live was %+v)", rep, err, live.Version)
	}
	if _, err := OpenPinned(filepath.Join(dir, "missing")); err == nil {
		t.Error("OpenPinned of a missing directory succeeded")
	}
}

func TestIncompatibleMapRejected(t *testing.T) {
	m := newMaps(t, "", func(specs map[string]*ebpf.MapSpec) {
		specs[MapVersion].ValueSize += 8
		specs[MapVersion].Value = nil
	})
	if _, err := New(m); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("New with a wrong version layout: %v", err)
	}
}

func TestCountersSumCPUs(t *testing.T) {
	m := newMaps(t, "", nil)
	s := newSet(t, m)
	vals := make([]VRFStats, s.ncpu)
	for cpu := range vals {
		vals[cpu].Reasons[ReasonForwardedFib] = bpf.RouterCounter{Packets: 2, Bytes: 200}
		vals[cpu].Reasons[ReasonDroppedFib] = bpf.RouterCounter{Packets: 1, Bytes: 60}
	}
	if err := m.VrfCounters.Update(uint32(7), vals, ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	got, err := s.Counters()
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(s.ncpu)
	if len(got) != 1 || got[0].VRF != 7 || len(got[0].ByReason) != 2 ||
		got[0].ByReason[ReasonForwardedFib] != (Counter{2 * n, 200 * n}) ||
		got[0].ByReason[ReasonDroppedFib] != (Counter{n, 60 * n}) {
		t.Fatalf("counters %+v", got)
	}
	if got[0].Total() != (Counter{3 * n, 260 * n}) {
		t.Errorf("total %v", got[0].Total())
	}
}

func TestGracePeriodWaiters(t *testing.T) {
	requireBPF(t)
	var g graceWaiter
	defer g.close()
	if err := g.waitMapOfMaps(); err != nil {
		t.Fatalf("map-of-maps grace period: %v", err)
	}
	if err := g.waitMapOfMaps(); err != nil {
		t.Fatalf("second map-of-maps grace period: %v", err)
	}
	if err := membarrierGlobal(); err != nil {
		testreq.KernelLacks(t, "membarrier(MEMBARRIER_CMD_GLOBAL)", err)
	}
	var mb graceWaiter
	defer mb.close()
	if err := mb.wait(); err != nil {
		t.Fatalf("grace period as Apply waits it: %v", err)
	}
}

// readLive never returns tables that belong to no single generation: it returns ErrTornRead instead.
func TestReadLiveTornRead(t *testing.T) {
	ctx := context.Background()
	other := validTables()
	other.VRFs[0].VNI = 4242
	tests := []struct {
		name string
		// during runs between the first read of version and the read of the tables.
		during func(t *testing.T, m *bpf.RouterMaps, s *Set)
		torn   bool
	}{
		{"nothing changes", func(*testing.T, *bpf.RouterMaps, *Set) {}, false},
		{"another writer applies meanwhile", func(t *testing.T, m *bpf.RouterMaps, _ *Set) {
			if _, err := newSet(t, m).Apply(ctx, other, "other"); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"live slot does not hold what version says", func(t *testing.T, m *bpf.RouterMaps, s *Set) {
			k, v := validTables().VRFs[0].entry(1, vrfDerived{})
			v.Vni = 7
			if err := m.VrfTable.Update(k, v, ebpf.UpdateAny); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMaps(t, "", nil)
			s := newSet(t, m)
			if _, err := s.Apply(ctx, validTables(), "a"); err != nil {
				t.Fatal(err)
			}
			v, slots, err := s.readLive(func() ([2]*slotEntries, error) {
				tt.during(t, m, s)
				return s.readSlots()
			})
			if got := errors.Is(err, ErrTornRead); got != tt.torn {
				t.Fatalf("readLive: err %v, want ErrTornRead %t", err, tt.torn)
			}
			if !tt.torn && (v.Generation != 1 || !slots[v.Slot].tables().Equal(validTables())) {
				t.Fatalf("readLive: version %v, tables %+v", v, slots[v.Slot].tables())
			}
			if tt.torn && (v != VersionInfo{} || slots != [2]*slotEntries{}) {
				t.Fatalf("readLive returned a snapshot with ErrTornRead: %v %v", v, slots)
			}
		})
	}
}

// Dump reads again while another writer swaps generations, and fails rather than mixing two of them.
func TestDumpDuringApplies(t *testing.T) {
	m := newMaps(t, "", nil)
	writer, reader := newSet(t, m), newSet(t, m)
	ctx := context.Background()
	gens := []Tables{validTables(), validTables()}
	gens[1].VRFs[0].VNI = 4242
	gens[1].Interfaces = gens[1].Interfaces[1:]
	done := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := writer.Apply(ctx, gens[i%2], fmt.Sprintf("g%d", i%2)); err != nil {
				done <- err
				return
			}
		}
	}()
	var ok, torn int
	for range 200 {
		snap, err := reader.Dump(ctx)
		switch {
		case errors.Is(err, ErrTornRead):
			torn++
		case err != nil:
			t.Fatal(err)
		default:
			ok++
			want := map[string]Tables{"": {}, "g0": gens[0], "g1": gens[1]}[snap.Version.Revision]
			if !snap.Tables.Equal(want) || snap.Version.Generation > 0 && snap.Tables.Hash() != snap.Version.TablesHash {
				t.Fatalf("Dump mixed generations: version %+v, tables %+v", snap.Version, snap.Tables)
			}
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d consistent dumps, %d failed with ErrTornRead after %d attempts", ok, torn, liveReadAttempts)
}

// bpftool prints every map with BTF field names (and enum names), which is
// what operators see when they debug a node.
func TestBpftoolShowsFieldNames(t *testing.T) {
	bpftool := testreq.Commands(t, "bpftool")[0]
	testreq.BPFFS(t)
	dir, err := os.MkdirTemp("/sys/fs/bpf", "maps-test-")
	testreq.Need(t, "a writable bpffs at /sys/fs/bpf", err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := newSet(t, newMaps(t, dir, nil))
	if _, err := s.Apply(context.Background(), sbrTables(), "bpftool"); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		MapIfaceTable:    {`"slot"`, `"ifindex"`, `"vlan"`, `"vrf_id"`, `"mode": "IFACE_MODE_ROUTE"`, `"flags"`},
		MapVRFTable:      {`"vrf_id"`, `"table_id": 100`, `"vni": 1000`, `"lookup_ifindex": 7`, `"flags": "VRF_F_SBR"`},
		MapSBRTable:      {`"prefixlen": 152`, `"slot": 1`, `"addr": [`, `"vrf_id": 2`, `"table_id": 200`},
		MapRedirectTable: {`"egress_ifindex": 6`, `"flags": "REDIRECT_F_REWRITE_MAC"`, `"smac"`, `"dmac"`},
		MapVersion:       {`"generation": 1`, `"slot": 1`, `"revision": "bpftool"`, `"tables_hash"`},
	}
	for name, fields := range want {
		out, err := exec.Command(bpftool, "map", "dump", "pinned", filepath.Join(dir, name)).CombinedOutput()
		if err != nil {
			t.Fatalf("bpftool map dump %s: %v\n%s", name, err, out)
		}
		for _, f := range fields {
			if !strings.Contains(string(out), f) {
				t.Errorf("bpftool dump of %s lacks %s:\n%s", name, f, out)
			}
		}
	}
}

func TestFromCollection(t *testing.T) {
	m := newMaps(t, "", nil)
	coll := &ebpf.Collection{Maps: map[string]*ebpf.Map{
		MapIfaceTable: m.IfaceTable, MapVRFTable: m.VrfTable, MapRedirectTable: m.RedirectTable,
		MapSBRTable: m.SbrTable, MapVRFCounters: m.VrfCounters, MapVersion: m.Version,
	}}
	s, err := FromCollection(coll)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Apply(context.Background(), validTables(), "c"); err != nil {
		t.Fatal(err)
	}
	delete(coll.Maps, MapVersion)
	if _, err := FromCollection(coll); err == nil {
		t.Error("FromCollection without the version map succeeded")
	}
}

// The cache of the last applied generation must never hide another writer's
// change: a second Set on the same maps (another process in production) moves
// the generation on, and the first Set must notice, diff against what is really
// live and leave the maps exactly as asked.
func TestApplyCacheSeesOtherWriters(t *testing.T) {
	m := newMaps(t, "", nil)
	first, second := newSet(t, m), newSet(t, m)
	ctx := context.Background()

	a := validTables()
	if _, err := first.Apply(ctx, a, "rev-a"); err != nil {
		t.Fatal(err)
	}
	b := validTables()
	b.VRFs[0].VNI = 4242
	if rep, err := second.Apply(ctx, b, "rev-b"); err != nil || rep.NoOp {
		t.Fatalf("second writer: %+v, %v", rep, err)
	}

	// first's cache says rev-a is live; the maps say rev-b. Re-applying a must
	// be a real swap with the VRF change in its diff.
	rep, err := first.Apply(ctx, a, "rev-a")
	if err != nil {
		t.Fatal(err)
	}
	if rep.NoOp || rep.Changes.VRFs.Changed != 1 || rep.Generation != 3 {
		t.Fatalf("apply after another writer: %+v", rep)
	}
	snap := mustDump(t, first)
	if !snap.Tables.Equal(a) || snap.Version.Revision != "rev-a" {
		t.Fatalf("live after re-apply: %+v", snap)
	}
	if n := rawSlots(t, first); n[0]+n[1] != 8 {
		t.Fatalf("entries per slot %v, want 8 in total (old slot cleaned)", n)
	}

	// A cached apply (no other writer in between) must diff like a full read.
	c := validTables()
	c.Interfaces = c.Interfaces[1:]
	rep, err = first.Apply(ctx, c, "rev-c")
	if err != nil || rep.Changes.Interfaces.Removed != 1 || rep.Generation != 4 {
		t.Fatalf("cached apply: %+v, %v", rep, err)
	}
	if snap := mustDump(t, first); !snap.Tables.Equal(c) {
		t.Fatalf("live after cached apply: %+v", snap.Tables)
	}
	if n := rawSlots(t, first); n[0]+n[1] != 7 {
		t.Fatalf("entries per slot %v, want 7 in total", n)
	}
}

// TestApplySBR: sbr entries are part of the generation; the VRFs routing by main get VRF_F_SBR while there are
// any, and lose it with the last one.
func TestApplySBR(t *testing.T) {
	s := newSet(t, newMaps(t, "", nil))
	ctx := context.Background()
	a := sbrTables()
	rep, err := s.Apply(ctx, a, "sbr")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Change{Added: len(a.SBR)}); rep.Changes.SBR != want {
		t.Fatalf("apply: sbr changes %s, want %s", rep.Changes.SBR, want)
	}
	if snap := mustDump(t, s); !snap.Tables.Equal(a) || snap.Version.TablesHash != a.Hash() {
		t.Fatalf("dump %+v, want %+v", snap.Tables, a)
	}
	flags := func() map[uint32]uint32 {
		t.Helper()
		slots, err := s.readSlots()
		if err != nil {
			t.Fatal(err)
		}
		e := slots[rep.Slot]
		got := map[uint32]uint32{}
		for i, k := range e.vrfKeys {
			got[k.VrfId] = uint32(e.vrfVals[i].Flags)
		}
		for i, k := range e.sbrKeys {
			if p, _ := k.Prefix(); e.sbrVals[i].TableId != map[uint32]uint32{1: 100, 2: 200}[e.sbrVals[i].VrfId] {
				t.Errorf("sbr %s: %s, want the table of its VRF", p, e.sbrVals[i])
			}
		}
		return got
	}
	if got := flags(); got[1] != 0 || got[2] != 0 || got[3] != VRFFlagSBR {
		t.Errorf("vrf flags %v: want sbr on VRF 3 (main table) only", got)
	}

	// A longest match inside one VRF, and an entry moved to another VRF.
	b := sbrTables()
	b.SBR[2].VRF, b.SBR[3].VRF = 1, 1
	b.SBR = append(b.SBR, SBR{Prefix: netip.MustParsePrefix("10.50.0.128/25"), VRF: 1})
	if rep, err = s.Apply(ctx, b, "sbr-b"); err != nil {
		t.Fatal(err)
	}
	if want := (Change{Added: 1, Changed: 2}); rep.Changes.SBR != want {
		t.Fatalf("second apply: sbr changes %s, want %s", rep.Changes.SBR, want)
	}
	if snap := mustDump(t, s); !snap.Tables.Equal(b) {
		t.Fatalf("dump %+v, want %+v", snap.Tables.SBR, b.SBR)
	}

	c := sbrTables()
	c.SBR = nil
	if rep, err = s.Apply(ctx, c, "no-sbr"); err != nil {
		t.Fatal(err)
	}
	if got := flags(); got[3] != 0 {
		t.Errorf("vrf flags %v after the last sbr entry went: want none", got)
	}
	n := rawSlots(t, s)
	if n[rep.Slot] != len(c.Interfaces)+len(c.VRFs)+len(c.Redirects) || n[otherSlot(rep.Slot)] != 0 {
		t.Errorf("entries per slot %v after removing sbr (live slot %d)", n, rep.Slot)
	}
}

// TestApplyPeer: an interface with Peer carries IFACE_F_PEER in iface_table and iface_cache, every VRF of such
// tables VRF_F_PEERS (a route may leave by another VRF's interface), next to VRF_F_SBR; tables without one carry
// neither, and a dump gives the flag back.
func TestApplyPeer(t *testing.T) {
	s := newSet(t, newMaps(t, "", nil))
	ctx := context.Background()
	entryFlags := func(slot uint32) (ifaces map[InterfaceKey]uint8, vrfs map[uint32]uint32) {
		t.Helper()
		slots, err := s.readSlots()
		if err != nil {
			t.Fatal(err)
		}
		e := slots[slot]
		ifaces, vrfs = map[InterfaceKey]uint8{}, map[uint32]uint32{}
		for i, k := range e.ifaceKeys {
			ifaces[InterfaceKey{Ifindex: k.Ifindex, VLAN: k.Vlan}] = uint8(e.ifaceVals[i].Flags)
		}
		for i, k := range e.vrfKeys {
			vrfs[k.VrfId] = uint32(e.vrfVals[i].Flags)
		}
		return ifaces, vrfs
	}
	a := sbrTables()
	a.Interfaces = append(a.Interfaces, Interface{Ifindex: 8, VRF: 2, Mode: ModeRoute, Peer: true})
	rep, err := s.Apply(ctx, a, "peer")
	if err != nil {
		t.Fatal(err)
	}
	ifaces, vrfs := entryFlags(rep.Slot)
	if ifaces[InterfaceKey{Ifindex: 8}] != IfaceFlagPeer || ifaces[InterfaceKey{Ifindex: 3, VLAN: 10}] != IfaceFlagStrict {
		t.Errorf("iface flags %v: want peer on 8 only, strict on 3.10", ifaces)
	}
	if vrfs[1] != VRFFlagPeers || vrfs[2] != VRFFlagPeers || vrfs[3] != VRFFlagPeers|VRFFlagSBR {
		t.Errorf("vrf flags %v: want peers on every VRF, sbr on 3", vrfs)
	}
	var cached bool
	for _, c := range liveCache(t, s) {
		switch {
		case c.Ifindex == 8:
			cached = uint8(c.Flags) == IfaceFlagPeer && uint32(c.VrfFlags) == VRFFlagPeers
		case c.Ifindex == 3 && c.Vlan == 0 && uint32(c.VrfFlags) != VRFFlagPeers:
			t.Errorf("cache of 3: vrf flags %#x, want peers", c.VrfFlags)
		}
	}
	if !cached {
		t.Error("iface_cache lacks interface 8 with its peer flag and its VRF's flags")
	}
	if snap := mustDump(t, s); !snap.Tables.Equal(a) {
		t.Fatalf("dump %+v, want %+v", snap.Tables.Interfaces, a.Interfaces)
	}

	b := sbrTables()
	if rep, err = s.Apply(ctx, b, "no-peer"); err != nil {
		t.Fatal(err)
	}
	if ifaces, vrfs = entryFlags(rep.Slot); vrfs[1] != 0 || vrfs[3] != VRFFlagSBR || ifaces[InterfaceKey{Ifindex: 3}] != 0 {
		t.Errorf("without peers: vrf flags %v, iface flags %v", vrfs, ifaces)
	}
}

// liveCache reads the live slot's part of iface_cache.
func liveCache(t *testing.T, s *Set) []IfaceCacheValue {
	t.Helper()
	v, err := s.Version()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]IfaceCacheValue, limits.IfaceCacheBuckets)
	for i := range out {
		if err := s.maps.IfaceCache.Lookup(v.Slot*limits.IfaceCacheBuckets+uint32(i), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestApplyWritesIfaceCache: every generation comes with its cache, and a live generation whose cache is not
// current (an upgrade from a router without it, another writer) is written again rather than kept as a no-op.
func TestApplyWritesIfaceCache(t *testing.T) {
	s := newSet(t, newMaps(t, "", nil))
	ctx := context.Background()
	tables := validTables()
	for _, rev := range []string{"rev-a", "rev-b"} {
		if _, err := s.Apply(ctx, tables, rev); err != nil {
			t.Fatal(err)
		}
		if got, want := liveCache(t, s), ifaceCache(tables.Normalize(), tables.Hash()); !slices.Equal(got, want) {
			t.Fatalf("%s: live cache differs from ifaceCache of the tables", rev)
		}
	}

	rep, err := s.Apply(ctx, tables, "rev-b")
	if err != nil || !rep.NoOp {
		t.Fatalf("repeat apply: %+v, %v", rep, err)
	}
	v, err := s.Version()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.maps.IfaceCache.Put(v.Slot*limits.IfaceCacheBuckets, IfaceCacheValue{}); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Apply(ctx, tables, "rev-b")
	if err != nil || rep.NoOp || rep.Generation != v.Generation+1 || !rep.Changes.Zero() {
		t.Fatalf("apply over a stale cache: %+v, %v; want a new generation of the same tables", rep, err)
	}
	if got, want := liveCache(t, s), ifaceCache(tables.Normalize(), tables.Hash()); !slices.Equal(got, want) {
		t.Fatal("live cache not rewritten")
	}
}
