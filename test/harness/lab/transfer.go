package lab

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
)

// TransferResult is the outcome of a bulk TCP transfer.
type TransferResult struct {
	Bytes    int64 // bytes the receiver counted (equal to the requested size on success)
	Duration time.Duration
}

// BitsPerSecond is the goodput of the transfer.
func (r TransferResult) BitsPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Bytes) * 8 / r.Duration.Seconds()
}

// TCPTransfer sends size bytes over one TCP connection from `from` to dst (an address in `to`) and waits for the
// receiver to confirm the byte count. Bulk TCP uses GSO/TSO-sized packets, which is what breaks first on a
// misconfigured XDP or checksum path, so this complements ping. ctx bounds the whole transfer.
func TCPTransfer(ctx context.Context, from, to *Netns, dst netip.Addr, size int64) (TransferResult, error) {
	var ln net.Listener
	err := to.Do(func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(dst.String(), "0"))
		return err
	})
	if err != nil {
		return TransferResult{}, fmt.Errorf("listen on %s in %s: %w", dst, to.Logical, err)
	}
	defer ln.Close()

	type recvResult struct {
		n   int64
		err error
	}
	recvc := make(chan recvResult, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			recvc <- recvResult{err: err}
			return
		}
		defer c.Close()
		stop := context.AfterFunc(ctx, func() { _ = c.Close() })
		defer stop()
		n, err := io.Copy(io.Discard, c)
		if err == nil {
			// Confirm the count so the sender knows every byte arrived.
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(n))
			_, err = c.Write(b[:])
		}
		recvc <- recvResult{n: n, err: err}
	}()

	var c net.Conn
	err = from.Do(func() error {
		var err error
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err = d.DialContext(ctx, "tcp", ln.Addr().String())
		return err
	})
	if err != nil {
		return TransferResult{}, fmt.Errorf("dial %s from %s: %w", ln.Addr(), from.Logical, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()

	start := time.Now()
	buf := make([]byte, 256<<10)
	var sent int64
	for sent < size {
		n := int64(len(buf))
		if size-sent < n {
			n = size - sent
		}
		w, err := c.Write(buf[:n])
		sent += int64(w)
		if err != nil {
			return TransferResult{Bytes: sent}, fmt.Errorf("tcp send after %d of %d bytes: %w", sent, size, ctxErr(ctx, err))
		}
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return TransferResult{}, fmt.Errorf("tcp close write: %w", err)
	}
	var ack [8]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return TransferResult{}, fmt.Errorf("tcp read receiver count: %w", ctxErr(ctx, err))
	}
	res := TransferResult{Bytes: int64(binary.BigEndian.Uint64(ack[:])), Duration: time.Since(start)}
	r := <-recvc
	if r.err != nil {
		return res, fmt.Errorf("tcp receiver: %w", r.err)
	}
	if res.Bytes != size {
		return res, fmt.Errorf("tcp receiver counted %d bytes, want %d", res.Bytes, size)
	}
	return res, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}
