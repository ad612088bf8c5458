package loader

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Attachment describes the router attached to one interface.
type Attachment struct {
	Interface string `json:"interface"`
	Ifindex   int    `json:"ifindex"`
	// Requested is the mode asked for; Mode is the hook in use (never
	// ModeAuto).
	Requested Mode `json:"requested"`
	Mode      Mode `json:"mode"`
	// Reason explains the choice, e.g. "driver veth -> tc; tcx".
	Reason string `json:"reason"`
	Driver string `json:"driver,omitempty"`
	// Program is the program name, ProgramID the kernel's ID of the
	// program running there now.
	Program   string         `json:"program"`
	ProgramID ebpf.ProgramID `json:"programID"`
	// LinkID and Pin are set for tcx and XDP (bpf_link) attachments.
	LinkID link.ID `json:"linkID,omitempty"`
	Pin    string  `json:"pin,omitempty"`
	// Adopted is true when an earlier process created the attachment.
	Adopted bool `json:"adopted"`
}

type attachment struct {
	Attachment
	lnk link.Link // nil for ModeTC
}

// Attach attaches the router to ifname. ModeAuto picks the hook from
// Options.Overrides or the driver table (DriverMode) and falls back to
// tc when that hook is unsupported (tcx -> legacy tc, xdp -> tc). Explicit
// modes and overrides are strict: unsupported -> an error wrapping
// ErrNotSupported. Attaching where we are attached already keeps the
// attachment (same link / filter) and only swaps its program when it
// differs. Changing the hook is make-before-break, except between the two
// XDP modes, which the kernel does not allow side by side.
func (l *Loader) Attach(ctx context.Context, ifname string, mode Mode) (Attachment, error) {
	if mode == "" {
		mode = ModeAuto
	}
	if !mode.valid() {
		return Attachment{}, fmt.Errorf("attach %s: mode %q: want one of %v", ifname, mode, Modes())
	}
	l.ops.RLock()
	defer l.ops.RUnlock()
	defer l.ifaces.lock(ifname)()
	if l.isClosed() {
		return Attachment{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Attachment{}, err
	}
	var out Attachment
	err := netnsrun.Run(l.opts.NetNS, func() error {
		iface, err := interfaceByName(ifname)
		if err != nil {
			return fmt.Errorf("attach %s: %w", ifname, err)
		}
		a, err := l.attach(iface, mode)
		if err != nil {
			return err
		}
		out = l.describe(a)
		return nil
	})
	return out, err
}

// interfaceByName and interfaceByIndex ask the kernel for one link (RTM_GETLINK by name or index). net's
// InterfaceByName/ByIndex dump every link of the namespace per call, which made attaching to each of a node's
// thousands of interfaces quadratic (1000 attaches among 4000 links: ~110 s).
func interfaceByName(name string) (*net.Interface, error) {
	return asInterface(netlink.LinkByName(name))
}

func interfaceByIndex(index int) (*net.Interface, error) {
	return asInterface(netlink.LinkByIndex(index))
}

func asInterface(lnk netlink.Link, err error) (*net.Interface, error) {
	if err != nil {
		return nil, err
	}
	a := lnk.Attrs()
	return &net.Interface{Index: a.Index, MTU: a.MTU, Name: a.Name, HardwareAddr: a.HardwareAddr, Flags: a.Flags}, nil
}

func (l *Loader) attach(iface *net.Interface, requested Mode) (*attachment, error) {
	ifname := iface.Name
	driver, derr := driverName(ifname)
	mode, reason, lenient := requested, "requested "+string(requested), false
	if requested == ModeAuto {
		if o, ok := l.opts.Overrides[ifname]; ok && o != ModeAuto {
			mode, reason = o, fmt.Sprintf("override %s=%s", ifname, o)
		} else {
			lenient = true
			mode, reason = l.opts.DriverTable(driver)
			if derr != nil {
				reason = fmt.Sprintf("%s (%v)", reason, derr)
			}
			if !mode.valid() || mode == ModeAuto {
				return nil, fmt.Errorf("attach %s: driver table gave mode %q for driver %q", ifname, mode, driver)
			}
		}
	}
	cur := l.lookup(ifname)
	if cur != nil && cur.Defunct(iface.Index) {
		// The device was deleted and re-created under the same name: the old
		// link or filter is bound to the vanished ifindex and runs nothing.
		l.opts.Logger.Info("interface re-created, replacing its defunct attachment", "interface", ifname,
			"old_ifindex", cur.Ifindex, "ifindex", iface.Index)
		if err := l.detachOne(cur); err != nil {
			return nil, fmt.Errorf("attach %s: remove attachment of the vanished ifindex %d: %w", ifname, cur.Ifindex, err)
		}
		l.forget(ifname)
		cur = nil
	}

	if mode.IsXDP() {
		prog := l.coll.Programs[l.opts.XDPProgram]
		switch foreign := l.foreignXDP(iface, cur); {
		case prog == nil && lenient:
			mode, reason = ModeTCX, reason+"; no XDP program in spec -> tc"
		case prog == nil:
			return nil, fmt.Errorf("attach %s to %s: %s: %w", mode, ifname, l.opts.XDPProgram, ErrNoProgram)
		case foreign != nil && l.opts.XDPFallbackToTC:
			mode, reason = ModeTCX, fmt.Sprintf("%s; foreign XDP program %d -> tc", reason, foreign.ProgramID)
			lenient = true
		case foreign != nil:
			return nil, fmt.Errorf("attach %s to %s: %w", mode, ifname, foreign)
		default:
			a, err := l.attachXDP(iface, mode, prog, cur)
			if err == nil {
				return l.commit(a, requested, reason, driver), nil
			}
			if !lenient || !errors.Is(err, ErrNotSupported) {
				return nil, err
			}
			l.opts.Logger.Info("xdp unsupported, falling back to tc", "interface", ifname, "err", err)
			mode, reason = ModeTCX, fmt.Sprintf("%s; %s not supported -> tc", reason, mode)
			cur = l.lookup(ifname) // attachXDP may have removed our other XDP link
		}
	}

	prog := l.coll.Programs[l.opts.TCProgram]
	if mode == ModeTCX && l.opts.LegacyTC {
		mode, reason = ModeTC, reason+"; legacy tc (LegacyTC)"
	}
	if mode == ModeTCX {
		a, err := l.attachTCX(iface, prog, cur)
		if err == nil {
			if requested != ModeTCX {
				reason += "; tcx"
			}
			return l.commit(a, requested, reason, driver), nil
		}
		if !lenient || !errors.Is(err, ErrNotSupported) {
			return nil, err
		}
		l.opts.Logger.Info("tcx unsupported, falling back to legacy tc", "interface", ifname, "err", err)
		mode, reason = ModeTC, reason+"; tcx not supported -> legacy tc"
	}
	a, err := l.attachTC(iface, prog, cur)
	if err != nil {
		return nil, err
	}
	return l.commit(a, requested, reason, driver), nil
}

// commit records a, then removes the previous attachment of the interface
// if it used another hook (make-before-break).
func (l *Loader) commit(a *attachment, requested Mode, reason, driver string) *attachment {
	l.mu.Lock()
	a.Requested, a.Reason, a.Driver = requested, reason, driver
	prev := l.atts[a.Interface]
	l.atts[a.Interface] = a
	desc := a.Attachment
	l.mu.Unlock()
	if prev != nil && prev != a {
		if err := l.detachOne(prev); err != nil {
			// The new hook forwards already; a leftover old hook only
			// passes packets on. Report it, keep going.
			l.opts.Logger.Warn("remove previous attachment", "interface", a.Interface, "mode", prev.Mode, "err", err)
		}
	}
	l.opts.Logger.Info("attached", "interface", desc.Interface, "mode", desc.Mode, "reason", desc.Reason,
		"program", desc.ProgramID, "link", desc.LinkID)
	return a
}

// lookup, forget, record and describe read and change the registry under mu (see Loader).
func (l *Loader) lookup(ifname string) *attachment {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.atts[ifname]
}

func (l *Loader) forget(ifname string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.atts, ifname)
}

