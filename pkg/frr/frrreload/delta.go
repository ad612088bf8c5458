package frrreload

import (
	"context"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrdiff"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// Path says how a config reached the daemons (Result.Path).
type Path string

const (
	// PathDelta: the delta frrdiff computed from the running config, in one "vtysh -f" run, checked against
	// one "show running-config" afterwards.
	PathDelta Path = "delta"
	// PathReloadScript: frr-reload.py, because frrdiff cannot read the candidate or the running config the
	// way frr-reload.py would (Result.PathReason says where).
	PathReloadScript Path = "frr-reload.py"
	// PathDeltaThenScript: FRR refused part of the delta (or the check after it failed); frr-reload.py
	// applied the config from where the delta left it.
	PathDeltaThenScript Path = "delta, then frr-reload.py"
	// PathSystemd: systemd's reload of the FRR unit (which runs frr-reload.py).
	PathSystemd Path = "systemd"
)

// PlanPath says how Apply would bring cfg to the daemons as far as cfg alone decides: PathDelta, PathSystemd,
// or PathReloadScript and why frrdiff cannot read cfg. At Apply, FRR's running config can still be one frrdiff
// cannot read, and FRR can refuse part of the delta (Result.Path says what ran).
func (r *Reloader) PlanPath(cfg []byte) (Path, string) {
	if r.opts.Method == ReloadSystemd {
		return PathSystemd, ""
	}
	if _, err := parseCandidate(r.opts.Target, cfg); err != nil {
		return PathReloadScript, err.Error()
	}
	return PathDelta, ""
}

// parseCandidate reads a candidate config as frrdiff does for the target's release.
func parseCandidate(t frrvty.Target, cfg []byte) (*frrdiff.Config, error) {
	d, ok := t.Version.Dialect()
	if !ok {
		return nil, t.Version.Check()
	}
	return frrdiff.Parse(cfg, frrdiff.File, d)
}

// deltaDiff is the Diff frr-reload.py --test would print for d, secrets redacted.
func deltaDiff(d frrdiff.Delta) Diff {
	del, add := d.Listing()
	redact := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = frr.Redact(l)
		}
		return out
	}
	return Diff{Delete: redact(del), Add: redact(add)}
}

// runningConfig reads the target's running config the way frrdiff diffs it; the error wraps
// frrdiff.ErrUndecidable when frrdiff cannot.
func runningConfig(ctx context.Context, t frrvty.Target, tl *timeline) (*frrdiff.Config, error) {
	start := time.Now()
	out, err := t.RunningConfig(ctx)
	tl.since(StepRunning, start)
	if err != nil {
		return nil, err
	}
	d, ok := t.Version.Dialect()
	if !ok {
		return nil, t.Version.Check()
	}
	cfg, err := frrdiff.Parse(out, frrdiff.Running, d)
	if err != nil {
		return nil, fmt.Errorf("FRR's running config: %w", err)
	}
	return cfg, nil
}

// topLevelLines are cfg's single-line top-level commands.
func topLevelLines(cfg *frrdiff.Config) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, c := range cfg.Contexts() {
			if len(c.Keys) == 1 && len(c.Lines) == 0 && !yield(c.Keys[0]) {
				return
			}
		}
	}
}

// runScript runs a frrdiff script towards cand against the target's daemons with one "vtysh -f". A command FRR
// refused is a *ValidationError (Check "delta") naming the script's lines, secrets redacted.
func runScript(ctx context.Context, t frrvty.Target, script []byte, cand *frrdiff.Config) error {
	t = t.WithDefaults()
	f, err := os.CreateTemp(t.RunDir, ".frr-delta-") // next to frr.conf: only FRR and root can read it
	if err != nil {
		return fmt.Errorf("delta script: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	prepared, origin := vtyshFile(script, routeMapTimer(topLevelLines(cand)))
	_, err = f.Write(prepared) // mode 0600 (CreateTemp); read once and removed: no fsync
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("delta script: %w", err)
	}
	stdout, stderr, err := t.Run(ctx, t.VtyshPath, append(t.VtyshArgs(), "-f", name)...)
	if ctx.Err() != nil {
		return fmt.Errorf("vtysh -f delta: %w", ctx.Err())
	}
	if verr := parseLoadOutput("delta", string(stdout)+stderr, name); verr != nil {
		verr.renumber(origin)
		return verr
	}
	if err != nil {
		return fmt.Errorf("vtysh -f delta: %w: %s", err, frr.Redact(strings.TrimSpace(stderr+string(stdout))))
	}
	return nil
}

// applyDelta runs d against the target and checks the result against cand with one running config, again
// while that makes progress (as frr-reload.py's second pass and converge do). It returns what still differs:
// lines FRR does not keep (a brownfield base may have some).
func applyDelta(ctx context.Context, t frrvty.Target, cand *frrdiff.Config, d frrdiff.Delta, tl *timeline) ([]string, error) {
	var prev []string
	for pass := 1; ; pass++ {
		if len(deltaDiff(d).Significant()) == 0 {
			return nil, nil // only what FRR never changes (its version line, the hostname): nothing to run
		}
		start := time.Now()
		err := runScript(ctx, t, d.Script(), cand)
		tl.since(StepDelta, start)
		if err != nil {
			return nil, fmt.Errorf("pass %d: %w", pass, err)
		}
		start = time.Now()
		running, err := runningConfig(ctx, t, nil)
		if err == nil {
			d, err = frrdiff.Compare(cand, running)
		}
		tl.since(StepCheck, start)
		if err != nil {
			return nil, fmt.Errorf("check after pass %d: %w", pass, err)
		}
		left := deltaDiff(d).Significant()
		if len(left) == 0 || slices.Equal(left, prev) || pass == maxReloadPasses {
			return left, nil
		}
		prev = left
	}
}

// dropStaleVRFs removes the VRFs FRR 10 keeps once their last line is gone ("vrf X" / "exit-vrf" with nothing
// inside) that cfg does not have. frr-reload.py, like the Go diff that follows it, deletes a removed VRF's
// lines but never the VRF: FRR 8 then forgets it, FRR 10 keeps it configured (shown "inactive" once its kernel
// device is gone) for ever.
func dropStaleVRFs(ctx context.Context, t frrvty.Target, cfg []byte, tl *timeline) error {
	if t.Version.OrShipped().Major < 10 {
		return nil
	}
	start := time.Now()
	defer tl.since(StepCheck, start)
	out, err := t.RunningConfig(ctx)
	if err != nil {
		return err
	}
	have, lines := vrfBlocks(out)
	var cmds []string
	for _, v := range have {
		if len(lines[v]) == 0 && !namesVRF(cfg, v) {
			cmds = append(cmds, "no vrf "+v)
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	if _, err := t.Vtysh(ctx, append([]string{"configure terminal"}, cmds...)...); err != nil {
		return fmt.Errorf("remove the emptied VRFs %v: %w", cmds, err)
	}
	return nil
}

// namesVRF reports whether any line of cfg names VRF v ("vrf v", "router bgp N vrf v", "import vrf v"): FRR
// keeps such a VRF configured.
func namesVRF(cfg []byte, v string) bool {
	for line := range strings.Lines(string(cfg)) {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "vrf" && f[i+1] == v {
				return true
			}
		}
	}
	return false
}
