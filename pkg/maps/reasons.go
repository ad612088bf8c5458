package maps

import (
	"fmt"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
)

// Reason is why the router forwarded, passed or dropped a packet (enum reason
// in bpf/router.h). Each packet is counted under exactly one reason. A Reason
// is the reason's counter slot in vrf_stats (0..NumReasons-1); the C value
// also carries the reason's class, which Action decodes.
type Reason uint32

// NumReasons is the number of reasons the program counts (REASON_MAX): the
// slots 0..NumReasons-1 of vrf_stats. It is not a size of any map: the value
// of vrf_counters has ReasonSlots counters however many reasons there are.
const NumReasons = int(bpf.RouterReasonREASON_MAX)

// ReasonSlots is the number of counters per VRF (REASON_SLOTS), at least NumReasons.
const ReasonSlots = limits.ReasonSlots

// slotOf is the counter slot of a C reason value.
func slotOf(r bpf.RouterReason) Reason { return Reason(r & limits.ReasonSlotMask) }

const (
	ReasonForwardedFib       = Reason(bpf.RouterReasonREASON_FWD_FIB & limits.ReasonSlotMask)
	ReasonForwardedNeigh     = Reason(bpf.RouterReasonREASON_FWD_NEIGH & limits.ReasonSlotMask)
	ReasonRedirected         = Reason(bpf.RouterReasonREASON_REDIRECT & limits.ReasonSlotMask)
	ReasonRedirectedPeer     = Reason(bpf.RouterReasonREASON_REDIRECT_PEER & limits.ReasonSlotMask)
	ReasonPassedNoIface      = Reason(bpf.RouterReasonREASON_PASS_NO_IFACE & limits.ReasonSlotMask)
	ReasonPassedMode         = Reason(bpf.RouterReasonREASON_PASS_MODE & limits.ReasonSlotMask)
	ReasonPassedNotIP        = Reason(bpf.RouterReasonREASON_PASS_NOT_IP & limits.ReasonSlotMask)
	ReasonPassedNotUnicast   = Reason(bpf.RouterReasonREASON_PASS_NOT_UNICAST & limits.ReasonSlotMask)
	ReasonPassedMartian      = Reason(bpf.RouterReasonREASON_PASS_MARTIAN & limits.ReasonSlotMask)
	ReasonPassedLinkLocal    = Reason(bpf.RouterReasonREASON_PASS_LINK_LOCAL & limits.ReasonSlotMask)
	ReasonPassedND           = Reason(bpf.RouterReasonREASON_PASS_ND & limits.ReasonSlotMask)
	ReasonPassedTTL          = Reason(bpf.RouterReasonREASON_PASS_TTL & limits.ReasonSlotMask)
	ReasonPassedFragment     = Reason(bpf.RouterReasonREASON_PASS_FRAGMENT & limits.ReasonSlotMask)
	ReasonPassedOptions      = Reason(bpf.RouterReasonREASON_PASS_OPTIONS & limits.ReasonSlotMask)
	ReasonPassedExtHeader    = Reason(bpf.RouterReasonREASON_PASS_EXT_HEADER & limits.ReasonSlotMask)
	ReasonPassedMalformed    = Reason(bpf.RouterReasonREASON_PASS_MALFORMED & limits.ReasonSlotMask)
	ReasonPassedNoVRF        = Reason(bpf.RouterReasonREASON_PASS_NO_VRF & limits.ReasonSlotMask)
	ReasonPassedNotFwded     = Reason(bpf.RouterReasonREASON_PASS_NOT_FWDED & limits.ReasonSlotMask)
	ReasonPassedFwdDisabled  = Reason(bpf.RouterReasonREASON_PASS_FWD_DISABLED & limits.ReasonSlotMask)
	ReasonPassedFibOther     = Reason(bpf.RouterReasonREASON_PASS_FIB_OTHER & limits.ReasonSlotMask)
	ReasonPassedFragNeeded   = Reason(bpf.RouterReasonREASON_PASS_FRAG_NEEDED & limits.ReasonSlotMask)
	ReasonPassedNoNeigh      = Reason(bpf.RouterReasonREASON_PASS_NO_NEIGH & limits.ReasonSlotMask)
	ReasonPassedNoRedirect   = Reason(bpf.RouterReasonREASON_PASS_NO_REDIRECT & limits.ReasonSlotMask)
	ReasonPassedError        = Reason(bpf.RouterReasonREASON_PASS_ERROR & limits.ReasonSlotMask)
	ReasonDroppedMalformed   = Reason(bpf.RouterReasonREASON_DROP_MALFORMED & limits.ReasonSlotMask)
	ReasonDroppedNoVRF       = Reason(bpf.RouterReasonREASON_DROP_NO_VRF & limits.ReasonSlotMask)
	ReasonDroppedFwdDisabled = Reason(bpf.RouterReasonREASON_DROP_FWD_DISABLED & limits.ReasonSlotMask)
	ReasonDroppedFib         = Reason(bpf.RouterReasonREASON_DROP_FIB & limits.ReasonSlotMask)
	ReasonDroppedNoRedirect  = Reason(bpf.RouterReasonREASON_DROP_NO_REDIRECT & limits.ReasonSlotMask)
	ReasonForwardedPeer      = Reason(bpf.RouterReasonREASON_FWD_PEER & limits.ReasonSlotMask)
)