func (l *Loader) record(a *attachment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.atts[a.Interface] = a
}

func (l *Loader) describe(a *attachment) Attachment {
	l.mu.Lock()
	defer l.mu.Unlock()
	return a.Attachment
}

func (l *Loader) setProgramID(a *attachment, id ebpf.ProgramID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a.ProgramID = id
}

func (l *Loader) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (l *Loader) attachTCX(iface *net.Interface, prog *ebpf.Program, cur *attachment) (*attachment, error) {
	if cur != nil && cur.Mode == ModeTCX {
		if err := l.keep(cur, prog); err != nil {
			return nil, fmt.Errorf("attach tcx to %s: %w", iface.Name, err)
		}
		return cur, nil
	}
	lnk, err := link.AttachTCX(link.TCXOptions{
		Interface: iface.Index,
		Program:   prog,
		Attach:    ebpf.AttachTCXIngress,
	})
	if err != nil {
		return nil, asNotSupported(fmt.Errorf("attach tcx to %s: %w", iface.Name, err))
	}
	return l.pinNewLink(iface, ModeTCX, l.opts.TCProgram, lnk)
}

func (l *Loader) attachXDP(iface *net.Interface, mode Mode, prog *ebpf.Program, cur *attachment) (*attachment, error) {
	if cur != nil && cur.Mode == mode {
		if err := l.keep(cur, prog); err != nil {
			return nil, fmt.Errorf("attach %s to %s: %w", mode, iface.Name, err)
		}
		return cur, nil
	}
	if cur != nil && cur.Mode.IsXDP() {
		// Native and generic XDP cannot be active together: break first,
		// and restore the old mode if the new one cannot be attached.
		if err := l.detachOne(cur); err != nil {
			return nil, fmt.Errorf("attach %s to %s: remove %s: %w", mode, iface.Name, cur.Mode, err)
		}
		l.forget(iface.Name)
		a, err := l.linkXDP(iface, mode, prog)
		if err != nil {
			if back, rerr := l.linkXDP(iface, cur.Mode, prog); rerr == nil {
				back.Attachment = restoredFrom(cur, back)
				l.record(back)
			} else {
				l.opts.Logger.Error("restore XDP after failed mode switch", "interface", iface.Name, "mode", cur.Mode, "err", rerr)
			}
		}
		return a, err
	}
	return l.linkXDP(iface, mode, prog)
}

