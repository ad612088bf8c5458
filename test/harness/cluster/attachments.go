package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/test/harness/lab"
)

// Hook is where a BPF program sits on an interface, as the kernel reports it.
type Hook struct {
	Interface string
	// Kind is tcx-ingress, tcx-egress, tc-ingress, tc-egress (clsact filters) or xdp.
	Kind      string
	ProgramID ebpf.ProgramID
	// Program is the program's name (the kernel keeps the first 15 characters); Tag is the hash of its
	// instructions (the same code has the same tag).
	Program, Tag string
	// LinkID is the BPF link holding a tcx attachment (0 for clsact filters and netlink XDP).
	LinkID link.ID
}

func (h Hook) String() string {
	s := fmt.Sprintf("%s %s prog %d (%s)", h.Interface, h.Kind, h.ProgramID, h.Program)
	if h.LinkID != 0 {
		s += fmt.Sprintf(" link %d", h.LinkID)
	}
	return s
}

// Hooks asks the kernel for every BPF program attached to an interface of ns: tcx links, clsact filters and
// XDP. Nothing of the agent's own bookkeeping (pins, state files) is used, so it sees foreign programs too.
func Hooks(ns *lab.Netns) ([]Hook, error) {
	var hooks []Hook
	err := ns.Do(func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return fmt.Errorf("netlink handle: %w", err)
		}
		defer h.Close()
		links, err := h.LinkList()
		if err != nil {
			return fmt.Errorf("list links: %w", err)
		}
		var errs []error
		for _, l := range links {
			a := l.Attrs()
			for kind, at := range map[string]ebpf.AttachType{"tcx-ingress": ebpf.AttachTCXIngress, "tcx-egress": ebpf.AttachTCXEgress} {
				res, err := link.QueryPrograms(link.QueryOptions{Target: a.Index, Attach: at})
				if err != nil {
					if errors.Is(err, ebpf.ErrNotSupported) {
						continue
					}
					errs = append(errs, fmt.Errorf("query %s of %s: %w", kind, a.Name, err))
					continue
				}
				for _, p := range res.Programs {
					lid, _ := p.LinkID()
					hooks = append(hooks, Hook{Interface: a.Name, Kind: kind, ProgramID: p.ID, LinkID: lid})
				}
			}
			for kind, parent := range map[string]uint32{"tc-ingress": netlink.HANDLE_MIN_INGRESS, "tc-egress": netlink.HANDLE_MIN_EGRESS} {
				filters, err := h.FilterList(l, parent)
				if err != nil {
					continue // no clsact qdisc
				}
				for _, f := range filters {
					if bf, ok := f.(*netlink.BpfFilter); ok {
						hooks = append(hooks, Hook{Interface: a.Name, Kind: kind, ProgramID: ebpf.ProgramID(bf.Id)})
					}
				}
			}
			if a.Xdp != nil && a.Xdp.Attached && a.Xdp.ProgId != 0 {
				hooks = append(hooks, Hook{Interface: a.Name, Kind: "xdp", ProgramID: ebpf.ProgramID(a.Xdp.ProgId)})
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return nil, err
	}
	for i := range hooks {
		if p, err := ebpf.NewProgramFromID(hooks[i].ProgramID); err == nil {
			if info, err := p.Info(); err == nil {
				hooks[i].Program, hooks[i].Tag = info.Name, info.Tag
			}
			p.Close()
		}
	}
	slices.SortFunc(hooks, func(a, b Hook) int { return strings.Compare(a.String(), b.String()) })
	return hooks, nil
}
