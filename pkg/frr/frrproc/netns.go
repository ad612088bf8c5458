// Package frrproc runs FRR daemons (zebra, bgpd, ...) in network namespaces,
// each instance with a private config/socket directory owned by user frr,
// pid files, and a clean shutdown. pkg/frr uses it for its scratch
// validation instance; tests (via frrtest), the agent and the demo reuse it.
package frrproc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/network-operator/network-operator/pkg/namedns"
)

// ErrNotAvailable reports a missing prerequisite (root, FRR binaries, the frr
// user); tests pass it to testreq.Need, which fails or skips with the reason.
var ErrNotAvailable = errors.New("FRR daemons cannot run here")

// Netns is a named network namespace (/run/netns/<Name>).
type Netns struct {
	Name string
}

// UniqueName returns prefix plus 8 random hex digits.
func UniqueName(prefix string) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // cannot fail on Linux
	}
	return prefix + hex.EncodeToString(b[:])
}

// NewNetns creates a uniquely named namespace with its loopback up.
func NewNetns(ctx context.Context, prefix string) (*Netns, error) {
	n := &Netns{Name: UniqueName(prefix)}
	h, err := namedns.Create(n.Name)
	if err != nil {
		return nil, err
	}
	h.Close() // the named file keeps the namespace; everything here reaches it by name
	if err := n.IP(ctx, "link", "set", "lo", "up"); err != nil {
		_ = n.Delete(context.WithoutCancel(ctx))
		return nil, err
	}
	return n, nil
}

// Delete removes the namespace; its interfaces go with it once no process is left inside.
func (n *Netns) Delete(context.Context) error {
	return namedns.Delete(n.Name)
}

// IP runs "ip -n <ns> args...".
func (n *Netns) IP(ctx context.Context, args ...string) error {
	if _, err := run(ctx, "ip", append([]string{"-n", n.Name}, args...)...); err != nil {
		return fmt.Errorf("netns %s: %w", n.Name, err)
	}
	return nil
}

// Exec runs a command inside the namespace and returns its combined output.
// nsenter only switches the network namespace, so /sys/fs/bpf stays visible.
func (n *Netns) Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := run(ctx, "nsenter", append([]string{"--net=/run/netns/" + n.Name, "--", name}, args...)...)
	if err != nil {
		return out, fmt.Errorf("netns %s: %w", n.Name, err)
	}
	return out, nil
}

// Sysctl sets a sysctl inside the namespace.
func (n *Netns) Sysctl(ctx context.Context, key, value string) error {
	_, err := n.Exec(ctx, "sysctl", "-qw", key+"="+value)
	return err
}

func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.Bytes(), nil
}

// CheckDaemons reports why FRR daemons cannot be run here with these tools (ErrNotAvailable), or nil.
func (t Tools) CheckDaemons() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root for network namespaces", ErrNotAvailable)
	}
	if err := t.Check(); err != nil {
		return err
	}
	for _, bin := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%w: %s not in PATH", ErrNotAvailable, bin)
		}
	}
	if _, _, err := FRRUser(); err != nil {
		return fmt.Errorf("%w: %v", ErrNotAvailable, err)
	}
	return nil
}
