package netnstest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// foreignState is what other owners attached to one interface.
type foreignState struct {
	XDPProg  uint32           // netlink XDP program id
	Filters  []tcFilter       // clsact ingress cls_bpf filters
	TCXProgs []ebpf.ProgramID // programs on the tcx ingress hook
}

// tcFilter is one cls_bpf filter on clsact ingress.
type tcFilter struct {
	Prio   uint16
	Handle uint32
	Prog   ebpf.ProgramID
	Name   string
}

func (s foreignState) String() string {
	return fmt.Sprintf("xdp %d, tc filters %+v, tcx %v", s.XDPProg, s.Filters, s.TCXProgs)
}

// TestForeignAttachmentsSurvive: another owner's XDP program, cls_bpf filter (clsact ingress) and tcx program on
// r's interfaces stay exactly as they were while we attach (tcx or legacy tc), forward, and detach; a forced XDP
// attach refuses to replace the foreign XDP program.
func TestForeignAttachmentsSurvive(t *testing.T) {
	for _, mode := range []loader.Mode{loader.ModeTCX, loader.ModeTC} {
		t.Run(string(mode), func(t *testing.T) { checkForeignSurvive(t, mode) })
	}
}

func checkForeignSurvive(t *testing.T, mode loader.Mode) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := lab.New(t)
	l.MustBuild(ctx, lineTopology(lineOptions{}))
	a, r := l.NS("a"), l.NS("r")
	ifaces := []string{"ra", "rb"}
	foreignPins := l.MustPinDir()
	installForeign(ctx, t, r, foreignPins, ifaces)
	want := map[string]foreignState{}
	for _, ifn := range ifaces {
		want[ifn] = readForeign(t, r, ifn)
		t.Logf("%s before: %s", ifn, want[ifn])
	}
	same := func(stage string, ours func(ifn string, s foreignState) error) {
		t.Helper()
		for _, ifn := range ifaces {
			got := readForeign(t, r, ifn)
			for _, f := range want[ifn].Filters {
				if !slices.Contains(got.Filters, f) {
					t.Errorf("%s: %s lost foreign tc filter %+v (now %+v)", stage, ifn, f, got.Filters)
				}
			}
			for _, p := range want[ifn].TCXProgs {
				if !slices.Contains(got.TCXProgs, p) {
					t.Errorf("%s: %s lost foreign tcx program %d (now %v)", stage, ifn, p, got.TCXProgs)
				}
			}
			if got.XDPProg != want[ifn].XDPProg {
				t.Errorf("%s: %s XDP program %d, want the foreign %d", stage, ifn, got.XDPProg, want[ifn].XDPProg)
			}
			if err := ours(ifn, got); err != nil {
				t.Errorf("%s: %s: %v", stage, ifn, err)
			}
		}
	}

	rt := loadRouter(t, r, l.MustPinDir(), loader.Options{})
	atts := map[string]loader.Attachment{}
	for _, att := range rt.attach(t, mode, ifaces...) {
		atts[att.Interface] = att
	}
	rt.apply(t, lineTables(t, r, tableMain, ifaces...), "foreign")
	pingOK(ctx, t, a, hostB4, 5)
	same("attached", func(ifn string, s foreignState) error {
		id := atts[ifn].ProgramID
		if mode == loader.ModeTC && !slices.ContainsFunc(s.Filters, func(f tcFilter) bool { return f.Prog == id }) {
			return fmt.Errorf("our filter (program %d) missing from %v", id, s.Filters)
		}
		if mode == loader.ModeTCX && !slices.Contains(s.TCXProgs, id) {
			return fmt.Errorf("our tcx program %d missing from %v", id, s.TCXProgs)
		}
		return nil
	})

	// A forced XDP attach must not replace the foreign XDP program.
	for _, m := range []loader.Mode{loader.ModeXDPNative, loader.ModeXDPGeneric} {
		_, err := rt.ldr.Attach(ctx, "ra", m)
		if !errors.Is(err, loader.ErrForeignXDP) {
			t.Errorf("attach %s over a foreign XDP program: %v, want ErrForeignXDP", m, err)
		}
	}

	if err := rt.ldr.DetachAll(ctx); err != nil {
		t.Fatal(err)
	}
	pingFails(ctx, t, a, hostB4)
	same("detached", func(ifn string, s foreignState) error {
		id := atts[ifn].ProgramID
		if slices.ContainsFunc(s.Filters, func(f tcFilter) bool { return f.Prog == id }) || slices.Contains(s.TCXProgs, id) {
			return fmt.Errorf("our program %d still attached: %s", id, s)
		}
		return nil
	})
}

