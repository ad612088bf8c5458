package frrvty

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/network-operator/network-operator/pkg/frr"
)

// ErrCommand marks a command a daemon refused on its vty socket (errors.Is); the error carries its answer.
var ErrCommand = errors.New("FRR refused the command")

// Show runs one show command. "show bgp ..." goes straight to bgpd's vty socket, as vtysh itself would send it,
// without starting vtysh: the process start-up (~25 ms) was most of the agent's health check. Other commands go
// through vtysh, which knows which daemons answer them.
func (t Target) Show(ctx context.Context, command string) ([]byte, error) {
	if strings.HasPrefix(command, "show bgp ") {
		return t.daemonCommand(ctx, "bgpd", command)
	}
	return t.Vtysh(ctx, command)
}

// vtyDir is the directory of the daemons' vty sockets.
func (t Target) vtyDir() string {
	switch {
	case t.VtySocket != "":
		return t.VtySocket
	case t.Pathspace != "":
		return filepath.Join("/var/run/frr", t.Pathspace)
	}
	return "/var/run/frr"
}

// DaemonsIdentity names the running zebra and bgpd by their vty sockets, which a daemon makes anew at every start
// (inode and change time); "" parts for a daemon without one.
func (t Target) DaemonsIdentity() string {
	var b strings.Builder
	for _, d := range []string{"zebra", "bgpd"} {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(t.vtyDir(), d+".vty"), &st); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d.%d;", d, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
		}
	}
	return b.String()
}

// vtyTrailerLen: each answer on a vty socket ends with three zero bytes, then the command's status (0: success).
const vtyTrailerLen = 4

// daemonCommand sends commands, one after the other, to one daemon's vty socket and returns the answers. The
// protocol is vtysh's: a command is its text and a zero byte; the answer is text followed by three zero bytes
// and a status byte. A command with a non-zero status ends the call with an error wrapping ErrCommand.
func (t Target) daemonCommand(ctx context.Context, daemon string, cmds ...string) ([]byte, error) {
	path := filepath.Join(t.vtyDir(), daemon+".vty")
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("%s vty: %w", daemon, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // unblocks a read when ctx ends
	defer stop()
	var out bytes.Buffer
	buf := make([]byte, 64<<10)
	for _, c := range cmds {
		if _, err := conn.Write(append([]byte(c), 0)); err != nil {
			return nil, vtyErr(ctx, daemon, c, err)
		}
		start := out.Len()
		for !answered(out.Bytes()[start:]) {
			n, err := conn.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return nil, vtyErr(ctx, daemon, c, err)
			}
		}
		answer := out.Bytes()[start : out.Len()-vtyTrailerLen]
		if status := out.Bytes()[out.Len()-1]; status != 0 {
			return nil, fmt.Errorf("%s %q: %w (status %d): %s", daemon, c, ErrCommand, status, frr.Redact(strings.TrimSpace(string(answer))))
		}
		out.Truncate(out.Len() - vtyTrailerLen)
	}
	return out.Bytes(), nil
}

// answered reports whether b ends with a vty trailer.
func answered(b []byte) bool {
	n := len(b)
	return n >= vtyTrailerLen && b[n-4] == 0 && b[n-3] == 0 && b[n-2] == 0
}

func vtyErr(ctx context.Context, daemon, cmd string, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return fmt.Errorf("%s %q: %w", daemon, cmd, err)
}
