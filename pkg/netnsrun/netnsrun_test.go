package netnsrun

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/testreq"
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

// TestOnThreadRestoresEveryThread moves the thread into a fresh namespace many times: afterwards no thread of
// the process, the main thread (whose namespace /proc/self shows) included, is left there.
func TestOnThreadRestoresEveryThread(t *testing.T) {
	testreq.Root(t) // unshare(CLONE_NEWNET)
	self := func() string {
		s, err := os.Readlink("/proc/self/ns/net")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := self()
	for i := range 50 {
		var inside string
		err := OnThread(func() error {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return err
			}
			var err error
			inside, err = os.Readlink("/proc/thread-self/ns/net")
			return err
		})
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if inside == before {
			t.Fatalf("round %d: fn did not run in a new namespace", i)
		}
		if now := self(); now != before {
			t.Fatalf("round %d: the main thread is in %s, want %s", i, now, before)
		}
	}
	// Every thread the runtime hands out again is in the original namespace.
	for range 20 {
		err := OnThread(func() error {
			now, err := os.Readlink("/proc/thread-self/ns/net")
			if err == nil && now != before {
				err = fmt.Errorf("a reused thread is in %s, want %s", now, before)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestHere runs fn on the caller's goroutine inside the namespace and switches back, also when fn ends the
// goroutine the way testing.T.FailNow does.
func TestHere(t *testing.T) {
	testreq.Root(t) // creating a network namespace
	threadNS := func() string {
		s, err := os.Readlink("/proc/thread-self/ns/net")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var target netns.NsHandle
	err := OnThread(func() error {
		var err error
		target, err = netns.New() // switches the helper thread; OnThread switches it back
		return err
	})
	testreq.Need(t, "a new network namespace", err)
	defer target.Close()
	var want string
	if err := Run(target, func() error { want = threadNS(); return nil }); err != nil {
		t.Fatal(err)
	}

	runtime.LockOSThread() // keep this goroutine on one thread to compare before and after
	before := threadNS()
	var inside string
	if err := Here(target, func() error { inside = threadNS(); return nil }); err != nil {
		t.Fatal(err)
	}
	after := threadNS()
	runtime.UnlockOSThread()
	if inside != want || after != before {
		t.Fatalf("fn ran in %s (want %s); thread afterwards in %s (want %s)", inside, want, after, before)
	}

	sentinel := errors.New("from fn")
	if err := Here(target, func() error { return sentinel }); !errors.Is(err, sentinel) || errors.Is(err, ErrThreadStuck) {
		t.Fatalf("Here returned %v, want fn's error only", err)
	}

	// fn ends its goroutine (runtime.Goexit, as FailNow does): the deferred switch back still runs.
	done := make(chan string)
	go func() {
		runtime.LockOSThread()
		defer func() { done <- threadNS() }()
		_ = Here(target, func() error { runtime.Goexit(); return nil })
	}()
	if got := <-done; got != before {
		t.Fatalf("after Goexit inside Here the thread is in %s", got)
	}
	if got := threadNS(); got != before {
		t.Fatalf("test goroutine's thread in %s, want %s", got, before)
	}
}