// installForeign puts another owner's programs on each interface: XDP_PASS (native, netlink), a cls_bpf
// direct-action filter at prio 1 handle 1 added with tc(8) from a pinned program, and a tcx program; the tc ones
// return "continue" so the router behind them still decides.
func installForeign(ctx context.Context, t *testing.T, ns *lab.Netns, pinDir string, ifaces []string) {
	t.Helper()
	xdp, err := lab.NewXDPPass()
	if err != nil {
		t.Fatal(err)
	}
	defer xdp.Close()
	cls, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "foreign_tc", Type: ebpf.SchedCLS, License: "GPL",
		// TC_ACT_UNSPEC (-1): next filter / next tcx program.
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, -1), asm.Return()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cls.Close()
	clsPin := filepath.Join(pinDir, "foreign_tc")
	if err := cls.Pin(clsPin); err != nil {
		t.Fatal(err)
	}
	for _, ifn := range ifaces {
		if err := ns.AttachXDP(ifn, xdp, lab.XDPNative); err != nil {
			t.Fatal(err)
		}
		if _, err := ns.Output(ctx, "tc", "qdisc", "add", "dev", ifn, "clsact"); err != nil {
			t.Fatal(err)
		}
		if _, err := ns.Output(ctx, "tc", "filter", "add", "dev", ifn, "ingress", "prio", "1", "handle", "1",
			"bpf", "object-pinned", clsPin, "direct-action"); err != nil {
			t.Fatal(err)
		}
		idx, err := ns.Ifindex(ifn)
		if err != nil {
			t.Fatal(err)
		}
		err = ns.Do(func() error {
			lnk, err := link.AttachTCX(link.TCXOptions{Interface: idx, Program: cls, Attach: ebpf.AttachTCXIngress})
			if err != nil {
				return err
			}
			defer lnk.Close()
			return lnk.Pin(filepath.Join(pinDir, "foreign_tcx_"+ifn))
		})
		if errors.Is(err, link.ErrNotSupported) {
			testreq.KernelLacks(t, "tcx", err)
		}
		if err != nil {
			t.Fatalf("foreign tcx on %s: %v", ifn, err)
		}
	}
}

func readForeign(t *testing.T, ns *lab.Netns, ifn string) foreignState {
	t.Helper()
	var s foreignState
	var err error
	if s.XDPProg, _, err = ns.XDPProgID(ifn); err != nil {
		t.Fatal(err)
	}
	lnk, err := ns.Link(ifn)
	if err != nil {
		t.Fatal(err)
	}
	filters, err := ns.Handle().FilterList(lnk, netlink.HANDLE_MIN_INGRESS)
	if err != nil {
		t.Fatalf("list tc filters of %s: %v", ifn, err)
	}
	for _, f := range filters {
		if bf, ok := f.(*netlink.BpfFilter); ok {
			s.Filters = append(s.Filters, tcFilter{bf.Priority, bf.Handle, ebpf.ProgramID(bf.Id), bf.Name})
		}
	}
	err = ns.Do(func() error {
		res, err := link.QueryPrograms(link.QueryOptions{Target: lnk.Attrs().Index, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			return err
		}
		for _, p := range res.Programs {
			s.TCXProgs = append(s.TCXProgs, p.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("query tcx programs of %s: %v", ifn, err)
	}
	return s
}