// restoredFrom keeps the description of an attachment re-created in its old
// mode, with the new link's identity.
func restoredFrom(old, now *attachment) Attachment {
	a := old.Attachment
	a.LinkID, a.ProgramID, a.Pin, a.Adopted = now.LinkID, now.ProgramID, now.Pin, false
	return a
}

func (l *Loader) linkXDP(iface *net.Interface, mode Mode, prog *ebpf.Program) (*attachment, error) {
	flags := link.XDPDriverMode
	if mode == ModeXDPGeneric {
		flags = link.XDPGenericMode
	}
	lnk, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: iface.Index, Flags: flags})
	if err != nil {
		return nil, asNotSupported(fmt.Errorf("attach %s to %s: %w", mode, iface.Name, err))
	}
	return l.pinNewLink(iface, mode, l.opts.XDPProgram, lnk)
}

// keep makes an existing attachment run prog (in place, if it differs).
func (l *Loader) keep(a *attachment, prog *ebpf.Program) error {
	_, old, err := l.retarget(a, prog)
	if old != nil {
		old.Close()
	}
	return err
}

func (l *Loader) pinNewLink(iface *net.Interface, mode Mode, progName string, lnk link.Link) (*attachment, error) {
	path := l.linkPin(iface.Name, mode)
	if err := lnk.Pin(path); err != nil {
		lnk.Close() // unpinned: closing detaches it
		return nil, fmt.Errorf("pin %s link of %s at %s: %w", mode, iface.Name, path, err)
	}
	info, err := lnk.Info()
	if err != nil {
		_ = lnk.Unpin()
		lnk.Close()
		return nil, fmt.Errorf("%s link info of %s: %w", mode, iface.Name, err)
	}
	return &attachment{
		Attachment: Attachment{
			Interface: iface.Name, Ifindex: iface.Index, Mode: mode,
			Program: progName, ProgramID: info.Program, LinkID: info.ID, Pin: path,
		},
		lnk: lnk,
	}, nil
}

