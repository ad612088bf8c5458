package lab

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// FlowOptions describe a test flow from one namespace to an address in another.
type FlowOptions struct {
	From, To *Netns
	Dst      netip.Addr // receiver address, configured in To
	Rate     int        // UDP packets per second; default 2000
	Size     int        // UDP payload bytes, at least 16; default 64
	// TCPRate is the rate of 8-byte messages over one TCP connection echoed back by To; default 100,
	// negative disables the TCP check.
	TCPRate int
}

// FlowResult counts what the receiver saw. UDP shows every loss (no retransmits); TCP shows the connection
// stayed healthy (every message echoed in order, no error) and how long the worst round trip took.
type FlowResult struct {
	Sent, Received uint64 // UDP packets; Received counts unique sequence numbers
	Lost           uint64 // Sent - Received
	Duplicates     uint64
	Reordered      uint64 // arrived after a higher sequence number
	LongestGap     uint64 // longest run of consecutive lost sequence numbers
	Interval       time.Duration
	// ReceiverDrops is the growth of UDP RcvbufErrors+InErrors in the receiving namespace: losses that happened
	// in the receiving socket, not on the path.
	ReceiverDrops uint64

	TCPSent, TCPEchoed uint64
	TCPMaxRTT          time.Duration
	TCPErr             error
}

func (r FlowResult) String() string {
	s := fmt.Sprintf("udp sent=%d received=%d lost=%d dup=%d reordered=%d longest-gap=%d (~%v) receiver-drops=%d",
		r.Sent, r.Received, r.Lost, r.Duplicates, r.Reordered, r.LongestGap,
		time.Duration(r.LongestGap)*r.Interval, r.ReceiverDrops)
	if r.TCPSent > 0 || r.TCPErr != nil {
		s += fmt.Sprintf("; tcp sent=%d echoed=%d max-rtt=%v err=%v", r.TCPSent, r.TCPEchoed, r.TCPMaxRTT, r.TCPErr)
	}
	return s
}

// Clean reports whether nothing was lost, duplicated or broken.
func (r FlowResult) Clean() bool {
	return r.Sent > 0 && r.Lost == 0 && r.Duplicates == 0 && r.TCPErr == nil && r.TCPEchoed == r.TCPSent
}

const flowMagic = 0x6c616246 // "Flab"

// Flow is a running test flow; Stop it to get the result.
type Flow struct {
	opts     FlowOptions
	interval time.Duration

	udpRx, udpTx *net.UDPConn
	tcpLn        net.Listener
	tcpC         net.Conn
	// tcpSrv is the echo server's end: closed by Stop too, as a path broken at the end would keep the client's
	// FIN from ever reaching it.
	tcpSrv net.Conn

	stopSend  chan struct{}
	senderWG  sync.WaitGroup
	receivers sync.WaitGroup

	sent atomic.Uint64

	mu                   sync.Mutex
	seen                 []uint64 // bitmap of received sequence numbers
	received, dup, reord uint64
	maxSeq               uint64
	anyRx                bool

	tcpSent, tcpEchoed atomic.Uint64
	tcpMu              sync.Mutex
	tcpSendTimes       map[uint64]time.Time
	tcpMaxRTT          time.Duration
	tcpErr             error

	snmpBefore uint64
	stopOnce   sync.Once
	stopped    atomic.Bool
}

