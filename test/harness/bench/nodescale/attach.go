package nodescale

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/dataplane"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// AttachTimes are the agent's attach step for n fresh bridges, side by side: through tcx links (the default) and
// through legacy tc filters (--tc-hook legacy), each the whole step (dataplane.Ensure, its workers).
type AttachTimes struct {
	Devices     int
	TCX, Legacy time.Duration
}

// attachSideBySide creates n bridges in a namespace of its own and runs the agent's attach step on them twice,
// first through tcx, detached again, then through legacy tc, each with a router of its own (own pin directory);
// everything goes with the namespace.
func attachSideBySide(ctx context.Context, l *lab.Lab, n int) (AttachTimes, error) {
	res := AttachTimes{Devices: n}
	ns, err := l.AddNamespace("attach")
	if err != nil {
		return res, err
	}
	steps := make([]dataplane.AttachStep, n)
	detach := make([]dataplane.AttachStep, n)
	for i := range n {
		name := fmt.Sprintf("ab%d", i)
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name, Flags: net.FlagUp}}
		if err := ns.Handle().LinkAdd(br); err != nil {
			return res, fmt.Errorf("bridge %s: %w", name, err)
		}
		steps[i] = dataplane.AttachStep{Interface: name, Action: dataplane.ActionAttach, Hook: v1.HookAuto,
			Modes: []loader.Mode{loader.ModeAuto}}
		detach[i] = dataplane.AttachStep{Interface: name, Action: dataplane.ActionDetach}
	}
	for _, legacy := range []bool{false, true} {
		took, err := attachOnce(ctx, l, ns, steps, detach, legacy)
		if err != nil {
			return res, err
		}
		if legacy {
			res.Legacy = took
		} else {
			res.TCX = took
		}
	}
	return res, nil
}

// attachOnce loads a router (legacy: LegacyTC), times Ensure of steps, checks every attachment's mode and
// detaches again.
func attachOnce(ctx context.Context, l *lab.Lab, ns *lab.Netns, steps, detach []dataplane.AttachStep, legacy bool) (took time.Duration, err error) {
	pins, err := l.PinDir()
	if err != nil {
		return 0, err
	}
	dp, err := dataplane.Open(ctx, dataplane.Options{PinDir: pins, NetNS: ns.NsHandle(), Links: ns.Handle(), LegacyTC: legacy})
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, dp.Detach(ctx, detach), dp.Close()) }()
	start := time.Now()
	st, err := dp.Ensure(ctx, steps)
	took = time.Since(start)
	if err != nil {
		return took, fmt.Errorf("attach (legacy tc: %v): %w", legacy, err)
	}
	want := v1.AttachTCX
	if legacy {
		want = v1.AttachTCLegacy
	}
	for _, s := range st {
		if s.Mode != want {
			return took, fmt.Errorf("%s attached as %s, want %s", s.Name, s.Mode, want)
		}
	}
	return took, nil
}
