package loader

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// inNetNS runs fn with the OS thread in ns. Netlink sockets, ethtool ioctls
// and tcx/XDP link creation all take the calling thread's namespace, so the
// whole of fn runs on one locked thread. A zero or closed handle runs fn on
// the caller's thread unchanged.
func inNetNS(ns netns.NsHandle, fn func() error) error {
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
