package dataplane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
)

// ErrReadOnly is returned by the changing methods of a View.
var ErrReadOnly = errors.New("read-only view of the data plane (dry run)")

// View is a read-only look at the router pinned in a directory, for dry runs: Load would create pins or swap
// programs, a View only reads. Its maps come from the pins (empty when nothing is pinned yet) and its
// attachments from the pinned tcx and XDP links (legacy tc filters are not listed: a dry run shows them as
// attachments to make).
type View struct {
	set   *maps.Set
	atts  []loader.Attachment
	links *netlink.Handle
}

// OpenView opens the pinned maps and lists the pinned links of pinDir; links resolves ifindexes to names.
func OpenView(pinDir string, links *netlink.Handle) (*View, error) {
	if pinDir == "" {
		pinDir = loader.DefaultPinDir
	}
	v := &View{links: links}
	if _, err := os.Stat(filepath.Join(pinDir, maps.MapVersion)); err == nil {
		set, err := maps.OpenPinned(pinDir)
		if err != nil {
			return nil, err
		}
		v.set = set
	}
	for _, kind := range []string{"tcx", "xdp"} {
		dir := filepath.Join(pinDir, "links", kind)
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			v.Close()
			return nil, fmt.Errorf("list pinned links: %w", err)
		}
		for _, e := range entries {
			a, ok := v.pinnedAttachment(filepath.Join(dir, e.Name()), kind)
			if ok {
				v.atts = append(v.atts, a)
			}
		}
	}
	return v, nil
}

func (v *View) pinnedAttachment(path, kind string) (loader.Attachment, bool) {
	lnk, err := link.LoadPinnedLink(path, nil)
	if err != nil {
		return loader.Attachment{}, false
	}
	defer lnk.Close()
	info, err := lnk.Info()
	if err != nil {
		return loader.Attachment{}, false
	}
	var ifindex uint32
	mode := loader.ModeTCX
	switch {
	case kind == "tcx" && info.TCX() != nil:
		ifindex = info.TCX().Ifindex
	case kind == "xdp" && info.XDP() != nil:
		ifindex, mode = info.XDP().Ifindex, loader.ModeXDPNative
	}
	if ifindex == 0 {
		return loader.Attachment{}, false
	}
	dev, err := v.links.LinkByIndex(int(ifindex))
	if err != nil {
		return loader.Attachment{}, false
	}
	if x := dev.Attrs().Xdp; mode.IsXDP() && x != nil && x.AttachMode == nl.XDP_ATTACHED_SKB {
		mode = loader.ModeXDPGeneric
	}
	return loader.Attachment{Interface: dev.Attrs().Name, Ifindex: int(ifindex), Mode: mode, Requested: mode,
		ProgramID: info.Program, LinkID: info.ID, Pin: path, Adopted: true,
		Reason: "pinned " + strings.TrimSuffix(kind, "/") + " link"}, true
}

// Close releases the maps.
func (v *View) Close() error {
	if v.set != nil {
		return v.set.Close()
	}
	return nil
}

// Attachments lists the pinned tcx and XDP attachments.
func (v *View) Attachments() []loader.Attachment { return v.atts }

// Live reads the live tables (empty when nothing is pinned).
func (v *View) Live(ctx context.Context) (maps.Snapshot, error) {
	if v.set == nil {
		return maps.Snapshot{}, nil
	}
	return v.set.Dump(ctx)
}

// Version reads the version map (zero when nothing is pinned).
func (v *View) Version() (maps.Version, error) {
	if v.set == nil {
		return maps.Version{}, nil
	}
	return v.set.Version()
}

// Counters reads the counters (none when nothing is pinned).
func (v *View) Counters() ([]maps.VRFCounters, error) {
	if v.set == nil {
		return nil, nil
	}
	return v.set.Counters()
}

// Ensure is refused: a View changes nothing.
func (v *View) Ensure(context.Context, []v1.DataPlaneInterface) ([]v1.InterfaceStatus, error) {
	return nil, ErrReadOnly
}

// DetachExcept is refused: a View changes nothing.
func (v *View) DetachExcept(context.Context, []v1.DataPlaneInterface) error { return ErrReadOnly }

// Apply is refused: a View changes nothing.
func (v *View) Apply(context.Context, maps.Tables, string) (maps.Report, error) {
	return maps.Report{}, ErrReadOnly
}

// Verify is refused: a View changes nothing.
func (v *View) Verify([]v1.DataPlaneInterface) error { return ErrReadOnly }
