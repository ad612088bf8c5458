// Package rollout decides which nodes receive the target revision next.
//
// The planner is a pure function of observed state: the controller reads Nodes and
// NodeNetworkConfigs from the API server, turns them into NodeStates, and acts on the
// returned Plan. Keeping no memory here means a restarted operator (or a new leader)
// continues a rollout exactly where the cluster says it stands.
package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// ConditionStatus mirrors metav1.ConditionStatus without tying the planner to the API package.
type ConditionStatus string

// Condition states reported by a node agent.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// NodeState is what the planner needs to know about one node.
type NodeState struct {
	Name string
	// Group is the node's topology group ("" when grouping is off or the label is missing).
	Group string
	// Ready is the Node object's Ready condition.
	Ready bool
	// ReadySince is when the operator saw the Node's Ready condition last change; the progress
	// deadline of a node is measured from the later of this and Config.AssignedAt, so a node that
	// was down does not fail a rollout the moment it returns. Both are the operator's own
	// observations (controllers' progressClock), never another machine's timestamps.
	ReadySince time.Time
	// Config is the node's NodeNetworkConfig, nil when it has none yet.
	Config *ConfigState
	// Held keeps a node that does not carry the target from receiving it (its configuration cannot be
	// built until the Node itself is fixed). It is reported, never counted as done, and does not block
	// the nodes after it.
	Held bool
}

// ConfigState is the spec the operator assigned to a node and the status its agent reported.
type ConfigState struct {
	// Revision is the revision the spec was built from.
	Revision string
	// ExpectedMapVersion is the map version the spec's content must produce on the node.
	ExpectedMapVersion string
	// AssignedAt is when the operator saw Revision assigned to the node (its own write, or the
	// first sight after a leader change).
	AssignedAt time.Time

	AppliedRevision string
	MapVersion      string
	ConfigReady     ConditionStatus
	FailedRevision  string
	Degraded        bool
	// Message is the agent's explanation of its Ready/Degraded state, carried into failures.
	Message string
	// Stale marks a spec whose content is out of date for its revision (the Node's labels or
	// annotations changed): the node needs the revision again, paced like any other assignment.
	Stale bool
}

// Input is one planning round.
type Input struct {
	// Target is the revision every node should end up on.
	Target string
	// Failed holds revisions known to have failed; a node still carrying one is reverted to
	// Target at once (rollback), without pacing.
	Failed map[string]bool
	Nodes  []NodeState
	// MaxUnavailable is the resolved number of nodes that may be in flight at once (>= 1).
	MaxUnavailable int
	// Paused stops new assignments; rollbacks still happen.
	Paused bool
	// Settled is true once Target completed its rollout: node failures are then reported
	// but no longer fail the revision.
	Settled bool
	// ProgressDeadline bounds how long an assigned node may take to confirm (0 = no bound).
	ProgressDeadline time.Duration
	Now              time.Time
}

// Bucket classifies a node against the target revision.
type Bucket string

// Buckets, from the target revision's point of view.
const (
	// BucketDone: the node runs the target (applied revision, map version and Ready all agree).
	BucketDone Bucket = "Done"
	// BucketInFlight: the node was assigned the target and has not confirmed it yet.
	BucketInFlight Bucket = "InFlight"
	// BucketPending: the node does not carry the target yet.
	BucketPending Bucket = "Pending"
	// BucketFailed: the node reported failure for the target or missed the progress deadline.
	BucketFailed Bucket = "Failed"
	// BucketNotReady: the Node is NotReady; its config is not counted as done, and a pending
	// one is held back until the Node returns.
	BucketNotReady Bucket = "NotReady"
	// BucketHeld: the node does not carry the target and is held back (NodeState.Held).
	BucketHeld Bucket = "Held"
)

// Failure names the node that failed the target revision.
type Failure struct {
	Node    string
	Reason  string
	Message string
}

// Failure reasons.
const (
	ReasonApplyFailed      = "ApplyFailed"
	ReasonDegraded         = "Degraded"
	ReasonDeadlineExceeded = "ProgressDeadlineExceeded"
)

// Counts summarise a plan for the revision status.
type Counts struct {
	Total, Updated, InFlight, Pending, Failed, NotReady, Held int
}

// Plan is the planner's decision.
type Plan struct {
	// Order is every node in rollout order.
	Order []string
	// Buckets classifies each node before this round's assignments.
	Buckets map[string]Bucket
	// Assign lists the nodes that get the target now, in rollout order (paced).
	Assign []string
	// Rollback lists nodes carrying a failed revision; they get the target now (unpaced).
	Rollback []string
	// Failures lists nodes that failed the target; non-empty means the revision failed and
	// nothing was assigned.
	Failures []Failure
	// NotReady lists nodes whose Node is NotReady.
	NotReady []string
	// Held lists the held-back nodes (NodeState.Held).
	Held   []string
	Counts Counts
}

// Complete reports whether every node runs the target (vacuously true without nodes).
func (p Plan) Complete() bool { return p.Counts.Updated == p.Counts.Total }

// ResolveMaxUnavailable turns a number or percentage of total nodes into a count. Percentages
// round down like Deployments do, but the result is at least 1 so a rollout always progresses.
func ResolveMaxUnavailable(v *intstr.IntOrString, total int) (int, error) {
	if v == nil {
		return 1, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, false)
	if err != nil {
		return 0, fmt.Errorf("maxUnavailable %q: %w", v.String(), err)
	}
	if n < 0 {
		return 0, fmt.Errorf("maxUnavailable %q: must not be negative", v.String())
	}
	return max(n, 1), nil
}

