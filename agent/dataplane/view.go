package dataplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vishvananda/netns"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
)

// ErrReadOnly is returned by the changing methods of a View.
var ErrReadOnly = errors.New("read-only view of the data plane (dry run)")

// View is a read-only look at the router pinned in a directory, for dry runs: Load would create pins or swap
// programs, a View only reads. Its maps come from the pins (empty when nothing is pinned yet) and its
// attachments from loader.Observe, which reads them exactly as the next Load adopts them (pinned tcx and XDP
// links, legacy tc filters), so a dry run plans against what the apply starts from.
type View struct {
	set  *maps.Set
	atts []loader.Attachment
}

// OpenView opens the pinned maps of pinDir and observes the router's attachments in namespace ns (0: the
// caller's).
func OpenView(ctx context.Context, pinDir string, ns netns.NsHandle) (*View, error) {
	if pinDir == "" {
		pinDir = loader.DefaultPinDir
	}
	atts, err := loader.Observe(ctx, loader.Options{PinDir: pinDir, NetNS: ns})
	if err != nil {
		return nil, fmt.Errorf("read-only view: %w", err)
	}
	v := &View{atts: atts}
	if _, err := os.Stat(filepath.Join(pinDir, maps.MapVersion)); err == nil {
		set, err := maps.OpenPinned(pinDir)
		if err != nil {
			return nil, fmt.Errorf("read-only view: %w", err)
		}
		v.set = set
	}
	return v, nil
}

// Close releases the maps.
func (v *View) Close() error {
	if v.set != nil {
		return v.set.Close()
	}
	return nil
}

// Attachments lists the attachments as the next Load adopts them.
func (v *View) Attachments() []loader.Attachment { return v.atts }

// Live reads the live tables (empty when nothing is pinned).
func (v *View) Live(ctx context.Context) (maps.Snapshot, error) {
	if v.set == nil {
		return maps.Snapshot{}, nil
	}
	return v.set.DumpTables(ctx)
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
func (v *View) Ensure(context.Context, []AttachStep) ([]v1.InterfaceStatus, error) {
	return nil, ErrReadOnly
}

// Detach is refused: a View changes nothing.
func (v *View) Detach(context.Context, []AttachStep) error { return ErrReadOnly }

// Apply is refused: a View changes nothing.
func (v *View) Apply(context.Context, maps.Tables, string) (maps.Report, error) {
	return maps.Report{}, ErrReadOnly
}

// Verify is refused: a View changes nothing.
func (v *View) Verify([]v1.DataPlaneInterface, LinkLookup) error { return ErrReadOnly }
