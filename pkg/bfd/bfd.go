// Package bfd holds the parameters of a BFD session (RFC 5880) as FRR's bfdd takes them: one set of bounds and
// defaults for the webhook, the operator's flags, the node agent and the FRR renderer, so what the API admits is
// what bfdd is given.
package bfd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// bfdd's ranges and defaults (FRR 8.4 and 10: "receive-interval (10-60000)" in milliseconds, "detect-multiplier
// (2-255)"). A default is never rendered: bfdd does not show it, so a rendered default would never converge.
const (
	MinInterval             = 10 * time.Millisecond
	MaxInterval             = 60 * time.Second
	MinDetectMultiplier     = 2
	MaxDetectMultiplier     = 255
	DefaultInterval         = 300 * time.Millisecond
	DefaultEchoInterval     = 50 * time.Millisecond
	DefaultDetectMultiplier = 3
)

// Profile tunes BFD on a session. The zero value is bfdd's defaults: 300 ms both ways, a peer down after 3 missed
// packets (0.9 s), active, no echo.
type Profile struct {
	// ReceiveInterval is the slowest rate at which this end wants the peer's control packets; TransmitInterval the
	// fastest it sends them. Whole milliseconds, MinInterval..MaxInterval; 0: DefaultInterval.
	ReceiveInterval, TransmitInterval time.Duration
	// DetectMultiplier: the peer is down after this many intervals without a packet; 0: DefaultDetectMultiplier.
	DetectMultiplier int
	// Passive waits for the peer to start the session (e.g. toward many workloads that may not run BFD).
	Passive bool
	// EchoInterval > 0 turns on echo mode at that rate (single-hop IPv4 peers): the peer loops the node's own
	// packets back, which tests the forwarding path, not only the peer's bfdd.
	EchoInterval time.Duration
}

// Validate reports each field out of bfdd's range, named under path.
func (p Profile) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, d := range []struct {
		name string
		val  time.Duration
	}{{"receiveInterval", p.ReceiveInterval}, {"transmitInterval", p.TransmitInterval}, {"echoInterval", p.EchoInterval}} {
		if d.val != 0 && (d.val%time.Millisecond != 0 || d.val < MinInterval || d.val > MaxInterval) {
			errs = append(errs, field.Invalid(path.Child(d.name), d.val.String(),
				fmt.Sprintf("must be whole milliseconds within %s..%s", MinInterval, MaxInterval)))
		}
	}
	if m := p.DetectMultiplier; m != 0 && (m < MinDetectMultiplier || m > MaxDetectMultiplier) {
		errs = append(errs, field.Invalid(path.Child("detectMultiplier"), m,
			fmt.Sprintf("must be within %d..%d", MinDetectMultiplier, MaxDetectMultiplier)))
	}
	return errs
}

// Canonical replaces values equal to bfdd's defaults by zero, so a profile that only spells out defaults is the
// default profile (bfdd shows no default line).
func (p Profile) Canonical() Profile {
	if p.ReceiveInterval == DefaultInterval {
		p.ReceiveInterval = 0
	}
	if p.TransmitInterval == DefaultInterval {
		p.TransmitInterval = 0
	}
	if p.DetectMultiplier == DefaultDetectMultiplier {
		p.DetectMultiplier = 0
	}
	return p
}

// IsDefault reports whether the profile is bfdd's defaults (no profile needs to be configured).
func (p Profile) IsDefault() bool { return p.Canonical() == Profile{} }

// setting is one non-default value: its token in the profile's name and its lines in bfdd's profile block.
type setting struct {
	token string
	lines []string
}

// settings are the profile's non-default values in the order bfdd shows them (FRR 8.4 and 10): detect-multiplier,
// transmit-interval, receive-interval, passive-mode, echo-mode with its intervals. A default value has none.
func (p Profile) settings() []setting {
	p = p.Canonical()
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	var out []setting
	if p.DetectMultiplier != 0 {
		out = append(out, setting{"x" + strconv.Itoa(p.DetectMultiplier), []string{"detect-multiplier " + strconv.Itoa(p.DetectMultiplier)}})
	}
	if p.TransmitInterval != 0 {
		out = append(out, setting{"tx" + ms(p.TransmitInterval), []string{"transmit-interval " + ms(p.TransmitInterval)}})
	}
	if p.ReceiveInterval != 0 {
		out = append(out, setting{"rx" + ms(p.ReceiveInterval), []string{"receive-interval " + ms(p.ReceiveInterval)}})
	}
	if p.Passive {
		out = append(out, setting{"passive", []string{"passive-mode"}})
	}
	if p.EchoInterval != 0 {
		echo := setting{"echo" + ms(p.EchoInterval), []string{"echo-mode"}}
		if p.EchoInterval != DefaultEchoInterval {
			echo.lines = append(echo.lines, "echo transmit-interval "+ms(p.EchoInterval), "echo receive-interval "+ms(p.EchoInterval))
		}
		out = append(out, echo)
	}
	return out
}

// Name is a name for the profile derived from its values, so equal settings share one bfdd profile, a change of
// settings is a change of name, and "show bfd peers" tells what a session runs: e.g. "x3-tx100-rx100-passive-echo50"
// (multiplier, intervals in milliseconds). The defaults' name is "default".
func (p Profile) Name() string {
	var tokens []string
	for _, s := range p.settings() {
		tokens = append(tokens, s.token)
	}
	if len(tokens) == 0 {
		return "default"
	}
	return strings.Join(tokens, "-")
}

// Lines are the profile's lines inside bfdd's "profile NAME" block, in the order bfdd shows them; a default
// value has no line.
func (p Profile) Lines() []string {
	var out []string
	for _, s := range p.settings() {
		out = append(out, s.lines...)
	}
	return out
}
