package loader

import "sync"

// ifaceLocks serialises the operations on one interface while those on different interfaces run in parallel.
type ifaceLocks struct {
	mu   sync.Mutex
	held map[string]*ifaceLock // by interface name, while locked or waited for
}

type ifaceLock struct {
	mu    sync.Mutex
	users int // holder and waiters; the entry goes when the last one unlocks
}

// lock blocks until the caller holds ifname's lock and returns its unlock.
func (k *ifaceLocks) lock(ifname string) (unlock func()) {
	k.mu.Lock()
	il := k.held[ifname]
	if il == nil {
		il = &ifaceLock{}
		k.held[ifname] = il
	}
	il.users++
	k.mu.Unlock()
	il.mu.Lock()
	return func() {
		il.mu.Unlock()
		k.mu.Lock()
		il.users--
		if il.users == 0 {
			delete(k.held, ifname)
		}
		k.mu.Unlock()
	}
}