// reasonDefs are the C reasons with their names. The names are stable: metrics
// labels and CLI output use them. The class of each reason is not here: it is
// read from the C value (bpf/router.h decides it).
var reasonDefs = [...]struct {
	c    bpf.RouterReason
	name string
}{
	{bpf.RouterReasonREASON_FWD_FIB, "forwarded-fib"},
	{bpf.RouterReasonREASON_FWD_NEIGH, "forwarded-neigh"},
	{bpf.RouterReasonREASON_REDIRECT, "redirected"},
	{bpf.RouterReasonREASON_REDIRECT_PEER, "redirected-peer"},
	{bpf.RouterReasonREASON_PASS_NO_IFACE, "passed-no-iface"},
	{bpf.RouterReasonREASON_PASS_MODE, "passed-mode"},
	{bpf.RouterReasonREASON_PASS_NOT_IP, "passed-not-ip"},
	{bpf.RouterReasonREASON_PASS_NOT_UNICAST, "passed-not-unicast"},
	{bpf.RouterReasonREASON_PASS_MARTIAN, "passed-martian"},
	{bpf.RouterReasonREASON_PASS_LINK_LOCAL, "passed-link-local"},
	{bpf.RouterReasonREASON_PASS_ND, "passed-nd"},
	{bpf.RouterReasonREASON_PASS_TTL, "passed-ttl"},
	{bpf.RouterReasonREASON_PASS_FRAGMENT, "passed-fragment"},
	{bpf.RouterReasonREASON_PASS_OPTIONS, "passed-options"},
	{bpf.RouterReasonREASON_PASS_EXT_HEADER, "passed-ext-header"},
	{bpf.RouterReasonREASON_PASS_MALFORMED, "passed-malformed"},
	{bpf.RouterReasonREASON_PASS_NO_VRF, "passed-no-vrf"},
	{bpf.RouterReasonREASON_PASS_NOT_FWDED, "passed-not-fwded"},
	{bpf.RouterReasonREASON_PASS_FWD_DISABLED, "passed-fwd-disabled"},
	{bpf.RouterReasonREASON_PASS_FIB_OTHER, "passed-fib-other"},
	{bpf.RouterReasonREASON_PASS_FRAG_NEEDED, "passed-frag-needed"},
	{bpf.RouterReasonREASON_PASS_NO_NEIGH, "passed-no-neigh"},
	{bpf.RouterReasonREASON_PASS_NO_REDIRECT, "passed-no-redirect"},
	{bpf.RouterReasonREASON_PASS_ERROR, "passed-error"},
	{bpf.RouterReasonREASON_DROP_MALFORMED, "dropped-malformed"},
	{bpf.RouterReasonREASON_DROP_NO_VRF, "dropped-no-vrf"},
	{bpf.RouterReasonREASON_DROP_FWD_DISABLED, "dropped-fwd-disabled"},
	{bpf.RouterReasonREASON_DROP_FIB, "dropped-fib"},
	{bpf.RouterReasonREASON_DROP_NO_REDIRECT, "dropped-no-redirect"},
	{bpf.RouterReasonREASON_FWD_PEER, "forwarded-peer"},
}

// A reason added in C without a name here (or the reverse) does not compile.
var _ [NumReasons]struct{} = [len(reasonDefs)]struct{}{}

// reasonName and reasonValue are indexed by slot; reasonValue is the C value.
var reasonName, reasonValue = func() (names [NumReasons]string, values [NumReasons]bpf.RouterReason) {
	for _, d := range reasonDefs {
		s := slotOf(d.c)
		if int(s) >= NumReasons || names[s] != "" {
			panic(fmt.Sprintf("maps: reason %s: slot %d out of range or taken", d.name, s))
		}
		names[s], values[s] = d.name, d.c
	}
	return names, values
}()

func (r Reason) String() string {
	if int(r) < NumReasons {
		return reasonName[r]
	}
	return fmt.Sprintf("reason(%d)", uint32(r))
}

// ParseReason is the inverse of Reason.String.
func ParseReason(s string) (Reason, error) {
	for i, n := range reasonName {
		if n == s {
			return Reason(i), nil
		}
	}
	var n uint32
	if _, err := fmt.Sscanf(s, "reason(%d)", &n); err == nil && fmt.Sprintf("reason(%d)", n) == s && n < ReasonSlots {
		return Reason(n), nil // a slot this build has no name for, as String prints it
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

// Action is what happened to the packet: the class of its reason.
type Action string

const (
	ActionForwarded Action = "forwarded" // redirected by the program
	ActionPassed    Action = "passed"    // handed to the kernel unchanged
	ActionDropped   Action = "dropped"   // dropped (strict interfaces only)
	ActionUnknown   Action = "unknown"   // a slot this build has no reason for
)

// CValue is the reason's value in the program (enum reason): its class and
// its slot. Reasons this build does not know have none.
func (r Reason) CValue() (bpf.RouterReason, bool) {
	if int(r) < NumReasons {
		return reasonValue[r], true
	}
	return 0, false
}

// ActionOf decodes the class of a C reason value (bpf/router.h decides it).
func ActionOf(c bpf.RouterReason) Action {
	switch c >> limits.ReasonClassShift {
	case limits.ReasonClassForwarded:
		return ActionForwarded
	case limits.ReasonClassPassed:
		return ActionPassed
	case limits.ReasonClassDropped:
		return ActionDropped
	default:
		return ActionUnknown
	}
}

// Action of the reason, as the program's verdict decodes it from the reason's
// C value; ActionUnknown for a slot this build has no reason for (counted by a
// newer program sharing the pinned counters).
func (r Reason) Action() Action {
	c, ok := r.CValue()
	if !ok {
		return ActionUnknown
	}
	return ActionOf(c)
}
