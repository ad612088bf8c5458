package loader

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netns"
)

// upgradeLab is three veth pairs with the router attached to the first end
// of each in a different mode; frames sent from the second end hit it.
type upgradeLab struct {
	ns    netns.NsHandle
	dir   string
	modes map[string]Mode   // receiving interface -> mode
	peers map[string]string // receiving interface -> sending peer
}

func newUpgradeLab(t testing.TB) *upgradeLab {
	t.Helper()
	u := &upgradeLab{
		ns:    newNS(t),
		dir:   newPinDir(t),
		modes: map[string]Mode{"r0": ModeTCX, "r1": ModeTC, "r2": ModeXDPGeneric},
		peers: map[string]string{"r0": "s0", "r1": "s1", "r2": "s2"},
	}
	for r, s := range u.peers {
		addVeth(t, u.ns, r, s)
	}
	return u
}

func (u *upgradeLab) attachAll(t testing.TB, l *Loader) map[string]Attachment {
	t.Helper()
	out := map[string]Attachment{}
	for ifname, mode := range u.modes {
		a, err := l.Attach(context.Background(), ifname, mode)
		skipIfNotSupported(t, err)
		if err != nil {
			t.Fatalf("Attach(%s, %s): %v", ifname, mode, err)
		}
		out[ifname] = a
	}
	return out
}

// expectAllCounted proves on every interface that the program version with
// the given step runs and counts into m.
func (u *upgradeLab) expectAllCounted(t *testing.T, m *ebpf.Map, step uint64) {
	t.Helper()
	for r, s := range u.peers {
		t.Logf("frames %s -> %s", s, r)
		expectCounted(t, u.ns, s, m, 3, step)
	}
}

func (u *upgradeLab) kernelPrograms(t *testing.T) map[string]ebpf.ProgramID {
	t.Helper()
	out := map[string]ebpf.ProgramID{}
	for ifname, mode := range u.modes {
		h := kernelHooks(t, u.ns, ifname)
		switch mode {
		case ModeTCX:
			if len(h.tcx) != 1 {
				t.Fatalf("%s: tcx programs %v, want exactly ours", ifname, h.tcx)
			}
			out[ifname] = h.tcx[0]
		case ModeTC:
			if len(h.filters) != 1 {
				t.Fatalf("%s: cls_bpf filters %v, want exactly ours", ifname, h.filterProgs())
			}
			out[ifname] = h.filterProgs()[0]
		default:
			out[ifname] = h.xdp
		}
	}
	return out
}

func progIDFor(t *testing.T, l *Loader, mode Mode) ebpf.ProgramID {
	t.Helper()
	if mode.IsXDP() {
		return programID(t, l.Program("xdp_router"))
	}
	return programID(t, l.Program("tc_router"))
}