// StartFlow opens the sockets (receiver in To, sender in From) and starts sending at once.
func StartFlow(ctx context.Context, o FlowOptions) (*Flow, error) {
	if o.From == nil || o.To == nil || !o.Dst.IsValid() {
		return nil, errors.New("flow: From, To and Dst are required")
	}
	if o.Rate == 0 {
		o.Rate = 2000
	}
	if o.Size == 0 {
		o.Size = 64
	}
	if o.Size < 16 {
		return nil, fmt.Errorf("flow: Size %d below the 16-byte header", o.Size)
	}
	if o.TCPRate == 0 {
		o.TCPRate = 100
	}
	f := &Flow{opts: o, interval: time.Second / time.Duration(o.Rate), stopSend: make(chan struct{}),
		tcpSendTimes: map[uint64]time.Time{}}
	fail := func(err error) (*Flow, error) {
		f.closeAll()
		return nil, err
	}
	before, err := udpReceiveErrors(o.To)
	if err != nil {
		return fail(err)
	}
	f.snmpBefore = before

	// Sockets belong to the namespace of the thread that creates them; after that any goroutine may use them.
	err = o.To.Do(func() error {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IP(o.Dst.AsSlice())})
		if err != nil {
			return fmt.Errorf("listen udp on %s in %s: %w", o.Dst, o.To.Logical, err)
		}
		f.udpRx = c
		if err := setRcvBufForce(c, 8<<20); err != nil {
			return err
		}
		if o.TCPRate > 0 {
			ln, err := net.Listen("tcp", net.JoinHostPort(o.Dst.String(), "0"))
			if err != nil {
				return fmt.Errorf("listen tcp on %s in %s: %w", o.Dst, o.To.Logical, err)
			}
			f.tcpLn = ln
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	udpPort := f.udpRx.LocalAddr().(*net.UDPAddr).Port
	err = o.From.Do(func() error {
		c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IP(o.Dst.AsSlice()), Port: udpPort})
		if err != nil {
			return fmt.Errorf("dial udp %s:%d from %s: %w", o.Dst, udpPort, o.From.Logical, err)
		}
		f.udpTx = c
		if o.TCPRate > 0 {
			d := net.Dialer{Timeout: 5 * time.Second}
			tc, err := d.DialContext(ctx, "tcp", f.tcpLn.Addr().String())
			if err != nil {
				return fmt.Errorf("dial tcp %s from %s: %w", f.tcpLn.Addr(), o.From.Logical, err)
			}
			f.tcpC = tc
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}

	f.receivers.Add(1)
	go f.receiveUDP()
	if o.TCPRate > 0 {
		srv, err := acceptWithin(f.tcpLn, 5*time.Second)
		if err != nil {
			return fail(err)
		}
		f.tcpSrv = srv
		f.receivers.Add(2)
		go func() { // echo server
			defer f.receivers.Done()
			defer srv.Close()
			_, _ = io.Copy(srv, srv)
		}()
		go f.receiveTCP()
		f.senderWG.Add(1)
		go f.sendTCP()
	}
	f.senderWG.Add(1)
	go f.sendUDP()
	o.From.lab.onClose(f.abort)
	return f, nil
}

func acceptWithin(ln net.Listener, d time.Duration) (net.Conn, error) {
	if tl, ok := ln.(*net.TCPListener); ok {
		_ = tl.SetDeadline(time.Now().Add(d))
	}
	c, err := ln.Accept()
	if err != nil {
		return nil, fmt.Errorf("accept flow tcp connection: %w", err)
	}
	return c, nil
}

func setRcvBufForce(c *net.UDPConn, n int) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("set SO_RCVBUFFORCE: %w", serr)
	}
	return nil
}

// sendUDP paces packets on a 1ms tick: due = rate*elapsed, with bursts capped so a starved sender does not
// overrun the receiver's queues when it gets the CPU back.
func (f *Flow) sendUDP() {
	defer f.senderWG.Done()
	buf := make([]byte, f.opts.Size)
	binary.BigEndian.PutUint32(buf[0:], flowMagic)
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	const maxBurst = 64
	for {
		select {
		case <-f.stopSend:
			return
		case <-tick.C:
		}
		due := uint64(time.Since(start) / f.interval)
		// A send buffer that never drains (packets held on a path that went away) must not block Stop.
		_ = f.udpTx.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		for n := 0; f.sent.Load() < due && n < maxBurst; n++ {
			seq := f.sent.Load()
			binary.BigEndian.PutUint64(buf[8:], seq)
			if _, err := f.udpTx.Write(buf); err != nil {
				// A failed send is not a network loss (e.g. ENOBUFS in our own socket); retry the same sequence
				// number on the next tick.
				break
			}
			f.sent.Add(1)
		}
	}
}

func (f *Flow) receiveUDP() {
	defer f.receivers.Done()
	buf := make([]byte, 65536)
	for {
		n, err := f.udpRx.Read(buf)
		if err != nil {
			return // closed by Stop
		}
		if n < 16 || binary.BigEndian.Uint32(buf) != flowMagic {
			continue
		}
		f.record(binary.BigEndian.Uint64(buf[8:]))
	}
}

func (f *Flow) record(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := int(seq / 64)
	for len(f.seen) <= w {
		f.seen = append(f.seen, 0)
	}
	bit := uint64(1) << (seq % 64)
	if f.seen[w]&bit != 0 {
		f.dup++
		return
	}
	f.seen[w] |= bit
	f.received++
	if f.anyRx && seq < f.maxSeq {
		f.reord++
	}
	if !f.anyRx || seq > f.maxSeq {
		f.maxSeq = seq
	}
	f.anyRx = true
}

func (f *Flow) sendTCP() {
	defer f.senderWG.Done()
	tick := time.NewTicker(time.Second / time.Duration(f.opts.TCPRate))
	defer tick.Stop()
	var buf [8]byte
	for {
		select {
		case <-f.stopSend:
			return
		case <-tick.C:
		}
		seq := f.tcpSent.Load()
		binary.BigEndian.PutUint64(buf[:], seq)
		f.tcpMu.Lock()
		f.tcpSendTimes[seq] = time.Now()
		f.tcpMu.Unlock()
		_ = f.tcpC.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := f.tcpC.Write(buf[:]); err != nil {
			f.setTCPErr(fmt.Errorf("tcp write seq %d: %w", seq, err))
			return
		}
		f.tcpSent.Add(1)
	}
}

