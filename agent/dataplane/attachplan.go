package dataplane

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
)

// AttachAction is what an apply does to the router's attachment of one interface.
type AttachAction string

const (
	// ActionAttach attaches the router to an interface it does not run on.
	ActionAttach AttachAction = "attach"
	// ActionMove moves an attachment to the hook the spec asks for (make-before-break, by the loader).
	ActionMove AttachAction = "move"
	// ActionReattach attaches anew to a device re-created under the same name - since the last apply, or by this
	// apply's netlink step - whose old attachment went with the old device.
	ActionReattach AttachAction = "reattach"
	// ActionKeep leaves an attachment as it is: same link, nothing is called.
	ActionKeep AttachAction = "keep"
	// ActionDetach removes the router from an interface no longer configured.
	ActionDetach AttachAction = "detach"
)

// AttachStep is one interface's step of an AttachPlan.
type AttachStep struct {
	Interface string
	Action    AttachAction
	// Hook is the hook the spec asks for (empty for ActionDetach).
	Hook v1.AttachHook
	// From is the mode attached now ("" when not attached).
	From loader.Mode
	// Modes are the loader modes an attach, move or reattach tries, best first, the next one only while the
	// kernel or device does not support the last.
	Modes []loader.Mode
	// Reason says why, for the printed plan.
	Reason string
}

// Changes reports whether the step changes anything.
func (s AttachStep) Changes() bool { return s.Action != ActionKeep }

// AttachPlan is every attachment change of one apply. The apply executes exactly these steps (Ensure, Detach).
type AttachPlan struct {
	// Attach has one step per configured interface (attach, move, reattach or keep); it runs before the new
	// table generation. Detach has one per attached interface no longer configured; it runs after it. Both are
	// sorted by interface name.
	Attach []AttachStep
	Detach []AttachStep
}

// Empty reports whether the plan changes no attachment.
func (p AttachPlan) Empty() bool {
	return len(p.Detach) == 0 && !slices.ContainsFunc(p.Attach, AttachStep.Changes)
}

// Kept lists the interfaces whose attachment stays as it is.
func (p AttachPlan) Kept() []string {
	var out []string
	for _, s := range p.Attach {
		if !s.Changes() {
			out = append(out, s.Interface)
		}
	}
	return out
}

// AttachInput is what PlanAttach decides from; the caller observes it.
type AttachInput struct {
	// Want are the spec's data-plane interfaces.
	Want []v1.DataPlaneInterface
	// Attached is what the router runs on now: Dataplane.Attachments, or a View's (loader.Observe) for a dry run.
	Attached []loader.Attachment
	// Ifindex holds the ifindex of every wanted device that exists now (Ifindexes); a name without an entry has
	// no device.
	Ifindex map[string]int
	// Recreated names the devices the apply deletes and creates again before it attaches (nodenet's plan), so
	// their ifindex changes.
	Recreated map[string]bool
	// MirroredIngress names the interfaces whose ingress a mirror copies (interface -> mirror). XDP and tcx run
	// before clsact's filters, so a packet the router redirects there would never reach the mirror filter: such
	// an interface gets the router as a clsact filter (loader.ModeTC), after the mirror's filters by priority.
	MirroredIngress map[string]string
}

