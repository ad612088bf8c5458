package podnet

import (
	"errors"
	"slices"
	"strings"
)

// Outcome is what one PodNetworkConfig got in one pod: the agent's status.pods entry for it.
type Outcome struct {
	Config     string
	Generation int64
	// Applied: everything the config asks for is in the pod.
	Applied bool
	// Interfaces of the config that are in the pod, in the config's order.
	Interfaces []string
	// Reason and Message say why not (the first problem's reason; every problem's message).
	Reason, Message string
}

// Outcomes are the per-config results of a plan and its apply (res and err from Apply; res nil when the plan
// was not applied, e.g. a dry run). A failed action fails its own config and every config with actions that did
// not run; the others keep what they got.
func Outcomes(p *Plan, res *Result, err error) []Outcome {
	var ae *ActionError
	failedAt := -1
	if errors.As(err, &ae) && res != nil {
		failedAt = len(res.Done)
	}
	created := map[string]bool{}
	if res != nil {
		for _, a := range res.Done {
			if c, ok := a.(*createLink); ok {
				created[c.Link.Name] = true
			}
		}
	}
	var out []Outcome
	for _, c := range p.Desired.Configs {
		o := Outcome{Config: c.Name, Generation: c.Generation}
		var msgs []string
		for _, pr := range p.ConfigProblems(c.Name) {
			if o.Reason == "" {
				o.Reason = pr.Reason
			}
			msgs = append(msgs, pr.Message)
		}
		failed := false
		switch {
		case err != nil && failedAt < 0:
			failed = true // not an action's failure: nothing is known to be applied
		case failedAt >= 0:
			failed = slices.ContainsFunc(p.Actions[failedAt:], func(a Action) bool { return a.Config() == c.Name })
		}
		if failed {
			o.Reason = ReasonApplyFailed
			msgs = append([]string{err.Error()}, msgs...)
		}
		for _, l := range p.Links {
			if l.Config != c.Name {
				continue
			}
			if failedAt >= 0 && !created[l.Name] && slices.ContainsFunc(p.Actions, func(a Action) bool {
				cl, ok := a.(*createLink)
				return ok && cl.Link.Name == l.Name
			}) {
				continue // its creation did not run
			}
			o.Interfaces = append(o.Interfaces, l.Name)
		}
		order := func(name string) int { return slices.Index(c.Interfaces, name) }
		slices.SortStableFunc(o.Interfaces, func(a, b string) int { return order(a) - order(b) })
		o.Applied = o.Reason == ""
		o.Message = strings.Join(msgs, "; ")
		out = append(out, o)
	}
	return out
}