func (f *Flow) receiveTCP() {
	defer f.receivers.Done()
	var buf [8]byte
	for want := uint64(0); ; want++ {
		if _, err := io.ReadFull(f.tcpC, buf[:]); err != nil {
			if !errors.Is(err, net.ErrClosed) {
				f.setTCPErr(fmt.Errorf("tcp read echo %d: %w", want, err))
			}
			return
		}
		got := binary.BigEndian.Uint64(buf[:])
		if got != want {
			f.setTCPErr(fmt.Errorf("tcp echo out of order: got %d, want %d", got, want))
			return
		}
		f.tcpMu.Lock()
		if t0, ok := f.tcpSendTimes[got]; ok {
			if rtt := time.Since(t0); rtt > f.tcpMaxRTT {
				f.tcpMaxRTT = rtt
			}
			delete(f.tcpSendTimes, got)
		}
		f.tcpMu.Unlock()
		f.tcpEchoed.Add(1)
	}
}

func (f *Flow) setTCPErr(err error) {
	f.tcpMu.Lock()
	defer f.tcpMu.Unlock()
	if f.tcpErr == nil {
		f.tcpErr = err
	}
}

// Sent is the number of UDP packets sent so far.
func (f *Flow) Sent() uint64 { return f.sent.Load() }

// Received is the number of unique UDP packets received so far.
func (f *Flow) Received() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received
}

// WaitReceived waits until at least n more UDP packets than now have arrived: proof that the flow is running.
func (f *Flow) WaitReceived(ctx context.Context, n uint64, timeout time.Duration) error {
	target := f.Received() + n
	err := WaitFor(ctx, timeout, 5*time.Millisecond, func() (bool, error) { return f.Received() >= target, nil })
	if err != nil {
		return fmt.Errorf("flow to %s: waiting for %d more packets (have %d of %d sent): %w",
			f.opts.Dst, n, f.Received(), f.Sent(), err)
	}
	return nil
}

// Stop stops the senders, waits (bounded) for packets in flight and TCP echoes, closes the sockets and returns
// the counts. Lost packets are the ones still missing after the wait.
func (f *Flow) Stop(ctx context.Context) (FlowResult, error) {
	if f.stopped.Swap(true) {
		return FlowResult{}, errors.New("flow already stopped")
	}
	f.stopOnce.Do(func() { close(f.stopSend) })
	f.senderWG.Wait()
	sent := f.sent.Load()
	// In flight: a few ms on veth; the deadline only matters when packets are really lost.
	_ = WaitFor(ctx, 2*time.Second, 2*time.Millisecond, func() (bool, error) {
		return f.Received() >= sent && (f.tcpC == nil || f.tcpEchoed.Load() >= f.tcpSent.Load()), nil
	})
	f.closeAll()
	f.receivers.Wait()

	after, err := udpReceiveErrors(f.opts.To)
	res := FlowResult{Sent: sent, Interval: f.interval}
	f.mu.Lock()
	res.Received, res.Duplicates, res.Reordered = f.received, f.dup, f.reord
	res.LongestGap = longestGap(f.seen, sent)
	f.mu.Unlock()
	if res.Received < sent {
		res.Lost = sent - res.Received
	}
	if err == nil && after >= f.snmpBefore {
		res.ReceiverDrops = after - f.snmpBefore
	}
	f.tcpMu.Lock()
	res.TCPSent, res.TCPEchoed = f.tcpSent.Load(), f.tcpEchoed.Load()
	res.TCPMaxRTT, res.TCPErr = f.tcpMaxRTT, f.tcpErr
	f.tcpMu.Unlock()
	return res, err
}

func longestGap(seen []uint64, sent uint64) uint64 {
	var best, run uint64
	for s := uint64(0); s < sent; s++ {
		w := int(s / 64)
		if w < len(seen) && seen[w]&(1<<(s%64)) != 0 {
			run = 0
			continue
		}
		run++
		best = max(best, run)
	}
	return best
}

// abort ends a flow the test did not stop (e.g. it failed first), so no socket keeps a namespace alive.
func (f *Flow) abort() {
	f.stopOnce.Do(func() { close(f.stopSend) })
	f.senderWG.Wait()
	f.closeAll()
	f.receivers.Wait()
}

func (f *Flow) closeAll() {
	if f.udpTx != nil {
		_ = f.udpTx.Close()
	}
	if f.udpRx != nil {
		_ = f.udpRx.Close()
	}
	if f.tcpC != nil {
		_ = f.tcpC.Close()
	}
	if f.tcpLn != nil {
		_ = f.tcpLn.Close()
	}
	if f.tcpSrv != nil {
		_ = f.tcpSrv.Close()
	}
}

// udpReceiveErrors sums Udp RcvbufErrors and InErrors of /proc/net/snmp in the namespace.
func udpReceiveErrors(n *Netns) (uint64, error) {
	st, err := n.SNMP("Udp")
	if err != nil {
		return 0, err
	}
	return st["RcvbufErrors"] + st["InErrors"], nil
}
