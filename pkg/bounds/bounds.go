// Package bounds holds the ranges protocols and the kernel put on numbers and names: the one place the API's
// schemas and validator (api/v1alpha1 states its limits as these), the libraries under pkg/ (which do not depend
// on the API types) and the agent take them from.
package bounds

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// MinVNI and MaxVNI bound a VXLAN network identifier (24 bits; 0 is reserved).
	MinVNI = 1
	MaxVNI = 1<<24 - 1
	// MinVLAN and MaxVLAN bound an 802.1Q VLAN id (0 and 4095 are reserved).
	MinVLAN = 1
	MaxVLAN = 4094
	// MinTableID and MaxTableID bound a kernel routing table id (32 bits; 0 is "unspecified").
	MinTableID = 1
	MaxTableID = math.MaxUint32
	// MaxInterfaceNameLen is the kernel's IFNAMSIZ-1: the longest network interface name.
	MaxInterfaceNameLen = 15
	// MinASN and MaxASN bound an AS number, local or remote: 0 (RFC 7607) and 4294967295 (RFC 7300) are reserved.
	MinASN = 1
	MaxASN = math.MaxUint32 - 1
	// MinHoldTimeSeconds and MaxHoldTimeSeconds bound a BGP hold time (RFC 4271: 0 or at least 3 s; a 16-bit
	// field; 0 is not offered).
	MinHoldTimeSeconds = 3
	MaxHoldTimeSeconds = 65535
	// DefaultDenyRouteMapSeq is the route-map entry rendered after all others, denying the rest; MinRouteMapSeq
	// and MaxRouteMapSeq bound the entries before it.
	DefaultDenyRouteMapSeq = 65535
	MinRouteMapSeq         = 1
	MaxRouteMapSeq         = DefaultDenyRouteMapSeq - 1
)

// VNI checks a VXLAN network identifier that must be set: the one range check of a VNI for the API's validator,
// the operator, the agent and pkg/frr. A table that may hold "no VNI" (0) checks MaxVNI alone.
func VNI(path *field.Path, vni int64) field.ErrorList {
	if vni < MinVNI || vni > MaxVNI {
		return field.ErrorList{field.Invalid(path, vni, fmt.Sprintf("VNI must be within %d..%d", MinVNI, MaxVNI))}
	}
	return nil
}
