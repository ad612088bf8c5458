package maps

import (
	"fmt"

	"github.com/network-operator/network-operator/bpf"
)

// Reason is why the router forwarded, passed or dropped a packet (enum reason
// in bpf/router.h). Each packet is counted under exactly one reason.
type Reason uint32

// NumReasons is the number of reasons the program counts.
const NumReasons = int(bpf.RouterReasonREASON_MAX)

const (
	ReasonForwardedFib       = Reason(bpf.RouterReasonREASON_FWD_FIB)
	ReasonForwardedNeigh     = Reason(bpf.RouterReasonREASON_FWD_NEIGH)
	ReasonRedirected         = Reason(bpf.RouterReasonREASON_REDIRECT)
	ReasonRedirectedPeer     = Reason(bpf.RouterReasonREASON_REDIRECT_PEER)
	ReasonPassedNoIface      = Reason(bpf.RouterReasonREASON_PASS_NO_IFACE)
	ReasonPassedMode         = Reason(bpf.RouterReasonREASON_PASS_MODE)
	ReasonPassedNotIP        = Reason(bpf.RouterReasonREASON_PASS_NOT_IP)
	ReasonPassedNotUnicast   = Reason(bpf.RouterReasonREASON_PASS_NOT_UNICAST)
	ReasonPassedMartian      = Reason(bpf.RouterReasonREASON_PASS_MARTIAN)
	ReasonPassedLinkLocal    = Reason(bpf.RouterReasonREASON_PASS_LINK_LOCAL)
	ReasonPassedND           = Reason(bpf.RouterReasonREASON_PASS_ND)
	ReasonPassedTTL          = Reason(bpf.RouterReasonREASON_PASS_TTL)
	ReasonPassedFragment     = Reason(bpf.RouterReasonREASON_PASS_FRAGMENT)
	ReasonPassedOptions      = Reason(bpf.RouterReasonREASON_PASS_OPTIONS)
	ReasonPassedExtHeader    = Reason(bpf.RouterReasonREASON_PASS_EXT_HEADER)
	ReasonPassedMalformed    = Reason(bpf.RouterReasonREASON_PASS_MALFORMED)
	ReasonPassedNoVRF        = Reason(bpf.RouterReasonREASON_PASS_NO_VRF)
	ReasonPassedNotFwded     = Reason(bpf.RouterReasonREASON_PASS_NOT_FWDED)
	ReasonPassedFwdDisabled  = Reason(bpf.RouterReasonREASON_PASS_FWD_DISABLED)
	ReasonPassedFibOther     = Reason(bpf.RouterReasonREASON_PASS_FIB_OTHER)
	ReasonPassedFragNeeded   = Reason(bpf.RouterReasonREASON_PASS_FRAG_NEEDED)
	ReasonPassedNoNeigh      = Reason(bpf.RouterReasonREASON_PASS_NO_NEIGH)
	ReasonPassedNoRedirect   = Reason(bpf.RouterReasonREASON_PASS_NO_REDIRECT)
	ReasonPassedError        = Reason(bpf.RouterReasonREASON_PASS_ERROR)
	ReasonDroppedMalformed   = Reason(bpf.RouterReasonREASON_DROP_MALFORMED)
	ReasonDroppedNoVRF       = Reason(bpf.RouterReasonREASON_DROP_NO_VRF)
	ReasonDroppedFwdDisabled = Reason(bpf.RouterReasonREASON_DROP_FWD_DISABLED)
	ReasonDroppedFib         = Reason(bpf.RouterReasonREASON_DROP_FIB)
	ReasonDroppedNoRedirect  = Reason(bpf.RouterReasonREASON_DROP_NO_REDIRECT)
)

// reasonNames are stable: metrics labels and CLI output use them.
var reasonNames = [NumReasons]string{
	ReasonForwardedFib:       "forwarded-fib",
	ReasonForwardedNeigh:     "forwarded-neigh",
	ReasonRedirected:         "redirected",
	ReasonRedirectedPeer:     "redirected-peer",
	ReasonPassedNoIface:      "passed-no-iface",
	ReasonPassedMode:         "passed-mode",
	ReasonPassedNotIP:        "passed-not-ip",
	ReasonPassedNotUnicast:   "passed-not-unicast",
	ReasonPassedMartian:      "passed-martian",
	ReasonPassedLinkLocal:    "passed-link-local",
	ReasonPassedND:           "passed-nd",
	ReasonPassedTTL:          "passed-ttl",
	ReasonPassedFragment:     "passed-fragment",
	ReasonPassedOptions:      "passed-options",
	ReasonPassedExtHeader:    "passed-ext-header",
	ReasonPassedMalformed:    "passed-malformed",
	ReasonPassedNoVRF:        "passed-no-vrf",
	ReasonPassedNotFwded:     "passed-not-fwded",
	ReasonPassedFwdDisabled:  "passed-fwd-disabled",
	ReasonPassedFibOther:     "passed-fib-other",
	ReasonPassedFragNeeded:   "passed-frag-needed",
	ReasonPassedNoNeigh:      "passed-no-neigh",
	ReasonPassedNoRedirect:   "passed-no-redirect",
	ReasonPassedError:        "passed-error",
	ReasonDroppedMalformed:   "dropped-malformed",
	ReasonDroppedNoVRF:       "dropped-no-vrf",
	ReasonDroppedFwdDisabled: "dropped-fwd-disabled",
	ReasonDroppedFib:         "dropped-fib",
	ReasonDroppedNoRedirect:  "dropped-no-redirect",
}

// Reasons returns every reason in enum order.
func Reasons() []Reason {
	rs := make([]Reason, NumReasons)
	for i := range rs {
		rs[i] = Reason(i)
	}
	return rs
}

func (r Reason) String() string {
	if int(r) < NumReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint32(r))
}

// ParseReason is the inverse of Reason.String.
func ParseReason(s string) (Reason, error) {
	for i, n := range reasonNames {
		if n == s {
			return Reason(i), nil
		}
	}
	return 0, fmt.Errorf("unknown reason %q", s)
}

func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

func (r *Reason) UnmarshalText(b []byte) error {
	v, err := ParseReason(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Action is what happened to the packet.
type Action string

const (
	ActionForwarded Action = "forwarded" // redirected by the program
	ActionPassed    Action = "passed"    // handed to the kernel unchanged
	ActionDropped   Action = "dropped"   // dropped (strict interfaces only)
)

// Action of the reason.
func (r Reason) Action() Action {
	switch {
	case r <= ReasonRedirectedPeer:
		return ActionForwarded
	case r >= ReasonDroppedMalformed:
		return ActionDropped
	default:
		return ActionPassed
	}
}
