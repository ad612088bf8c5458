// Package netnsrun runs code inside a network namespace.
//
// Netlink sockets, ethtool ioctls and tcx/XDP link creation all take the
// calling thread's namespace, so the code has to run on one OS thread that is
// switched into the namespace and back.
package netnsrun

import (
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
		if err := netns.Set(ns); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter netns %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: the runtime discards it when this
			// goroutine ends, so no other goroutine runs in ns by accident.
			errc <- fmt.Errorf("restore netns: %w (after: %v)", err, ferr)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}
