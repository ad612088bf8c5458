package frrreload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrdiff"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// scratch is a Reloader's long-lived scratch FRR instance: the daemons of Options.ScratchDaemons in a namespace
// of their own, without a BGP listener, started at the first validation and kept until Close, or until it was
// idle long enough to be released (Reloader.ReleaseIdleScratch; the next validation starts it again).
//
// Its verdicts are those of Check: vtysh's parser, then a load into fresh daemons (loadVerdict). A config
// is refused only by these, with their messages and line numbers. A config is accepted either by them, or - when
// the scratch instance holds the config it accepted last - by running the delta from that config to the
// candidate there (the script the node's daemons get for the same change, every line of it through vtysh's
// parser and the daemons) and finding that FRR refused none of it and now runs exactly the candidate; the lines
// the delta leaves out are the accepted config's. When the delta is not conclusive (frrdiff cannot read a side,
// FRR refused a line, something differs afterwards), the parser and a fresh load decide: the instance is
// restarted first. After a refusal it holds an unknown config and is restarted at the next validation.
//
// What only a fresh load can see is the order of a file's lines: a line FRR takes only after a line the file
// puts below it (a neighbor before its peer group) loads as a change when the peer group already exists. The
// first validation after a start is a fresh load, and pkg/frr renders its blocks in the order FRR needs.
type scratch struct {
	target  frrvty.Target
	daemons []string
	ns      *frrproc.Netns
	in      *frrproc.Instance
	guard   *frrproc.Guard // removes the instance should this process die without Close
	// holds: the daemons run the config accepted last (false: nothing loaded yet, or unknown after a refusal).
	holds bool
	// loaded: something was loaded since the start; a fresh load needs a restart first.
	loaded bool
	// running is the instance's running config after the last delta; nil: read it when needed.
	running *frrdiff.Config
	// used is when the last validation ended (see Reloader.ReleaseIdleScratch).
	used time.Time
}

func newScratch(t frrvty.Target, daemons []string) *scratch {
	return &scratch{target: t, daemons: daemons}
}

// validate checks the candidate file (cand is its frrdiff reading; nil when frrdiff cannot read it); syntax is
// vtysh's parser on the file, run unless the delta accepts it.
func (s *scratch) validate(ctx context.Context, file string, cand *frrdiff.Config, syntax func() error, tl *timeline) error {
	defer func() { s.used = time.Now() }()
	if cand != nil && s.holds {
		start := time.Now()
		ok := s.tryDelta(ctx, cand)
		tl.since(StepScratchDelta, start)
		if ok {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("scratch delta: %w", err)
		}
	}
	if err := syntax(); err != nil {
		return err
	}
	if s.in != nil && s.loaded {
		start := time.Now()
		err := s.stop(ctx)
		tl.since(StepScratchStop, start)
		if err != nil {
			return err
		}
	}
	if s.in == nil {
		start := time.Now()
		ns, in, err := startScratch(ctx, s.target, s.daemons)
		if err == nil {
			if s.guard, err = frrproc.StartGuard(ns, in); err != nil {
				err = errors.Join(err, stopScratch(ctx, ns, in))
			}
		}
		tl.since(StepScratchStart, start)
		if err != nil {
			return err
		}
		s.ns, s.in = ns, in
	}
	start := time.Now()
	err := loadVerdict(ctx, s.in, file)
	tl.since(StepScratchLoad, start)
	s.loaded, s.holds, s.running = true, err == nil, nil
	return err
}

// tryDelta runs the delta from the held config to cand and reports whether FRR took all of it and now runs
// cand. On false the instance's config is unknown.
func (s *scratch) tryDelta(ctx context.Context, cand *frrdiff.Config) bool {
	s.holds = false
	target := frrvty.Target{VtySocket: s.in.Dir, ConfDir: s.in.ConfDir, VtyshPath: s.target.VtyshPath, Tools: s.target.Tools, Version: s.target.Version}
	running := s.running
	if running == nil {
		var err error
		if running, err = runningConfig(ctx, target, nil); err != nil {
			return false
		}
	}
	d, err := frrdiff.Compare(cand, running)
	if err != nil {
		return false
	}
	if len(deltaDiff(d).Significant()) > 0 {
		if err := runScript(ctx, target, d.Script(), cand); err != nil {
			return false
		}
		if running, err = runningConfig(ctx, target, nil); err != nil {
			return false
		}
		if d, err = frrdiff.Compare(cand, running); err != nil || len(deltaDiff(d).Significant()) > 0 {
			return false
		}
	}
	s.holds, s.running = true, running
	return true
}

// stop ends the daemons and removes their namespace.
func (s *scratch) stop(ctx context.Context) error {
	if s.in == nil {
		return nil
	}
	err := errors.Join(s.guard.Stop(), stopScratch(ctx, s.ns, s.in))
	s.ns, s.in, s.guard, s.holds, s.loaded, s.running = nil, nil, nil, false, false, nil
	if err != nil {
		return fmt.Errorf("stop the scratch FRR: %w", err)
	}
	return nil
}
