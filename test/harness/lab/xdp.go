package lab

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
)

// XDPMode selects how an XDP program is attached.
type XDPMode uint32

// XDP attach modes.
const (
	XDPNative  XDPMode = nl.XDP_FLAGS_DRV_MODE
	XDPGeneric XDPMode = nl.XDP_FLAGS_SKB_MODE
)

func (m XDPMode) String() string {
	switch m {
	case XDPNative:
		return "native"
	case XDPGeneric:
		return "generic"
	}
	return fmt.Sprintf("xdp-mode(%d)", uint32(m))
}

// NewXDPPass loads a two-instruction XDP program that returns XDP_PASS. Veth needs one on the receiving peer for
// native XDP redirects to be delivered; tests also use it as a "foreign" program that must survive our attach.
func NewXDPPass() (*ebpf.Program, error) {
	const xdpPass = 2
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "lab_xdp_pass",
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()},
	})
	if err != nil {
		return nil, fmt.Errorf("load xdp pass program: %w", err)
	}
	return prog, nil
}

// AttachXDP attaches prog to dev with a netlink (not bpf_link) attachment, the kind `ip link set dev X xdp`
// makes; the attachment lives as long as the device, independent of prog's file descriptor.
func (n *Netns) AttachXDP(dev string, prog *ebpf.Program, mode XDPMode) error {
	link, err := n.Link(dev)
	if err != nil {
		return err
	}
	// netlink's package-level call uses the thread's namespace, hence Do.
	err = n.Do(func() error { return netlink.LinkSetXdpFdWithFlags(link, prog.FD(), int(mode)) })
	if err != nil {
		return fmt.Errorf("attach xdp (%s) to %s/%s: %w", mode, n.Logical, dev, err)
	}
	return nil
}

// DetachXDP removes the netlink XDP attachment of dev in the given mode.
func (n *Netns) DetachXDP(dev string, mode XDPMode) error {
	link, err := n.Link(dev)
	if err != nil {
		return err
	}
	err = n.Do(func() error { return netlink.LinkSetXdpFdWithFlags(link, -1, int(mode)) })
	if err != nil {
		return fmt.Errorf("detach xdp (%s) from %s/%s: %w", mode, n.Logical, dev, err)
	}
	return nil
}

// XDPProgID returns the id of the XDP program attached to dev (0 = none) and its attach mode.
func (n *Netns) XDPProgID(dev string) (uint32, uint32, error) {
	link, err := n.Link(dev)
	if err != nil {
		return 0, 0, err
	}
	x := link.Attrs().Xdp
	if x == nil || !x.Attached {
		return 0, 0, nil
	}
	return x.ProgId, x.AttachMode, nil
}
