package nodenet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Features are the kernel capabilities nodenet depends on.
type Features struct {
	VRF  bool // VRF devices can be created
	VLAN bool // 802.1Q VLAN devices can be created
	// Dummy devices can be created (loopbacks; without them an empty bridge stands in).
	Dummy bool
	// VRFReason, VLANReason and DummyReason say why a feature is missing ("" when present).
	VRFReason   string
	VLANReason  string
	DummyReason string
}

// Probe detects the kernel's link kinds without creating anything: it asks for a link of the kind with an
// argument the kind's driver rejects (a VRF with table 0, a VLAN without a parent, a dummy with a 5-byte MAC). A kernel without the driver
// answers EOPNOTSUPP ("Unknown device type") before any argument is looked at; one with it answers EINVAL.
func Probe(ctx context.Context, h *netlink.Handle) (Features, error) {
	var f Features
	suffix, err := probeSuffix()
	if err != nil {
		return f, err
	}
	vrfErr := probeKind(ctx, h, &netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: "nop-vrf" + suffix}, Table: 0})
	switch {
	case vrfErr == nil:
		f.VRF = true
	case errors.Is(vrfErr, ErrNotSupported):
		f.VRFReason = vrfErr.Error()
	default:
		return f, vrfErr
	}
	vlanErr := probeKind(ctx, h, &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "nop-vl" + suffix}, VlanId: 1})
	switch {
	case vlanErr == nil:
		f.VLAN = true
	case errors.Is(vlanErr, ErrNotSupported):
		f.VLANReason = vlanErr.Error()
	default:
		return f, vlanErr
	}
	dummyErr := probeKind(ctx, h, &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "nop-dm" + suffix,
		HardwareAddr: net.HardwareAddr{2, 0, 0, 0, 0}}})
	switch {
	case dummyErr == nil:
		f.Dummy = true
	case errors.Is(dummyErr, ErrNotSupported):
		f.DummyReason = dummyErr.Error()
	default:
		return f, dummyErr
	}
	return f, nil
}

func probeSuffix() (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("probe name: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// probeKind returns nil when the kind exists, an error wrapping ErrNotSupported when it does not.
func probeKind(ctx context.Context, h *netlink.Handle, l netlink.Link) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	kind := l.Type()
	err := h.LinkAdd(l)
	switch {
	case err == nil:
		// The driver accepted the invalid argument after all: it exists. Remove the probe link.
		if derr := h.LinkDel(l); derr != nil {
			return fmt.Errorf("probe %s: remove probe link %s: %w", kind, l.Attrs().Name, derr)
		}
		return nil
	case errors.Is(err, unix.EINVAL):
		return nil
	case errors.Is(err, unix.EOPNOTSUPP):
		sentinel := ErrNotSupported
		switch kind {
		case "vrf":
			sentinel = ErrVRFNotSupported
		case "vlan":
			sentinel = ErrVLANNotSupported
		case "dummy":
			sentinel = ErrDummyNotSupported
		}
		return fmt.Errorf("%w (creating a %s link: %v)", sentinel, kind, err)
	default:
		return fmt.Errorf("probe %s link support: %w", kind, err)
	}
}
