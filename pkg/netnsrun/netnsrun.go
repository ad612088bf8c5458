// Package netnsrun runs code inside a network namespace.
//
// Netlink sockets, ethtool ioctls and tcx/XDP link creation all take the
// calling thread's namespace, so the code has to run on one OS thread that is
// switched into the namespace and back.
package netnsrun

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Run runs fn on a fresh goroutine locked to an OS thread inside ns and
// returns fn's error. A zero or negative handle runs fn on the caller's
// thread unchanged. Goroutines that fn starts do not run in ns.
func Run(ns netns.NsHandle, fn func() error) error {
	if ns <= 0 {
		return fn()
	}
	return OnThread(func() error {
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("enter netns %s: %w", ns, err)
		}
		return fn()
	})
}

// OnThread runs fn on a fresh goroutine locked to an OS thread and returns
// fn's error. fn may move the thread into other network namespaces
// (netns.Set, unshare(CLONE_NEWNET)); afterwards the thread is switched back
// to the namespace it started in. If that fails the thread stays locked, so
// the runtime discards it when the goroutine ends and no other goroutine
// runs in the wrong namespace. (Switching back matters even for a throw-away
// thread: it may be the main thread, which the runtime never discards and
// whose namespace is the one /proc/self shows.)
func OnThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("get current netns: %w", err)
			return
		}
		defer orig.Close()
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("restore netns: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// ErrThreadStuck says that the thread could not be switched back to its namespace after fn: the calling
// goroutine stays locked to it (the runtime discards the thread when the goroutine ends), and code that goes on
// running on this goroutine runs in the wrong namespace. A caller should stop (a test: fail).
var ErrThreadStuck = errors.New("thread left in another network namespace")

// Here runs fn on the calling goroutine, locked to its OS thread inside ns, and switches the thread back. Unlike
// Run, fn may call testing.T's FailNow (it must run on the test's goroutine); prefer Run elsewhere. When the
// switch back fails the error wraps ErrThreadStuck.
func Here(ns netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current netns: %w", err)
	}
	defer orig.Close()
	restored := false
	defer func() {
		// Also on runtime.Goexit (FailNow) or a panic inside fn.
		if !restored {
			if netns.Set(orig) == nil {
				runtime.UnlockOSThread()
			}
		}
	}()
	if err := netns.Set(ns); err != nil {
		restored = true
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", ns, err)
	}
	ferr := fn()
	restored = true
	if err := netns.Set(orig); err != nil {
		return errors.Join(ferr, fmt.Errorf("%w: %w", ErrThreadStuck, err))
	}
	runtime.UnlockOSThread()
	return ferr
}
