package frrreload

import (
	"sync"
	"time"
)

// Names of the timed steps of an Apply or Validate (Result.Steps). A step can occur more than once (converge
// passes) or not at all (no scratch daemons, a skipped apply).
const (
	StepSyntax       = "vtysh -C"            // vtysh's parser on the candidate file
	StepScratchStart = "scratch start"       // namespace and daemons of the scratch instance
	StepScratchLoad  = "scratch load"        // the candidate loaded into the scratch instance
	StepScratchStop  = "scratch stop"        // the scratch daemons stopped, their namespace removed
	StepTest         = "frr-reload --test"   // frr-reload.py's diff against the running daemons
	StepRunning      = "show running-config" // the daemons' running config read through vtysh
	StepReload       = "frr-reload --reload" // frr-reload.py applying the candidate
	StepConverge     = "converge"            // the check after the reload and any further passes
	StepScratchDelta = "scratch delta"       // the delta to the candidate run in the scratch instance, checked there
	StepDelta        = "vtysh -f delta"      // the delta run against the daemons
	StepCheck        = "check"               // show running-config and its diff to the candidate after the delta
)

// Step is one timed part of an Apply or Validate.
type Step struct {
	Name string
	Took time.Duration
}

// timeline collects Steps; a nil *timeline records nothing. Steps may be recorded from several goroutines.
type timeline struct {
	mu    sync.Mutex
	steps []Step
}

// since records the step name as having run from start until now.
func (t *timeline) since(name string, start time.Time) {
	if t == nil {
		return
	}
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps = append(t.steps, Step{Name: name, Took: d})
}

// list returns the steps recorded so far, in the order they ended.
func (t *timeline) list() []Step {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Step(nil), t.steps...)
}
