package loader

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	tc "github.com/florianl/go-tc"
	"github.com/florianl/go-tc/core"
	"golang.org/x/sys/unix"
)

// Legacy tc: one cls_bpf direct-action filter on clsact ingress, at our
// priority and handle, named "<Owner>:<program>". The clsact qdisc is
// created when missing and never deleted (other filters may hang off it).

// ethPAllBE is htons(ETH_P_ALL), the protocol half of tcm_info.
const ethPAllBE = uint32(unix.ETH_P_ALL>>8 | (unix.ETH_P_ALL&0xff)<<8)

func ingressParent() uint32 { return core.BuildHandle(tc.HandleRoot, tc.HandleMinIngress) }

func (l *Loader) openTC() (*tc.Tc, error) {
	cfg := tc.Config{}
	if l.opts.NetNS > 0 {
		cfg.NetNS = int(l.opts.NetNS)
	}
	tcnl, err := tc.Open(&cfg)
	if err != nil {
		return nil, fmt.Errorf("open rtnetlink for tc: %w", err)
	}
	return tcnl, nil
}

func (l *Loader) filterName(prog string) string { return l.opts.Owner + ":" + prog }

func (l *Loader) filterMsg(ifindex int) tc.Msg {
	return tc.Msg{
		Family:  unix.AF_UNSPEC,
		Ifindex: uint32(ifindex),
		Handle:  l.opts.TCHandle,
		Parent:  ingressParent(),
		Info:    uint32(l.opts.TCPriority)<<16 | ethPAllBE,
	}
}

// ownsFilter: our priority, our handle, a bpf filter named by our owner.
func (l *Loader) ownsFilter(f *tc.Object) bool {
	return f.BPF != nil && f.BPF.Name != nil && strings.HasPrefix(*f.BPF.Name, l.opts.Owner+":")
}

func ensureClsact(tcnl *tc.Tc, ifindex int) error {
	q := tc.Object{
		Msg: tc.Msg{
			Family:  unix.AF_UNSPEC,
			Ifindex: uint32(ifindex),
			Handle:  core.BuildHandle(tc.HandleRoot, 0),
			Parent:  tc.HandleIngress,
		},
		Attribute: tc.Attribute{Kind: "clsact"},
	}
	if err := tcnl.Qdisc().Add(&q); err != nil && !errors.Is(err, unix.EEXIST) {
		return asNotSupported(fmt.Errorf("add clsact qdisc: %w", err))
	}
	return nil
}

// findFilter returns the bpf filter at our priority and handle on the
// clsact ingress hook of ifindex, or nil when there is none (or no clsact).
func (l *Loader) findFilter(tcnl *tc.Tc, ifindex int) (*tc.Object, error) {
	filters, err := tcnl.Filter().Get(&tc.Msg{
		Family:  unix.AF_UNSPEC,
		Ifindex: uint32(ifindex),
		Parent:  ingressParent(),
	})
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) {
		return nil, nil // no clsact qdisc on this device
	}
	if err != nil {
		return nil, fmt.Errorf("list ingress filters: %w", err)
	}
	for i := range filters {
		f := &filters[i]
		if f.Kind == "bpf" && f.Handle == l.opts.TCHandle && f.Info>>16 == uint32(l.opts.TCPriority) {
			return f, nil
		}
	}
	return nil, nil
}

// setFilter adds our filter, or replaces it in place (cls_bpf swaps the
// program under RCU, so no packet sees a gap).
func (l *Loader) setFilter(tcnl *tc.Tc, ifindex int, prog *ebpf.Program, progName string, replace bool) error {
	fd := uint32(prog.FD())
	flags := uint32(tc.BpfActDirect)
	name := l.filterName(progName)
	obj := tc.Object{
		Msg: l.filterMsg(ifindex),
		Attribute: tc.Attribute{
			Kind: "bpf",
			BPF:  &tc.Bpf{FD: &fd, Name: &name, Flags: &flags},
		},
	}
	var err error
	if replace {
		err = tcnl.Filter().Replace(&obj)
	} else {
		err = tcnl.Filter().Add(&obj)
	}
	if err != nil {
		return asNotSupported(fmt.Errorf("set cls_bpf filter prio %d handle %#x: %w", l.opts.TCPriority, l.opts.TCHandle, err))
	}
	return nil
}

func (l *Loader) deleteFilter(tcnl *tc.Tc, ifindex int) error {
	obj := tc.Object{Msg: l.filterMsg(ifindex), Attribute: tc.Attribute{Kind: "bpf"}}
	if err := tcnl.Filter().Delete(&obj); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete cls_bpf filter prio %d handle %#x: %w", l.opts.TCPriority, l.opts.TCHandle, err)
	}
	return nil
}

func filterProgramID(f *tc.Object) ebpf.ProgramID {
	if f == nil || f.BPF == nil || f.BPF.ID == nil {
		return 0
	}
	return ebpf.ProgramID(*f.BPF.ID)
}

func filterName(f *tc.Object) string {
	if f == nil || f.BPF == nil || f.BPF.Name == nil {
		return ""
	}
	return *f.BPF.Name
}
