package netnsrun

import (
	"errors"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/internal/testreq"
)

func TestRunSwitchesAndRestores(t *testing.T) {
	testreq.Root(t) // creating a network namespace
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	target, err := netns.New() // also switches this thread; switch back at once
	testreq.Need(t, "a new network namespace", err)
	defer target.Close()
	if err := netns.Set(orig); err != nil {
		t.Fatal(err)
	}
	runtime.UnlockOSThread()

	var inside netns.NsHandle
	err = Run(target, func() error {
		h, err := netns.Get()
		inside = h
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer inside.Close()
	if !inside.Equal(target) {
		t.Fatalf("fn ran in %s, want %s", inside, target)
	}
	now, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer now.Close()
	if !now.Equal(orig) {
		t.Fatalf("caller's thread left in %s, want %s", now, orig)
	}

	sentinel := errors.New("from fn")
	if err := Run(target, func() error { return sentinel }); !errors.Is(err, sentinel) {
		t.Fatalf("Run returned %v, want fn's error", err)
	}
}

func TestRunWithoutNamespaceRunsInPlace(t *testing.T) {
	ran := false
	if err := Run(0, func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("Run(0): ran=%v err=%v", ran, err)
	}
}
