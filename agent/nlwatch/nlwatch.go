// Package nlwatch tells whether a network namespace may have changed since the last look, from the kernel's own
// rtnetlink change notifications: the agent's resyncs of a quiet node then reuse their last read of it instead
// of dumping every link, qdisc or route again (a read of a node with 4000 links costs ~150 ms, most of it the
// kernel building the dump).
//
// The socket is drained only when asked (Quiet): the kernel queues a notification on the socket before the
// change's netlink request returns, so every change that completed before Quiet is seen by it. When the queue
// overflowed (ENOBUFS) notifications were lost, and Quiet reports a change.
package nlwatch

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// DefaultBuffer is the socket's receive buffer: room for the notifications of a busy second (zebra installing
// routes) so that a normal burst does not overflow it; an overflow only costs one full read.
const DefaultBuffer = 4 << 20

// Watch is a subscription to rtnetlink groups of one namespace.
type Watch struct {
	mu       sync.Mutex
	sock     *nl.NetlinkSocket
	concerns func(*syscall.NetlinkMessage) bool
	buf      []byte
	closed   bool
}

// New subscribes to groups (unix.RTNLGRP_*) in namespace ns (0: the caller's) with a receive buffer of buffer
// bytes. concerns says whether a notification is a change for the caller (nil: every one is).
func New(ns netns.NsHandle, buffer int, concerns func(*syscall.NetlinkMessage) bool, groups ...uint) (*Watch, error) {
	if ns == 0 {
		ns = netns.None()
	}
	sock, err := nl.SubscribeAt(ns, netns.None(), unix.NETLINK_ROUTE, groups...)
	if err != nil {
		return nil, fmt.Errorf("subscribe to netlink changes: %w", err)
	}
	fd := sock.GetFd()
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, buffer); err != nil {
		// Without CAP_NET_ADMIN the kernel caps the size at rmem_max; a smaller buffer overflows sooner.
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, buffer)
	}
	if concerns == nil {
		concerns = func(*syscall.NetlinkMessage) bool { return true }
	}
	return &Watch{sock: sock, concerns: concerns, buf: make([]byte, 1<<16)}, nil
}

// ErrClosed is returned by Quiet after Close.
var ErrClosed = errors.New("netlink watch closed")

// Quiet drains the queued notifications and reports whether none of them concerns the caller. An error (the
// socket broke, or the watch is closed) counts as a change.
func (w *Watch) Quiet() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false, ErrClosed
	}
	quiet := true
	for {
		n, _, err := unix.Recvfrom(w.sock.GetFd(), w.buf, unix.MSG_DONTWAIT)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return quiet, nil
		case errors.Is(err, unix.ENOBUFS):
			quiet = false // notifications were lost; the queue is usable again
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return false, fmt.Errorf("read netlink changes: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(w.buf[:n])
		if err != nil {
			return false, fmt.Errorf("parse netlink changes: %w", err)
		}
		for i := range msgs {
			if t := msgs[i].Header.Type; t != unix.NLMSG_DONE && t != unix.NLMSG_NOOP && w.concerns(&msgs[i]) {
				quiet = false
			}
		}
	}
}

// Close ends the subscription (the socket holds a reference on its namespace); a second Close does nothing.
func (w *Watch) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		w.sock.Close()
	}
}

// Memo keeps the last read of a namespace for as long as the kernel notifies no change concerning it. The zero
// Memo reads every time; Start makes it watch.
type Memo[T any] struct {
	mu    sync.Mutex
	watch *Watch
	last  T
	have  bool
}

// Start subscribes as New does; from then on Read hands out the last read while the watch stays quiet. stop
// ends the subscription (a second call does nothing), after which Read reads every time again.
func (m *Memo[T]) Start(ns netns.NsHandle, buffer int, concerns func(*syscall.NetlinkMessage) bool, groups ...uint) (stop func(), err error) {
	w, err := New(ns, buffer, concerns, groups...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.watch, m.have = w, false
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.watch == w {
			m.watch, m.have = nil, false
		}
		w.Close()
	}, nil
}

// Read returns the last read when the watch notified no change since it began and reusable(last) holds (nil:
// always), else a new read, which is kept when the watch runs. reused says which; a reused value is shared and
// must not be modified. The queue is drained before a new read, so a change during it is seen by the next call.
func (m *Memo[T]) Read(read func() (T, error), reusable func(T) bool) (v T, reused bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watch == nil {
		v, err = read()
		return v, false, err
	}
	quiet, err := m.watch.Quiet()
	if err != nil {
		return v, false, err
	}
	if quiet && m.have && (reusable == nil || reusable(m.last)) {
		return m.last, true, nil
	}
	m.have = false
	if v, err = read(); err != nil {
		return v, false, err
	}
	m.last, m.have = v, true
	return v, false, nil
}
