package loader

import (
	"context"
	"testing"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/maps"
)

// Costs of the loader's operations with the real router (root).
// go test -run '^$' -bench . ./pkg/loader/

func BenchmarkLoadRouter(b *testing.B) {
	requireRoot(b)
	ctx := context.Background()
	b.Run("fresh", func(b *testing.B) {
		ns := newNS(b)
		for b.Loop() {
			l, err := Load(ctx, Options{PinDir: newPinDir(b), NetNS: ns})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Remove(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adopt-3-attachments", func(b *testing.B) {
		u := newUpgradeLab(b)
		l := mustLoad(b, Options{PinDir: u.dir, NetNS: u.ns})
		u.attachAll(b, l)
		l.Close()
		for b.Loop() {
			l, err := Load(ctx, Options{PinDir: u.dir, NetNS: u.ns})
			if err != nil {
				b.Fatal(err)
			}
			if r := l.Report(); r.Adopted != 3 || r.Updated != 0 {
				b.Fatalf("report %+v", r)
			}
			l.Close()
		}
	})
}

// BenchmarkMigrateRouter: every Load meets an incompatible redirect_table
// (the size alternates), rebuilds the tables and switches 3 attachments.
func BenchmarkMigrateRouter(b *testing.B) {
	requireRoot(b)
	ctx := context.Background()
	u := newUpgradeLab(b)
	l := mustLoad(b, Options{PinDir: u.dir, NetNS: u.ns})
	u.attachAll(b, l)
	l.Close()
	tables := passTables(b, u.ns, []string{"r0", "r1", "r2"})
	rebuild := RebuildTables(func(context.Context) (maps.Tables, string, error) { return tables, "bench", nil })
	grow := true
	for b.Loop() {
		spec, err := bpf.LoadRouter()
		if err != nil {
			b.Fatal(err)
		}
		if grow {
			spec.Maps["redirect_table"].MaxEntries *= 2
		}
		grow = !grow
		l, err := Load(ctx, Options{Spec: spec, PinDir: u.dir, NetNS: u.ns, Rebuild: rebuild})
		if err != nil {
			b.Fatal(err)
		}
		if r := l.Report(); len(r.Migrated) != 1 || r.Updated != 3 {
			b.Fatalf("report %+v", r)
		}
		l.Close()
	}
}

func BenchmarkAttachDetach(b *testing.B) {
	requireRoot(b)
	ctx := context.Background()
	for _, mode := range []Mode{ModeTCX, ModeTC, ModeXDPGeneric, ModeXDPNative} {
		b.Run(string(mode), func(b *testing.B) {
			ns := newNS(b)
			addVeth(b, ns, "a0", "b0")
			l := mustLoad(b, Options{PinDir: newPinDir(b), NetNS: ns})
			for b.Loop() {
				if _, err := l.Attach(ctx, "a0", mode); err != nil {
					skipIfNotSupported(b, err)
					b.Fatal(err)
				}
				if err := l.Detach(ctx, "a0"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
