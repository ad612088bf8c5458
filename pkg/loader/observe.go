package loader

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Defunct reports whether a went away with its device: the interface of its name now has another ifindex
// (deleted and re-created under the same name) or none (ifindex 0: gone). Links and cls_bpf filters are bound
// to the ifindex they were made on, so such an attachment runs nothing and the interface needs a new one.
// Every "was the device re-created?" decision asks this: Attach, and the planners and checks of its callers.
func (a Attachment) Defunct(ifindex int) bool { return a.Ifindex != ifindex }

// Observe lists the router's attachments in opts.NetNS as the next Load would adopt them - the tcx and XDP
// links pinned under opts.PinDir and our cls_bpf filters - without changing anything: nothing is loaded or
// pinned, and what adoption tidies up is only left out or reported as it will be (a defunct link is not
// listed, a link whose interface was renamed is listed under the new name with the pin path Load moves it to,
// a legacy filter behind a pinned link of the same interface is not listed). It is the read-only view of
// dry runs. Only the fields that name our objects are used (PinDir, TCProgram, XDPProgram, Owner,
// TCPriority, TCHandle), plus NetNS and Logger; Spec is not loaded.
func Observe(ctx context.Context, opts Options) ([]Attachment, error) {
	opts, err := opts.withLayoutDefaults()
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l := &Loader{opts: opts}
	var out []Attachment
	err = netnsrun.Run(opts.NetNS, func() error {
		s, err := l.scan()
		if err != nil {
			return err
		}
		defer s.close()
		for _, name := range s.names() {
			out = append(out, s.atts[name].Attachment)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("observe attachments in %s: %w", opts.PinDir, err)
	}
	return out, nil
}

// found is an attachment scan found, with its link open (nil for legacy tc).
type found struct {
	*attachment
	// renamedFrom is the pin's path when its interface was renamed since (Pin is the path of the new name).
	renamedFrom string
}

// scanned is what scan found. Adopting it (discover) removes the defunct pins and the duplicate filters and
// moves renamed pins; a read-only Observe only reports the attachments.
type scanned struct {
	atts map[string]*found // by interface name
	// defunct are pins of links whose device is gone.
	defunct []string
	// duplicateFilters are interfaces with both a pinned link and our legacy tc filter.
	duplicateFilters []net.Interface
}

func (s *scanned) names() []string {
	names := make([]string, 0, len(s.atts))
	for n := range s.atts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// close releases the links of attachments nobody adopted.
func (s *scanned) close() {
	for _, f := range s.atts {
		if f.lnk != nil {
			f.lnk.Close()
			f.lnk = nil
		}
	}
}

// scan finds the attachments an earlier process left: pinned tcx and XDP links under links/, and our cls_bpf
// filters on any interface of the current thread's namespace. It changes nothing. The one bpffs layout and
// ownership rule of Load and Observe.
func (l *Loader) scan() (s *scanned, err error) {
	s = &scanned{atts: map[string]*found{}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	for _, kind := range []string{kindTCX, kindXDP} {
		entries, err := os.ReadDir(l.linkKindDir(kind))
		if errors.Is(err, fs.ErrNotExist) {
			continue // nothing was ever pinned (Observe before the first Load)
		}
		if err != nil {
			return nil, fmt.Errorf("list pinned %s links: %w", kind, err)
		}
		for _, e := range entries {
			path := filepath.Join(l.linkKindDir(kind), e.Name())
			if err := l.scanLink(s, unescapePinName(e.Name()), kind, path); err != nil {
				return nil, err
			}
		}
	}

	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	tcnl, err := l.openTC()
	if err != nil {
		return nil, err
	}
	defer tcnl.Close()
	for _, iface := range ifaces {
		f, err := l.findFilter(tcnl, iface.Index)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", iface.Name, err)
		}
		if f == nil || !l.ownsFilter(f) {
			continue
		}
		if s.atts[iface.Name] != nil {
			s.duplicateFilters = append(s.duplicateFilters, iface)
			continue
		}
		prog := strings.TrimPrefix(filterName(f), l.opts.Owner+":")
		s.atts[iface.Name] = &found{attachment: &attachment{Attachment: Attachment{
			Interface: iface.Name, Ifindex: iface.Index, Requested: ModeTC, Mode: ModeTC,
			Reason: "adopted legacy tc filter", Program: prog, ProgramID: filterProgramID(f), Adopted: true,
		}}}
	}
	return s, nil
}

// scanLink adds the pinned link at path (named for interface ifname, of kind) to s.
func (l *Loader) scanLink(s *scanned, ifname, kind, path string) error {
	lnk, err := link.LoadPinnedLink(path, nil)
	if err != nil {
		return fmt.Errorf("open pinned link %s: %w", path, err)
	}
	info, err := lnk.Info()
	if err != nil {
		lnk.Close()
		return fmt.Errorf("pinned link %s info: %w", path, err)
	}
	var ifindex uint32
	switch {
	case kind == kindTCX && info.Type == link.TCXType && info.TCX() != nil:
		ifindex = info.TCX().Ifindex
	case kind == kindXDP && info.Type == link.XDPType && info.XDP() != nil:
		ifindex = info.XDP().Ifindex
	default:
		lnk.Close()
		return fmt.Errorf("pinned link %s: type %v does not match its name", path, info.Type)
	}
	if ifindex == 0 {
		lnk.Close()
		s.defunct = append(s.defunct, path)
		return nil
	}
	iface, err := interfaceByIndex(int(ifindex))
	if err != nil {
		l.opts.Logger.Warn("pinned link's interface not in this namespace; left alone", "pin", path, "ifindex", ifindex)
		lnk.Close()
		return nil
	}
	mode := ModeTCX
	if kind == kindXDP {
		mode = ModeXDPNative
		if dev, err := netlink.LinkByIndex(iface.Index); err == nil && dev.Attrs().Xdp != nil &&
			dev.Attrs().Xdp.AttachMode == nl.XDP_ATTACHED_SKB {
			mode = ModeXDPGeneric
		}
	}
	if prev := s.atts[iface.Name]; prev != nil {
		lnk.Close()
		return fmt.Errorf("interface %s has two pinned links (%s and %s)", iface.Name, prev.Pin, path)
	}
	progName := l.opts.TCProgram
	if mode.IsXDP() {
		progName = l.opts.XDPProgram
	}
	f := &found{attachment: &attachment{
		Attachment: Attachment{
			Interface: iface.Name, Ifindex: iface.Index, Requested: mode, Mode: mode,
			Reason: "adopted pinned " + string(mode) + " link", Program: progName,
			ProgramID: info.Program, LinkID: info.ID, Pin: path, Adopted: true,
		},
		lnk: lnk,
	}}
	if iface.Name != ifname {
		// Renamed since: adoption moves the pin along.
		f.renamedFrom, f.Pin = path, l.linkPin(iface.Name, mode)
	}
	s.atts[iface.Name] = f
	return nil
}