func (l *Loader) attachTC(iface *net.Interface, prog *ebpf.Program, cur *attachment) (*attachment, error) {
	if cur != nil && cur.Mode == ModeTC {
		if err := l.keep(cur, prog); err != nil {
			return nil, fmt.Errorf("attach tc to %s: %w", iface.Name, err)
		}
		return cur, nil
	}
	tcnl, err := l.openTC()
	if err != nil {
		return nil, fmt.Errorf("attach tc to %s: %w", iface.Name, err)
	}
	defer tcnl.Close()
	if err := ensureClsact(tcnl, iface.Index); err != nil {
		return nil, fmt.Errorf("attach tc to %s: %w", iface.Name, err)
	}
	f, err := l.findFilter(tcnl, iface.Index)
	if err != nil {
		return nil, fmt.Errorf("attach tc to %s: %w", iface.Name, err)
	}
	if f != nil && !l.ownsFilter(f) {
		return nil, fmt.Errorf("attach tc to %s: filter %q program %d: %w", iface.Name, filterName(f), filterProgramID(f), ErrForeignFilter)
	}
	// An owned filter we did not track (crash between attach and commit)
	// is replaced in place.
	if err := l.setFilter(tcnl, iface.Index, prog, l.opts.TCProgram, f != nil); err != nil {
		return nil, fmt.Errorf("attach tc to %s: %w", iface.Name, err)
	}
	if f, err = l.findFilter(tcnl, iface.Index); err != nil || f == nil {
		return nil, fmt.Errorf("attach tc to %s: filter not found after adding it: %v", iface.Name, err)
	}
	return &attachment{Attachment: Attachment{
		Interface: iface.Name, Ifindex: iface.Index, Mode: ModeTC,
		Program: l.opts.TCProgram, ProgramID: filterProgramID(f),
	}}, nil
}

// foreignXDP returns who else holds the XDP hook of iface, if anyone.
func (l *Loader) foreignXDP(iface *net.Interface, cur *attachment) *ForeignXDPError {
	dev, err := netlink.LinkByIndex(iface.Index)
	if err != nil || dev.Attrs().Xdp == nil || dev.Attrs().Xdp.ProgId == 0 {
		return nil
	}
	xdp := dev.Attrs().Xdp
	if cur != nil && cur.Mode.IsXDP() && cur.lnk != nil {
		if info, err := cur.lnk.Info(); err == nil && uint32(info.Program) == xdp.ProgId {
			return nil
		}
	}
	return &ForeignXDPError{Interface: iface.Name, ProgramID: ebpf.ProgramID(xdp.ProgId), AttachMode: xdpModeName(xdp.AttachMode)}
}

func xdpModeName(m uint32) string {
	switch m {
	case nl.XDP_ATTACHED_DRV:
		return "native"
	case nl.XDP_ATTACHED_SKB:
		return "generic"
	case nl.XDP_ATTACHED_HW:
		return "offload"
	}
	return "unknown"
}

// retarget makes a run prog, keeping the link or filter. It returns the
// program that ran before when it switched (for rollback).
func (l *Loader) retarget(a *attachment, prog *ebpf.Program) (changed bool, old *ebpf.Program, err error) {
	var curID ebpf.ProgramID
	if a.lnk != nil {
		info, err := a.lnk.Info()
		if err != nil {
			return false, nil, fmt.Errorf("%s link info of %s: %w", a.Mode, a.Interface, err)
		}
		curID = info.Program
	} else {
		tcnl, err := l.openTC()
		if err != nil {
			return false, nil, err
		}
		defer tcnl.Close()
		f, err := l.findFilter(tcnl, a.Ifindex)
		if err != nil {
			return false, nil, fmt.Errorf("tc filter of %s: %w", a.Interface, err)
		}
		if f == nil || !l.ownsFilter(f) {
			return false, nil, fmt.Errorf("tc filter of %s: ours is gone (found %q)", a.Interface, filterName(f))
		}
		curID = filterProgramID(f)
	}
	cur, err := ebpf.NewProgramFromID(curID)
	if err != nil {
		return false, nil, fmt.Errorf("open program %d running on %s: %w", curID, a.Interface, err)
	}
	same, err := sameProgram(cur, prog)
	if err != nil || same {
		cur.Close()
		return false, nil, err
	}
	if err := l.setProgram(a, prog); err != nil {
		cur.Close()
		return false, nil, err
	}
	info, err := prog.Info()
	if err == nil {
		id, _ := info.ID()
		l.setProgramID(a, id)
	}
	return true, cur, nil
}

