package netnstest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestProcessRestartKeepsForwarding: one process loads, attaches and applies, then dies (SIGKILL) while a flow
// runs; traffic keeps flowing with no process at all; a second process adopts the pinned state and exits. No
// packet is lost, and the attachments are the very same kernel links (same link and program IDs).
func TestProcessRestartKeepsForwarding(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l := lab.New(t)
	l.MustBuild(ctx, lineTopology(lineOptions{}))
	a, r, b := l.NS("a"), l.NS("r"), l.NS("b")
	if tcHook(t, r) != loader.ModeTCX {
		testreq.KernelLacks(t, "tcx (6.6): the test follows pinned tcx links across processes", errors.New("no tcx attach type"))
	}
	assertKernelForwardingOff(t, r, "ra", "rb")
	pinDir := l.MustPinDir()
	cfg := helperConfig{
		Netns:      r.Path,
		PinDir:     pinDir,
		Interfaces: []string{"ra", "rb"},
		Tables:     lineTables(t, r, tableMain, "ra", "rb"),
		Revision:   "restart",
		WaitStdin:  true,
	}

	first := startHelper(ctx, t, cfg)
	if first.report.Load.Adopted != 0 || len(first.report.Load.Created) == 0 {
		t.Fatalf("first process: load report %+v, want fresh maps and nothing adopted", first.report.Load)
	}
	links := map[string]loader.Attachment{}
	for _, att := range first.report.Attachments {
		if att.LinkID == 0 {
			t.Fatalf("first process: attachment %+v has no link ID (want a pinned tcx link)", att)
		}
		links[att.Interface] = att
	}

	flow, err := lab.StartFlow(ctx, lab.FlowOptions{From: a, To: b, Dst: hostB4, Rate: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if err := flow.WaitReceived(ctx, 200, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	first.kill(t)
	// Nobody holds a file descriptor now: only the pins keep the router attached.
	if err := flow.WaitReceived(ctx, 400, 5*time.Second); err != nil {
		t.Fatalf("after the first process died: %v", err)
	}

	cfg.WaitStdin = false
	second := startHelper(ctx, t, cfg)
	second.wait(t)
	rep := second.report
	if rep.Load.Adopted != len(links) || len(rep.Load.Created) != 0 || len(rep.Load.ProgramsReplaced) != 0 {
		t.Errorf("second process: load report %+v, want %d adopted attachments, no new maps or programs", rep.Load, len(links))
	}
	if !rep.Apply.NoOp {
		t.Errorf("second process: apply of the same tables was not a no-op: %s", rep.Apply)
	}
	for _, att := range rep.Attachments {
		old := links[att.Interface]
		if !att.Adopted || att.LinkID != old.LinkID || att.ProgramID != old.ProgramID || att.Ifindex != old.Ifindex {
			t.Errorf("%s: after restart link %d prog %d ifindex %d adopted=%v, before link %d prog %d ifindex %d",
				att.Interface, att.LinkID, att.ProgramID, att.Ifindex, att.Adopted, old.LinkID, old.ProgramID, old.Ifindex)
		}
		// The pin itself still names the same kernel link.
		pinned, err := link.LoadPinnedLink(att.Pin, nil)
		if err != nil {
			t.Fatalf("open pinned link %s: %v", att.Pin, err)
		}
		info, err := pinned.Info()
		pinned.Close()
		if err != nil {
			t.Fatal(err)
		}
		if info.ID != old.LinkID {
			t.Errorf("%s: pinned link id %d, want %d", att.Interface, info.ID, old.LinkID)
		}
	}
	if err := flow.WaitReceived(ctx, 200, 5*time.Second); err != nil {
		t.Fatalf("after the second process exited: %v", err)
	}
	res, err := flow.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("flow across kill + adopt: %s", res)
	if !res.Clean() {
		t.Errorf("flow across process restarts not clean: %s", res)
	}

	// The counters lived in the pinned maps the whole time: they hold every packet of the flow (UDP one way, TCP
	// both ways).
	rt := loadRouter(t, r, pinDir, loader.Options{})
	if got := rt.counter(t, vrfID, maps.ReasonForwardedFib).Packets; got < res.Received {
		t.Errorf("forwarded-fib %d packets, want at least the %d flow packets", got, res.Received)
	}
}
