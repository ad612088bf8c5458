package standalone

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"sync"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/specfile"
	"github.com/network-operator/network-operator/pkg/frr"
)

// Rewrite applies the replacements of the file last read (das-schiff's `replacements`) to the rendered FRR
// configuration: Render wraps the renderer the reconcile engine uses.
type Rewrite struct {
	mu sync.Mutex
	r  specfile.Replacements
}

// Set makes rs the replacements of every later render.
func (w *Rewrite) Set(rs specfile.Replacements) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.r = rs
}

// Render returns render (nil: frr.Render, the whole frr.conf) followed by the current replacements.
func (w *Rewrite) Render(render func(*frr.NodeConfig) ([]byte, error)) func(*frr.NodeConfig) ([]byte, error) {
	if render == nil {
		render = frr.Render
	}
	return func(cfg *frr.NodeConfig) ([]byte, error) {
		out, err := render(cfg)
		if err != nil {
			return nil, err
		}
		w.mu.Lock()
		rs := w.r
		w.mu.Unlock()
		return rs.Apply(out), nil
	}
}

// LinkAddrs returns the addresses of an interface in the namespace of h (specfile.Env.Addrs); an interface
// that does not exist is an error wrapping fs.ErrNotExist.
func LinkAddrs(h *netlink.Handle) func(string) ([]netip.Addr, error) {
	return func(name string) ([]netip.Addr, error) {
		l, err := h.LinkByName(name)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
			}
			return nil, fmt.Errorf("interface %s: %w", name, err)
		}
		list, err := h.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", name, err)
		}
		var out []netip.Addr
		for _, a := range list {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
		return out, nil
	}
}