// PlanAttach decides the attach steps. Several entries of one interface (its VLANs) share one attachment,
// whose hook is the first one an entry names (tc or xdp), else auto. Each configured interface is attached when
// the router is not on it, attached anew when its device was or will be re-created (loader.Attachment.Defunct),
// moved when the mode in use does not satisfy its hook (or the interface's mirror, see MirroredIngress), else
// kept (same link); every attachment no longer configured is detached. It is pure, so that the printed plan and
// the apply are one decision.
func PlanAttach(in AttachInput) AttachPlan {
	current := map[string]loader.Attachment{}
	for _, a := range in.Attached {
		current[a.Interface] = a
	}
	names, hooks := wantHooks(in.Want)
	var p AttachPlan
	for _, name := range names {
		hook := hooks[name]
		s := AttachStep{Interface: name, Hook: hook}
		mirror, mirrored := in.MirroredIngress[name]
		cur, attached := current[name]
		idx, exists := in.Ifindex[name]
		switch {
		case !attached:
			s.Action, s.Reason = ActionAttach, "not attached"
		case in.Recreated[name]:
			s.Action, s.Reason = ActionReattach, "this apply re-creates the device"
		case cur.Defunct(idx) && exists:
			s.Action, s.Reason = ActionReattach, fmt.Sprintf("device re-created (ifindex %d -> %d)", cur.Ifindex, idx)
		case cur.Defunct(idx):
			s.Action, s.Reason = ActionReattach, fmt.Sprintf("device gone (was ifindex %d)", cur.Ifindex)
		case mirrored && cur.Mode != loader.ModeTC:
			s.Action, s.Reason = ActionMove, fmt.Sprintf("mirror %s copies its ingress: %s would run before the mirror's filters", mirror, cur.Mode)
		case !mirrored && !allows(hook, cur.Mode):
			s.Action, s.Reason = ActionMove, fmt.Sprintf("hook %s does not allow %s", hook, cur.Mode)
		case mirrored:
			s.Action, s.Reason = ActionKeep, fmt.Sprintf("%s runs after mirror %s's filters", cur.Mode, mirror)
		default:
			s.Action, s.Reason = ActionKeep, fmt.Sprintf("%s satisfies hook %s", cur.Mode, hook)
		}
		if attached {
			s.From = cur.Mode
		}
		switch {
		case !s.Changes():
		case mirrored:
			s.Modes = []loader.Mode{loader.ModeTC}
		default:
			s.Modes = preferred(hook)
		}
		p.Attach = append(p.Attach, s)
	}
	for _, a := range in.Attached {
		if _, ok := hooks[a.Interface]; !ok {
			p.Detach = append(p.Detach, AttachStep{Interface: a.Interface, Action: ActionDetach, From: a.Mode,
				Reason: "no longer configured"})
		}
	}
	slices.SortFunc(p.Detach, func(a, b AttachStep) int { return cmp.Compare(a.Interface, b.Interface) })
	return p
}

// wantHooks lists the interfaces of want once each, sorted, with the hook of each: several entries of one
// interface (its VLANs) share one attachment, so the first entry that names a hook (tc or xdp) sets it, and
// it is auto only when none does.
func wantHooks(want []v1.DataPlaneInterface) ([]string, map[string]v1.AttachHook) {
	hooks := map[string]v1.AttachHook{}
	var names []string
	for _, i := range want {
		h, seen := hooks[i.Name]
		if !seen {
			names = append(names, i.Name)
		}
		if h == "" || h == v1.HookAuto {
			hooks[i.Name] = orAuto(i.Hook)
		}
	}
	slices.Sort(names)
	return names, hooks
}

func orAuto(h v1.AttachHook) v1.AttachHook {
	if h == "" {
		return v1.HookAuto
	}
	return h
}

// allows reports whether an attachment in mode satisfies hook.
func allows(hook v1.AttachHook, mode loader.Mode) bool {
	switch hook {
	case v1.HookTC:
		return mode == loader.ModeTCX || mode == loader.ModeTC
	case v1.HookXDP:
		return mode.IsXDP()
	default:
		return true
	}
}

// preferred lists the loader modes tried for a hook, best first.
func preferred(hook v1.AttachHook) []loader.Mode {
	switch hook {
	case v1.HookTC:
		return []loader.Mode{loader.ModeTCX, loader.ModeTC}
	case v1.HookXDP:
		return []loader.Mode{loader.ModeXDPNative, loader.ModeXDPGeneric}
	default:
		return []loader.Mode{loader.ModeAuto}
	}
}

// Links looks interfaces up by name in the node's namespace (*netlink.Handle).
type Links interface {
	LinkByName(name string) (netlink.Link, error)
}

// Ifindexes observes the devices of want for PlanAttach: the ifindex of each one that exists now.
func Ifindexes(links Links, want []v1.DataPlaneInterface) (map[string]int, error) {
	out := map[string]int{}
	for _, i := range want {
		if _, done := out[i.Name]; done {
			continue
		}
		l, err := links.LinkByName(i.Name)
		var notFound netlink.LinkNotFoundError
		switch {
		case errors.As(err, &notFound):
			continue // not there (yet): attached after nodenet creates it, or the attach fails then
		case err != nil:
			return nil, fmt.Errorf("look up interface %s: %w", i.Name, err)
		}
		out[i.Name] = l.Attrs().Index
	}
	return out, nil
}