func (l *Loader) setProgram(a *attachment, prog *ebpf.Program) error {
	if a.lnk != nil {
		if err := a.lnk.Update(prog); err != nil {
			return asNotSupported(fmt.Errorf("update %s link of %s: %w", a.Mode, a.Interface, err))
		}
		return nil
	}
	tcnl, err := l.openTC()
	if err != nil {
		return err
	}
	defer tcnl.Close()
	if err := l.setFilter(tcnl, a.Ifindex, prog, a.Program, true); err != nil {
		return fmt.Errorf("replace tc filter of %s: %w", a.Interface, err)
	}
	return nil
}

// retargetAll switches every attachment to coll's programs. On error it
// has already switched back the ones it changed; otherwise the returned
// undo does that.
func (l *Loader) retargetAll(coll *ebpf.Collection) (func(), error) {
	type done struct {
		a   *attachment
		old *ebpf.Program
	}
	var changed []done
	undo := func() {
		for i := len(changed) - 1; i >= 0; i-- {
			d := changed[i]
			if err := l.setProgram(d.a, d.old); err != nil {
				l.opts.Logger.Error("roll back program", "interface", d.a.Interface, "err", err)
			} else if info, err := d.old.Info(); err == nil {
				id, _ := info.ID()
				l.setProgramID(d.a, id)
			}
			d.old.Close()
		}
		l.report.Updated = 0
	}
	for _, name := range l.attachedNames() {
		a := l.atts[name]
		progName := l.opts.TCProgram
		if a.Mode.IsXDP() {
			progName = l.opts.XDPProgram
		}
		prog := coll.Programs[progName]
		if prog == nil {
			undo()
			return nil, fmt.Errorf("%s attachment of %s: %s: %w", a.Mode, name, progName, ErrNoProgram)
		}
		ok, old, err := l.retarget(a, prog)
		if err != nil {
			undo()
			return nil, err
		}
		if ok {
			changed = append(changed, done{a, old})
			l.report.Updated++
			l.opts.Logger.Info("switched program in place", "interface", name, "mode", a.Mode, "program", a.ProgramID)
		}
	}
	return undo, nil
}