// Compute plans one round. It never assigns while the target is failing, never exceeds
// MaxUnavailable nodes in flight, and with groups only starts a group once every earlier
// group is finished (done, or held back because its Node is NotReady).
func Compute(in Input) Plan {
	nodes := slices.Clone(in.Nodes)
	slices.SortFunc(nodes, func(a, b NodeState) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Name, b.Name))
	})
	p, u := tally(in, nodes)
	if len(p.Failures) > 0 || in.Target == "" {
		p.Rollback = nil
		return p
	}
	slots := in.MaxUnavailable - u.count
	rolledBack := make(map[string]bool, len(p.Rollback))
	for _, name := range p.Rollback {
		rolledBack[name] = true
		if !u.alreadyOut[name] {
			slots-- // a rolled-back node re-applies: it is unavailable until it confirms
		}
	}
	if in.Paused {
		return p
	}
	p.Assign = assign(in, nodes, p.Buckets, slots, u.alreadyOut, rolledBack)
	return p
}

// unavailable counts nodes that are not running a confirmed configuration: in flight or failed on the
// target, but also nodes still applying an earlier revision (a rollout superseded mid-way), which are
// alreadyOut: giving such a node the target costs no extra slot, it is unavailable already.
type unavailable struct {
	count      int
	alreadyOut map[string]bool
}

// tally puts every node (sorted) into its bucket: the plan without assignments, and the unavailable nodes.
func tally(in Input, nodes []NodeState) (Plan, unavailable) {
	p := Plan{Buckets: make(map[string]Bucket, len(nodes))}
	p.Counts.Total = len(nodes)
	u := unavailable{alreadyOut: map[string]bool{}}
	for _, n := range nodes {
		p.Order = append(p.Order, n.Name)
		b, fail := classify(in, n)
		p.Buckets[n.Name] = b
		if !n.Ready {
			p.NotReady = append(p.NotReady, n.Name)
		}
		switch b {
		case BucketDone:
			p.Counts.Updated++
		case BucketInFlight:
			p.Counts.InFlight++
			u.count++
		case BucketFailed:
			p.Counts.Failed++
			u.count++
			if !in.Settled {
				p.Failures = append(p.Failures, fail)
			}
		case BucketPending:
			p.Counts.Pending++
			if n.Config != nil && !confirmed(n.Config, n.Config.Revision) {
				u.count++
				u.alreadyOut[n.Name] = true
			}
		case BucketHeld:
			p.Counts.Held++
			p.Held = append(p.Held, n.Name)
		case BucketNotReady:
			p.Counts.NotReady++
			if assigned(n, in.Target) {
				u.count++ // it may be applying: it occupies a slot until it confirms
			}
		}
		if n.Config != nil && n.Config.Revision != in.Target && in.Failed[n.Config.Revision] {
			p.Rollback = append(p.Rollback, n.Name)
		}
	}
	return p, u
}

// assign picks the pending nodes that get the target now, in order, within slots. With groups, only the first
// unfinished group may receive assignments.
func assign(in Input, nodes []NodeState, buckets map[string]Bucket, slots int, alreadyOut, rolledBack map[string]bool) []string {
	var out []string
	activeGroup, found := "", false
	for _, n := range nodes {
		if found && n.Group != activeGroup {
			break
		}
		b := buckets[n.Name]
		finished := b == BucketDone || b == BucketHeld || (b == BucketNotReady && !assigned(n, in.Target))
		if !finished && !found {
			activeGroup, found = n.Group, true
		}
		if b != BucketPending || rolledBack[n.Name] {
			continue
		}
		cost := 1
		if alreadyOut[n.Name] {
			cost = 0
		}
		if cost > 0 && slots < cost {
			break // strict order: a later node never overtakes one waiting for a slot
		}
		out = append(out, n.Name)
		slots -= cost
	}
	return out
}

func assigned(n NodeState, target string) bool {
	return n.Config != nil && n.Config.Revision == target && !n.Config.Stale
}

// confirmed reports whether the agent confirmed running rev with exactly the assigned content.
func confirmed(c *ConfigState, rev string) bool {
	return c.AppliedRevision == rev && c.MapVersion == c.ExpectedMapVersion && c.ConfigReady == ConditionTrue
}

func classify(in Input, n NodeState) (Bucket, Failure) {
	if !assigned(n, in.Target) {
		if n.Held {
			return BucketHeld, Failure{}
		}
		if !n.Ready {
			return BucketNotReady, Failure{}
		}
		return BucketPending, Failure{}
	}
	c := n.Config
	if c.ConfigReady == ConditionFalse && c.FailedRevision == in.Target {
		return BucketFailed, Failure{Node: n.Name, Reason: ReasonApplyFailed, Message: c.Message}
	}
	if c.Degraded {
		return BucketFailed, Failure{Node: n.Name, Reason: ReasonDegraded, Message: c.Message}
	}
	if !n.Ready {
		// A NotReady node's status may be stale: it is reported, never counted as done.
		return BucketNotReady, Failure{}
	}
	if confirmed(c, in.Target) {
		return BucketDone, Failure{}
	}
	if in.ProgressDeadline > 0 {
		since := c.AssignedAt
		if n.ReadySince.After(since) {
			since = n.ReadySince
		}
		if !since.IsZero() && in.Now.Sub(since) > in.ProgressDeadline {
			return BucketFailed, Failure{
				Node:   n.Name,
				Reason: ReasonDeadlineExceeded,
				Message: fmt.Sprintf("no confirmation of revision %s within %s (applied %q, map version %q, want %q)",
					in.Target, in.ProgressDeadline, c.AppliedRevision, c.MapVersion, c.ExpectedMapVersion),
			}
		}
	}
	return BucketInFlight, Failure{}
}
