package nodenet

import (
	"errors"
	"fmt"
)

var (
	// ErrNotSupported: the kernel lacks a feature nodenet needs for an object.
	ErrNotSupported = errors.New("not supported by this kernel")
	// ErrVRFNotSupported: the kernel cannot create VRF devices (VRFs become table-only in auto mode).
	ErrVRFNotSupported = fmt.Errorf("vrf devices: %w", ErrNotSupported)
	// ErrVLANNotSupported: the kernel cannot create 802.1Q VLAN devices.
	ErrVLANNotSupported = fmt.Errorf("802.1Q vlan devices: %w", ErrNotSupported)
	// ErrTableLookupNotSupported: the data path cannot look up a routing table by id (Settings.NoTableLookup), so
	// VRFs need devices and source-based routing is refused.
	ErrTableLookupNotSupported = fmt.Errorf("routing table lookups by id in the data path: %w", ErrNotSupported)
	// ErrDummyNotSupported: the kernel cannot create dummy devices (loopbacks get an empty bridge instead).
	ErrDummyNotSupported = fmt.Errorf("dummy devices: %w", ErrNotSupported)
	// ErrConflict: a link that is not nodenet's holds a name nodenet needs.
	ErrConflict = errors.New("name held by a link the agent does not own")
	// ErrNotOwned: an apply step found a link it was about to change or delete no longer owned by nodenet.
	ErrNotOwned = errors.New("link is not owned by the agent")
)

// Link MTU bounds of the kernel (IPv4's minimum, the 16-bit field); invalid input matches fielderr.ErrInvalid.
const (
	minLinkMTU = 68
	maxLinkMTU = 65535
)

// ActionError is the failure of one action: it names the action (object and value) and wraps the kernel error.
type ActionError struct {
	Action Action
	Err    error
}

func (e *ActionError) Error() string { return fmt.Sprintf("%s: %v", e.Action, e.Err) }

func (e *ActionError) Unwrap() error { return e.Err }