func (l *Loader) attachedNames() []string {
	names := make([]string, 0, len(l.atts))
	for n := range l.atts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// discover adopts the attachments an earlier process left (what scan finds), after tidying up what scan
// reported: pins of defunct links go, a pin follows its renamed interface, and a legacy tc filter behind a
// pinned link of the same interface is deleted.
func (l *Loader) discover() error {
	s, err := l.scan()
	if err != nil {
		return err
	}
	for _, name := range s.names() {
		// Tracked from here on, so that closeHandles releases the links should Load fail below.
		l.atts[name] = s.atts[name].attachment
		l.report.Adopted++
	}
	for _, path := range s.defunct {
		// The device is gone; the link is defunct.
		l.opts.Logger.Info("removing pin of defunct link", "pin", path)
		if err := removePin(path); err != nil {
			return err
		}
	}
	if len(s.duplicateFilters) > 0 {
		tcnl, err := l.openTC()
		if err != nil {
			return err
		}
		defer tcnl.Close()
		for _, iface := range s.duplicateFilters {
			// A mode switch died half-way: the link forwards, the filter
			// behind it only passes packets on. Drop the filter.
			l.opts.Logger.Info("removing duplicate legacy tc filter", "interface", iface.Name, "kept", l.atts[iface.Name].Mode)
			if err := l.deleteFilter(tcnl, iface.Index); err != nil {
				return fmt.Errorf("%s: %w", iface.Name, err)
			}
		}
	}
	for _, name := range s.names() {
		if f := s.atts[name]; f.renamedFrom != "" {
			if err := movePin(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// movePin moves the pin of a link whose interface was renamed since to the path of the new name.
func movePin(f *found) error {
	if err := os.Rename(f.renamedFrom, f.Pin); err != nil {
		return fmt.Errorf("rename pin %s after interface rename: %w", f.renamedFrom, err)
	}
	// Reopened from the new pin, the handle knows its path.
	lnk, err := link.LoadPinnedLink(f.Pin, nil)
	if err != nil {
		return fmt.Errorf("open pinned link %s: %w", f.Pin, err)
	}
	f.lnk.Close()
	f.lnk = lnk
	return nil
}

// Attachments returns our attachment of every interface, sorted by name.
func (l *Loader) Attachments() []Attachment {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Attachment, 0, len(l.atts))
	for _, name := range l.attachedNames() {
		out = append(out, l.atts[name].Attachment)
	}
	return out
}

// Detach removes our attachment from ifname (our pinned link or our
// cls_bpf filter); other owners' tc filters, tcx programs and XDP
// programs stay. Detaching an interface we are not attached to is a no-op.
func (l *Loader) Detach(ctx context.Context, ifname string) error {
	l.ops.RLock()
	defer l.ops.RUnlock()
	defer l.ifaces.lock(ifname)()
	if l.isClosed() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	a := l.lookup(ifname)
	if a == nil {
		return nil
	}
	if err := netnsrun.Run(l.opts.NetNS, func() error { return l.detachOne(a) }); err != nil {
		return err
	}
	l.forget(ifname)
	return nil
}

// DetachAll removes every attachment we own, including links pinned in
// our links dir that this process did not track.
func (l *Loader) DetachAll(ctx context.Context) error {
	l.ops.Lock()
	defer l.ops.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return netnsrun.Run(l.opts.NetNS, func() error { return l.detachAll(ctx) })
}

func (l *Loader) detachAll(ctx context.Context) error {
	var errs []error
	for _, name := range l.attachedNames() {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := l.detachOne(l.atts[name]); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(l.atts, name)
	}
	for _, kind := range []string{kindTCX, kindXDP} {
		entries, err := os.ReadDir(l.linkKindDir(kind))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			path := filepath.Join(l.linkKindDir(kind), e.Name())
			lnk, err := link.LoadPinnedLink(path, nil)
			if err != nil {
				errs = append(errs, fmt.Errorf("open pinned link %s: %w", path, err))
				continue
			}
			errs = append(errs, detachLink(lnk, path))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach all: %w", err)
	}
	return nil
}

func (l *Loader) detachOne(a *attachment) error {
	if a.Mode != ModeTC {
		if a.lnk == nil {
			return nil // detached already
		}
		err := detachLink(a.lnk, a.Pin)
		a.lnk = nil
		if err != nil {
			return fmt.Errorf("detach %s from %s: %w", a.Mode, a.Interface, err)
		}
		l.opts.Logger.Info("detached", "interface", a.Interface, "mode", a.Mode)
		return nil
	}
	tcnl, err := l.openTC()
	if err != nil {
		return fmt.Errorf("detach tc from %s: %w", a.Interface, err)
	}
	defer tcnl.Close()
	f, err := l.findFilter(tcnl, a.Ifindex)
	if err != nil {
		return fmt.Errorf("detach tc from %s: %w", a.Interface, err)
	}
	if f == nil || !l.ownsFilter(f) {
		l.opts.Logger.Warn("our tc filter is gone; nothing to detach", "interface", a.Interface, "found", filterName(f))
		return nil
	}
	if err := l.deleteFilter(tcnl, a.Ifindex); err != nil {
		return fmt.Errorf("detach tc from %s: %w", a.Interface, err)
	}
	l.opts.Logger.Info("detached", "interface", a.Interface, "mode", a.Mode)
	return nil
}

// detachLink detaches explicitly (another holder of the fd, e.g. a
// still-running old process, would otherwise keep it attached), then
// unpins and closes it.
func detachLink(lnk link.Link, pin string) error {
	derr := lnk.Detach()
	if errors.Is(derr, link.ErrNotSupported) || errors.Is(derr, unix.ENOLINK) || errors.Is(derr, unix.ENODEV) {
		derr = nil // defunct already, or closing the last reference detaches it
	}
	uerr := removePin(pin)
	lnk.Close()
	return errors.Join(derr, uerr)
}