func openPinned(t *testing.T, path string) *ebpf.Map {
	t.Helper()
	m, err := ebpf.LoadPinnedMap(path, nil)
	if err != nil {
		t.Fatalf("open pinned map %s: %v", path, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestAdoptAcrossRestart(t *testing.T) {
	requireRoot(t)
	u := newUpgradeLab(t)

	l1 := mustLoad(t, testOptions(u.ns, u.dir, defaultParams()))
	if r := l1.Report(); !slices.Equal(r.Created, []string{"iface_table", "vrf_counters"}) || len(r.Reused) != 0 || r.Adopted != 0 {
		t.Fatalf("first load report: %+v", r)
	}
	first := u.attachAll(t, l1)
	ifaceMap, countersMap := mapID(t, l1.Map("iface_table")), mapID(t, l1.Map("vrf_counters"))
	u.expectAllCounted(t, l1.Map("vrf_counters"), 1)
	if err := l1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// Closed: fds gone, but the pinned state keeps forwarding.
	u.expectAllCounted(t, openPinned(t, u.dir+"/vrf_counters"), 1)

	t.Run("same spec adopts everything unchanged", func(t *testing.T) {
		l2 := mustLoad(t, testOptions(u.ns, u.dir, defaultParams()))
		r := l2.Report()
		if !slices.Equal(r.Reused, []string{"iface_table", "vrf_counters"}) || len(r.Created) != 0 ||
			r.Adopted != 3 || r.Updated != 0 || len(r.ProgramsReplaced) != 0 || len(r.Migrated) != 0 {
			t.Fatalf("report: %+v", r)
		}
		if mapID(t, l2.Map("iface_table")) != ifaceMap || mapID(t, l2.Map("vrf_counters")) != countersMap {
			t.Fatal("maps were not reused")
		}
		for ifname, was := range first {
			now := attachmentOf(t, l2, ifname)
			if !now.Adopted || now.Mode != was.Mode || now.LinkID != was.LinkID || now.ProgramID != was.ProgramID {
				t.Fatalf("%s: adopted %+v, was %+v", ifname, now, was)
			}
			// The identical pinned program is reused, not a second copy.
			if progIDFor(t, l2, was.Mode) != was.ProgramID {
				t.Fatalf("%s: loader program %d, attached %d", ifname, progIDFor(t, l2, was.Mode), was.ProgramID)
			}
		}
		// Attach on adopted interfaces keeps their link / filter.
		for ifname, mode := range u.modes {
			a, err := l2.Attach(context.Background(), ifname, mode)
			if err != nil {
				t.Fatalf("re-Attach %s: %v", ifname, err)
			}
			if a.LinkID != first[ifname].LinkID || a.ProgramID != first[ifname].ProgramID {
				t.Fatalf("re-Attach %s re-created: %+v, was %+v", ifname, a, first[ifname])
			}
		}
		if err := l2.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	})

	t.Run("compatible upgrade updates programs in place", func(t *testing.T) {
		p := defaultParams()
		p.Step = 2
		l3 := mustLoad(t, testOptions(u.ns, u.dir, p))
		r := l3.Report()
		if !slices.Equal(r.Reused, []string{"iface_table", "vrf_counters"}) || r.Adopted != 3 || r.Updated != 3 ||
			!slices.Equal(r.ProgramsReplaced, []string{"tc_router", "xdp_router"}) {
			t.Fatalf("report: %+v", r)
		}
		if mapID(t, l3.Map("vrf_counters")) != countersMap {
			t.Fatal("counters map was re-created on a compatible upgrade")
		}
		kernel := u.kernelPrograms(t)
		for ifname, was := range first {
			now := attachmentOf(t, l3, ifname)
			want := progIDFor(t, l3, was.Mode)
			if now.LinkID != was.LinkID {
				t.Fatalf("%s: link re-created: %d -> %d", ifname, was.LinkID, now.LinkID)
			}
			if now.ProgramID == was.ProgramID || now.ProgramID != want || kernel[ifname] != want {
				t.Fatalf("%s: program %d (kernel %d), want new %d (old %d)", ifname, now.ProgramID, kernel[ifname], want, was.ProgramID)
			}
		}
		for _, name := range []string{"tc_router", "xdp_router"} {
			pinned, err := ebpf.LoadPinnedProgram(u.dir+"/progs/"+name, nil)
			if err != nil {
				t.Fatalf("pinned program %s: %v", name, err)
			}
			if programID(t, pinned) != programID(t, l3.Program(name)) {
				t.Fatalf("pin of %s not replaced", name)
			}
			pinned.Close()
		}
		u.expectAllCounted(t, l3.Map("vrf_counters"), 2)
	})
}

func TestMigrateIncompatibleMap(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name   string
		change func(*specParams)
	}{
		{"max entries", func(p *specParams) { p.IfaceMaxEntries = 64 }},
		{"value size", func(p *specParams) { p.IfaceValueSize = 16 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpgradeLab(t)
			ctx := context.Background()
			l1 := mustLoad(t, testOptions(u.ns, u.dir, defaultParams()))
			before := u.attachAll(t, l1)
			oldIface, oldCounters := mapID(t, l1.Map("iface_table")), mapID(t, l1.Map("vrf_counters"))
			oldProgs := u.kernelPrograms(t)
			if err := l1.Map("iface_table").Put(uint32(7), make([]byte, 8)); err != nil {
				t.Fatalf("seed old table: %v", err)
			}
			l1.Close()

			v2 := defaultParams()
			v2.Step = 2
			tt.change(&v2)

			// Unchanged state after any failed attempt.
			assertUntouched := func(t *testing.T) {
				t.Helper()
				if got := pinnedMapID(t, u.dir+"/iface_table"); got != oldIface {
					t.Fatalf("iface_table pin replaced (%d -> %d) by a failed migration", oldIface, got)
				}
				if got := u.kernelPrograms(t); !mapsEqual(got, oldProgs) {
					t.Fatalf("programs after failed migration %v, want old %v", got, oldProgs)
				}
				if _, err := os.Stat(u.dir + "-staging"); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("staging dir left: %v", err)
				}
				u.expectAllCounted(t, openPinned(t, u.dir+"/vrf_counters"), 1)
			}

			t.Run("without Rebuild nothing changes", func(t *testing.T) {
				_, err := Load(ctx, testOptions(u.ns, u.dir, v2))
				var ime *IncompatibleMapsError
				if !errors.Is(err, ErrRebuildRequired) || !errors.As(err, &ime) || !slices.Equal(ime.Maps, []string{"iface_table"}) {
					t.Fatalf("Load = %v, want IncompatibleMapsError{[iface_table]} wrapping ErrRebuildRequired", err)
				}
				assertUntouched(t)
			})

			t.Run("failing Rebuild changes nothing", func(t *testing.T) {
				opts := testOptions(u.ns, u.dir, v2)
				boom := errors.New("desired state unavailable")
				opts.Rebuild = func(context.Context, *ebpf.Collection) error { return boom }
				if _, err := Load(ctx, opts); !errors.Is(err, boom) {
					t.Fatalf("Load = %v, want %v", err, boom)
				}
				assertUntouched(t)
			})

			t.Run("failure after attach rolls programs back", func(t *testing.T) {
				opts := testOptions(u.ns, u.dir, v2)
				opts.Rebuild = func(context.Context, *ebpf.Collection) error { return nil }
				boom := errors.New("injected before pin swap")
				switched := false
				opts.hooks.beforePinSwap = func() error {
					switched = !mapsEqual(u.kernelPrograms(t), oldProgs)
					return boom
				}
				if _, err := Load(ctx, opts); !errors.Is(err, boom) {
					t.Fatalf("Load = %v, want %v", err, boom)
				}
				if !switched {
					t.Fatal("programs had not switched when the hook ran")
				}
				assertUntouched(t)
			})

			t.Run("migrates: rebuild, attach, then swap pins", func(t *testing.T) {
				opts := testOptions(u.ns, u.dir, v2)
				var fresh *ebpf.Collection
				opts.Rebuild = func(ctx context.Context, coll *ebpf.Collection) error {
					fresh = coll
					// Old program still attached, old pins in place.
					if got := u.kernelPrograms(t); !mapsEqual(got, oldProgs) {
						t.Errorf("programs switched before Rebuild: %v", got)
					}
					if got := pinnedMapID(t, u.dir+"/iface_table"); got != oldIface {
						t.Errorf("pins swapped before Rebuild")
					}
					return coll.Maps["iface_table"].Put(uint32(7), make([]byte, v2.IfaceValueSize))
				}
				hookRan := false
				opts.hooks.beforePinSwap = func() error {
					hookRan = true
					// New program attached everywhere, counting into the
					// new (still unpinned) counters; old pins untouched.
					want := map[string]ebpf.ProgramID{}
					for ifname, mode := range u.modes {
						name := "tc_router"
						if mode.IsXDP() {
							name = "xdp_router"
						}
						want[ifname] = programID(t, fresh.Programs[name])
					}
					if got := u.kernelPrograms(t); !mapsEqual(got, want) {
						t.Errorf("before pin swap: programs %v, want new %v", got, want)
					}
					if got := pinnedMapID(t, u.dir+"/iface_table"); got != oldIface {
						t.Errorf("before pin swap: iface_table pin already replaced")
					}
					u.expectAllCounted(t, fresh.Maps["vrf_counters"], 2)
					return nil
				}
				l2 := mustLoad(t, opts)
				if !hookRan || fresh == nil {
					t.Fatal("migration did not run Rebuild and the pre-swap hook")
				}
				r := l2.Report()
				if !slices.Equal(r.Migrated, []string{"iface_table"}) || r.Updated != 3 || r.Adopted != 3 {
					t.Fatalf("report: %+v", r)
				}
				newIface := mapID(t, l2.Map("iface_table"))
				if newIface == oldIface || pinnedMapID(t, u.dir+"/iface_table") != newIface {
					t.Fatalf("iface_table pin not replaced by the new map %d (old %d)", newIface, oldIface)
				}
				info, err := l2.Map("iface_table").Info()
				if err != nil || info.MaxEntries != v2.IfaceMaxEntries || info.ValueSize != v2.IfaceValueSize {
					t.Fatalf("new iface_table %+v (%v), want max %d value %d", info, err, v2.IfaceMaxEntries, v2.IfaceValueSize)
				}
				val := make([]byte, v2.IfaceValueSize)
				if err := l2.Map("iface_table").Lookup(uint32(7), val); err != nil {
					t.Fatalf("rebuilt entry missing from pinned table: %v", err)
				}
				newCounters := mapID(t, l2.Map("vrf_counters"))
				if newCounters == oldCounters || pinnedMapID(t, u.dir+"/vrf_counters") != newCounters {
					t.Fatal("counters were not re-created and re-pinned")
				}
				for ifname, was := range before {
					now := attachmentOf(t, l2, ifname)
					if now.LinkID != was.LinkID || now.ProgramID != progIDFor(t, l2, was.Mode) || now.Pin != was.Pin {
						t.Fatalf("%s: after migration %+v, before %+v", ifname, now, was)
					}
				}
				if _, err := os.Stat(u.dir + "-staging"); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("staging dir left: %v", err)
				}
				u.expectAllCounted(t, l2.Map("vrf_counters"), 2)
				l2.Close()

				// The migrated state is adopted as is on the next start.
				l3 := mustLoad(t, testOptions(u.ns, u.dir, v2))
				if r := l3.Report(); len(r.Migrated) != 0 || r.Adopted != 3 || r.Updated != 0 || len(r.Created) != 0 {
					t.Fatalf("load after migration: %+v", r)
				}
			})
		})
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
