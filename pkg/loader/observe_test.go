package loader

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// observed is what a dry run needs of an attachment, to compare Observe with Load's adoption.
type observed struct {
	Interface string
	Ifindex   int
	Mode      Mode
	ProgramID uint32
	LinkID    uint32
	Pin       string
}

func observedOf(atts []Attachment) map[string]observed {
	out := map[string]observed{}
	for _, a := range atts {
		out[a.Interface] = observed{a.Interface, a.Ifindex, a.Mode, uint32(a.ProgramID), uint32(a.LinkID), a.Pin}
	}
	return out
}

func mustObserve(t *testing.T, ns netns.NsHandle, dir string) []Attachment {
	t.Helper()
	atts, err := Observe(context.Background(), Options{PinDir: dir, NetNS: ns})
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return atts
}

func renameLink(t *testing.T, ns netns.NsHandle, from, to string) {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("netlink handle: %v", err)
	}
	defer h.Close()
	l, err := h.LinkByName(from)
	if err == nil {
		err = h.LinkSetDown(l)
	}
	if err == nil {
		err = h.LinkSetName(l, to)
	}
	if err == nil {
		err = h.LinkSetUp(l)
	}
	if err != nil {
		t.Fatalf("rename %s to %s: %v", from, to, err)
	}
}

// Observe lists, read-only, exactly what the next Load adopts - tcx, legacy tc and XDP attachments, a renamed
// interface under its new name, no defunct link - and creates, moves or removes nothing.
func TestObserveIsWhatLoadAdopts(t *testing.T) {
	requireRoot(t)
	u := newUpgradeLab(t)

	if atts := mustObserve(t, u.ns, u.dir); len(atts) != 0 {
		t.Fatalf("nothing pinned yet: observed %+v", atts)
	}
	if _, err := os.Stat(u.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Observe created the pin dir: %v", err)
	}

	l1 := mustLoad(t, testOptions(u.ns, u.dir, defaultParams()))
	first := u.attachAll(t, l1)
	if got, want := observedOf(mustObserve(t, u.ns, u.dir)), observedOf(l1.Attachments()); !mapsEqual(got, want) {
		t.Fatalf("observed while loaded %+v, want %+v", got, want)
	}
	l1.Close()

	// r0's device goes away (its tcx link is defunct) and r2 (xdp) is renamed r9.
	delLink(t, u.ns, "r0")
	renameLink(t, u.ns, "r2", "r9")
	atts := mustObserve(t, u.ns, u.dir)
	got := observedOf(atts)
	if _, ok := got["r0"]; ok || len(got) != 2 {
		t.Fatalf("observed %+v, want r1 and r9 only", got)
	}
	if r9 := got["r9"]; r9.LinkID != uint32(first["r2"].LinkID) || r9.Mode != first["r2"].Mode || r9.Pin == first["r2"].Pin {
		t.Fatalf("renamed r2: observed %+v, was %+v", r9, first["r2"])
	}
	for _, pin := range []string{first["r0"].Pin, first["r2"].Pin} {
		if _, err := os.Stat(pin); err != nil {
			t.Fatalf("Observe changed the pins: %s: %v", pin, err)
		}
	}
	for _, a := range atts {
		if !a.Adopted || a.Reason == "" || a.Program == "" {
			t.Fatalf("observed %+v: want it described like an adopted attachment", a)
		}
	}

	// The next Load tidies up and adopts exactly what Observe listed.
	l2 := mustLoad(t, testOptions(u.ns, u.dir, defaultParams()))
	if adopted := observedOf(l2.Attachments()); !mapsEqual(adopted, got) {
		t.Fatalf("Load adopted %+v, Observe listed %+v", adopted, got)
	}
	if _, err := os.Stat(got["r9"].Pin); err != nil {
		t.Fatalf("Load did not move the pin where Observe said: %v", err)
	}
	if got, want := observedOf(mustObserve(t, u.ns, u.dir)), observedOf(l2.Attachments()); !mapsEqual(got, want) {
		t.Fatalf("observed after Load %+v, want %+v", got, want)
	}
}

func TestDefunct(t *testing.T) {
	a := Attachment{Interface: "eth0", Ifindex: 4}
	if a.Defunct(4) || !a.Defunct(9) || !a.Defunct(0) {
		t.Fatalf("Defunct(4, 9, 0) = %t %t %t, want false true true", a.Defunct(4), a.Defunct(9), a.Defunct(0))
	}
}
