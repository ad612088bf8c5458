package frrreload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrdiff"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// ErrReloadFailed marks a validated config that FRR failed to apply; the
// previous config has been restored (or the error says why it could not be).
var ErrReloadFailed = errors.New("FRR reload failed")

// ErrClosed is returned by a Reloader used after Close.
var ErrClosed = errors.New("frr reloader is closed")

// ReloadMethod selects how a new frr.conf reaches the daemons.
type ReloadMethod int

const (
	// ReloadScript runs frr-reload.py against the target's vty sockets.
	ReloadScript ReloadMethod = iota
	// ReloadSystemd asks systemd to reload the FRR unit (which runs
	// frr-reload.py itself), for hosts that run frr.service.
	ReloadSystemd
)

// UnitReloader reloads a systemd unit and waits for the job to finish.
type UnitReloader interface {
	ReloadUnit(ctx context.Context, unit string) error
}

// FileOwner is the owner given to frr.conf (FRR reads it as that user).
type FileOwner struct{ UID, GID int }

// Options configure a Reloader.
type Options struct {
	frrvty.Target
	// StateDir keeps the last applied config for a cold start (required).
	StateDir string
	// Owner of frr.conf and the candidate file. Nil: user and group "frr"
	// when running as root and they exist, else unchanged.
	Owner *FileOwner
	// ScratchDaemons validate the candidate in a scratch FRR instance before
	// it is applied (see scratch: kept running until Close). Nil means
	// DefaultScratchDaemons; an empty slice leaves only the syntax check.
	ScratchDaemons []string
	Method         ReloadMethod
	// Systemd and SystemdUnit (default "frr.service") serve ReloadSystemd.
	Systemd     UnitReloader
	SystemdUnit string
}

// Result describes one Apply.
type Result struct {
	// Skipped: the config equals the last applied one; FRR was not touched.
	Skipped bool
	// Hash is the SHA-256 of the config.
	Hash string
	// Diff is what frr-reload.py computes against the running config (frrdiff
	// computes the same in Go where it can read both configs).
	Diff Diff
	// Residual lists changes FRR still reports after reloading: lines it
	// does not keep in its running config. Empty for rendered configs.
	Residual []string
	// Path says how the config reached the daemons; PathReason why not by the
	// delta alone (frrdiff's reason, or FRR's refusal of part of the delta).
	Path       Path
	PathReason string
	// Validate covers the syntax check, the scratch instance and the diff;
	// Reload the reload passes and the final comparison.
	Validate, Reload time.Duration
	// Steps break both down, in the order they ended (StepSyntax, ...).
	Steps []Step
}

// Diff lists the config lines FRR had to add or delete (secrets redacted).
type Diff struct{ Add, Delete []string }

// Reloader validates and applies rendered configs to one set of daemons.
// Apply calls are serialised.
type Reloader struct {
	opts    Options
	mu      sync.Mutex
	last    string   // hash of the last applied config
	gen     uint64   // installs and forgotten configs so far (a Commit checks none came after its Prepare)
	scratch *scratch // nil without ScratchDaemons
	closed  bool
	// daemons identifies the daemons that run the last applied config (their vty sockets, made anew by every
	// start): another identity means FRR restarted since (see Restarted).
	daemons string
}

const lastAppliedFile = "last-applied.conf"

// NewReloader prepares StateDir and loads the hash of the last applied
// config, so an identical config after an agent restart is skipped.
func NewReloader(opts Options) (*Reloader, error) {
	if opts.StateDir == "" {
		return nil, errors.New("frr reloader: StateDir is required")
	}
	if opts.Method == ReloadSystemd && opts.Systemd == nil {
		return nil, errors.New("frr reloader: ReloadSystemd needs Systemd")
	}
	if opts.SystemdUnit == "" {
		opts.SystemdUnit = "frr.service"
	}
	if opts.ScratchDaemons == nil {
		opts.ScratchDaemons = DefaultScratchDaemons
	}
	if opts.Owner == nil && os.Geteuid() == 0 {
		opts.Owner = lookupFRROwner()
	}
	opts.Target = opts.Target.WithDefaults()
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("frr reloader state dir: %w", err)
	}
	r := &Reloader{opts: opts}
	if len(opts.ScratchDaemons) > 0 {
		r.scratch = newScratch(opts.Target, opts.ScratchDaemons)
	}
	if data, err := os.ReadFile(r.lastAppliedPath()); err == nil {
		r.last = hashOf(data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read last applied config: %w", err)
	}
	return r, nil
}

func lookupFRROwner() *FileOwner {
	u, err := user.Lookup("frr")
	if err != nil {
		return nil
	}
	g, err := user.LookupGroup("frr")
	if err != nil {
		return nil
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(g.Gid)
	if err1 != nil || err2 != nil {
		return nil
	}
	return &FileOwner{UID: uid, GID: gid}
}

// Close stops the scratch FRR instance; the Reloader refuses work afterwards (ErrClosed).
func (r *Reloader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.scratch == nil {
		return nil
	}
	return r.scratch.stop(context.Background())
}

// ReleaseIdleScratch stops the scratch FRR instance when no validation has used it for idle, as of now. It holds
// about as much memory as the node's own FRR (~400 MiB at 1000 VRFs, see docs/bench.md) while validations come
// in bursts, during rollouts; the next validation after a release starts it again and loads the config afresh.
// It reports whether it stopped the instance.
func (r *Reloader) ReleaseIdleScratch(ctx context.Context, idle time.Duration, now time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.scratch == nil || r.scratch.in == nil || idle <= 0 || now.Sub(r.scratch.used) < idle {
		return false, nil
	}
	return true, r.scratch.stop(ctx)
}

// Target returns the daemons this Reloader applies to.
func (r *Reloader) Target() frrvty.Target { return r.opts.Target }

func (r *Reloader) lastAppliedPath() string { return filepath.Join(r.opts.StateDir, lastAppliedFile) }

// LastApplied returns the last config applied successfully (fs.ErrNotExist
// when there is none yet).
func (r *Reloader) LastApplied() ([]byte, error) {
	data, err := os.ReadFile(r.lastAppliedPath())
	if err != nil {
		return nil, fmt.Errorf("last applied FRR config: %w", err)
	}
	return data, nil
}

// RestoreLastApplied re-applies the last applied config, even if its hash
// matches: on a cold start FRR may run something else.
func (r *Reloader) RestoreLastApplied(ctx context.Context) (Result, error) {
	data, err := r.LastApplied()
	if err != nil {
		return Result{}, err
	}
	return r.apply(ctx, data, true)
}

// Validate checks cfg without applying it: syntax, the scratch FRR instance,
// and the diff against the running daemons. A refusal is a *ValidationError
// (errors.Is ErrRejected) naming the offending lines.
func (r *Reloader) Validate(ctx context.Context, cfg []byte) (Diff, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Diff{}, ErrClosed
	}
	cand, err := r.writeCandidate(cfg)
	if err != nil {
		return Diff{}, err
	}
	defer os.Remove(cand)
	p, err := r.prepare(ctx, cand, cfg, nil)
	return p.diff, err
}

// Apply validates cfg, installs it as frr.conf and reloads FRR. It is a no-op
// when cfg equals the last applied config. An invalid config is never
// installed: the running config and frr.conf stay as they were.
func (r *Reloader) Apply(ctx context.Context, cfg []byte) (Result, error) {
	return r.apply(ctx, cfg, false)
}

func (r *Reloader) apply(ctx context.Context, cfg []byte, force bool) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, err := r.validate(ctx, cfg, force)
	if err != nil || v.res.Skipped {
		return v.res, err
	}
	return r.install(ctx, v)
}

// Commit installs and reloads the config a Prepare validated (Apply's second half).
type Commit func(ctx context.Context) (Result, error)

// Prepare is Apply's first half: it validates cfg exactly as Apply does (syntax, the scratch instance, the diff
// against the running daemons) and returns the Commit that installs and reloads it, so that a caller can do
// other work in between - nothing of FRR changes until the Commit. A refusal is a *ValidationError (errors.Is
// ErrRejected); a cfg equal to the last applied config gives a Commit that reports Skipped. The Commit fails with
// ErrStale when another config was applied since the Prepare (its diff was computed against what FRR ran then).
func (r *Reloader) Prepare(ctx context.Context, cfg []byte) (Commit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, err := r.validate(ctx, cfg, false)
	if err != nil {
		return nil, err
	}
	gen := r.gen
	return func(ctx context.Context) (Result, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case r.closed:
			return v.res, ErrClosed
		case r.gen != gen:
			return v.res, ErrStale
		case v.res.Skipped:
			return v.res, nil
		}
		return r.install(ctx, v)
	}, nil
}

// ErrStale: a Commit came after another config was applied (Prepare again).
var ErrStale = errors.New("frr: another config was applied since this one was prepared")

// validated is a config validate accepted, with what install needs.
type validated struct {
	cfg []byte
	res Result // Hash, Skipped, Diff, Validate so far
	p   prepared
	tl  *timeline
}

// validate is Apply's first half (r.mu held): the candidate checked and its diff; res.Skipped when it equals the
// last applied config (unless force).
func (r *Reloader) validate(ctx context.Context, cfg []byte, force bool) (v validated, _ error) {
	v = validated{cfg: cfg, res: Result{Hash: hashOf(cfg)}, tl: &timeline{}}
	if r.closed {
		return v, ErrClosed
	}
	if !force && v.res.Hash == r.last {
		v.res.Skipped = true
		return v, nil
	}
	defer func() { v.res.Steps = v.tl.list() }()
	start := time.Now()
	cand, err := r.writeCandidate(cfg)
	if err != nil {
		return v, err
	}
	defer os.Remove(cand)
	v.p, err = r.prepare(ctx, cand, cfg, v.tl)
	v.res.Diff = v.p.diff
	if err != nil {
		return v, err
	}
	v.res.Validate = time.Since(start)
	return v, nil
}

// install is Apply's second half (r.mu held): v's config becomes frr.conf and FRR's running config; a failed
// reload is undone.
func (r *Reloader) install(ctx context.Context, v validated) (res Result, _ error) {
	res, tl, cfg, p := v.res, v.tl, v.cfg, v.p
	defer func() { res.Steps = tl.list() }()
	r.gen++
	start := time.Now()
	confPath := r.opts.ConfigPath()
	prev, prevErr := os.ReadFile(confPath)
	if prevErr != nil && !errors.Is(prevErr, fs.ErrNotExist) {
		return res, fmt.Errorf("read current %s: %w", confPath, prevErr)
	}
	cand, err := r.writeCandidate(cfg)
	if err != nil {
		return res, err
	}
	if err := os.Rename(cand, confPath); err != nil {
		os.Remove(cand)
		return res, fmt.Errorf("install %s: %w", confPath, err)
	}
	undo := func(err error) error { return r.rollback(ctx, confPath, prev, prevErr == nil, err) }
	switch {
	case r.opts.Method == ReloadSystemd:
		res.Path = PathSystemd
		if err := r.reload(ctx, confPath, tl); err != nil {
			return res, undo(err)
		}
	case p.delta != nil:
		res.Path = PathDelta
		res.Residual, err = applyDelta(ctx, r.opts.Target, p.cand, *p.delta, tl)
		if err != nil {
			res.Path, res.PathReason = PathDeltaThenScript, err.Error()
			res.Residual, err = r.reloadScript(ctx, cfg, confPath, undo, tl)
		}
	default:
		res.Path, res.PathReason = PathReloadScript, p.why
		res.Residual, err = r.reloadScript(ctx, cfg, confPath, undo, tl)
	}
	if err != nil {
		return res, err
	}
	if err := dropStaleVRFs(ctx, r.opts.Target, cfg, tl); err != nil {
		return res, undo(err)
	}
	res.Reload = time.Since(start)
	if err := writeFileAtomic(r.lastAppliedPath(), cfg, nil); err != nil {
		return res, fmt.Errorf("applied, but saving last applied config failed: %w", err)
	}
	r.last = res.Hash
	r.daemons = r.opts.Target.DaemonsIdentity()
	return res, nil
}

// reloadScript applies confPath with frr-reload.py: the VRF blocks first, the reload, and converge. A failed
// reload is undone.
func (r *Reloader) reloadScript(ctx context.Context, cfg []byte, confPath string, undo func(error) error, tl *timeline) ([]string, error) {
	if err := r.prestageVRFs(ctx, cfg, tl); err != nil {
		return nil, undo(err)
	}
	if err := r.reload(ctx, confPath, tl); err != nil {
		return nil, undo(err)
	}
	start := time.Now()
	left, err := r.converge(ctx, confPath)
	tl.since(StepConverge, start)
	return left, err
}

// maxReloadPasses bounds converge: frr-reload.py orders some deletions
// badly (it removes "router bgp X vrf Y" before the "import vrf Y" lines that
// keep that instance alive), which a second pass completes.
const maxReloadPasses = 3

// converge compares FRR's running config with the file again and reloads
// while that makes progress. Lines FRR never shows (a brownfield base may
// hold some) stay in Result.Residual without failing the apply.
func (r *Reloader) converge(ctx context.Context, confPath string) ([]string, error) {
	if r.opts.Method == ReloadSystemd {
		return nil, nil // systemd's reload runs frr-reload.py itself
	}
	var prev []string
	for pass := 1; ; pass++ {
		out, stderr, err := r.opts.Run(ctx, r.opts.Python, reloadArgs(r.opts.Target, "--test", confPath)...)
		if err != nil {
			return nil, fmt.Errorf("%w: check after reload: %w: %s", ErrReloadFailed, err, strings.Join(errorLines(frr.Redact(string(out)+stderr)), "; "))
		}
		left := parseDiff(frr.Redact(string(out) + stderr)).Significant()
		if len(left) == 0 || slices.Equal(left, prev) || pass == maxReloadPasses {
			return left, nil
		}
		prev = left
		if err := r.reload(ctx, confPath, nil); err != nil {
			return nil, fmt.Errorf("%w: pass %d: %w", ErrReloadFailed, pass+1, err)
		}
	}
}

// Significant lists the changes that matter. Not counted: the version line
// frr-reload.py always reports, the hostname (vtysh shows the system's), and
// an empty "line vty" block, "service integrated-vtysh-config", vtysh's own setting from vtysh.conf
// (which vtysh may not read with a pathspace and a pathspace --confdir).
// Lines come as "+ line" (to add) and "- line" (to delete).
func (d Diff) Significant() []string {
	var out []string
	for _, part := range []struct {
		sign  string
		lines []string
	}{{"+ ", d.Add}, {"- ", d.Delete}} {
		for _, l := range part.lines {
			if isNoise(strings.TrimSpace(l)) {
				continue
			}
			out = append(out, part.sign+l)
		}
	}
	return out
}

// prestageVRFs creates zebra's "vrf NAME" blocks (the L3VNI mapping) that
// are new before frr-reload.py runs. frr-reload.py adds lines to existing
// contexts before new contexts, so a new "vrf" block lands in its command
// file right after "address-family" lines of "router bgp"; vtysh then loses
// zebra's context on the way back up and runs the block's "vni N" at the
// top level, where it means the default VRF's L3VNI.
func (r *Reloader) prestageVRFs(ctx context.Context, cfg []byte, tl *timeline) error {
	if r.opts.Method == ReloadSystemd {
		return nil
	}
	names, blocks := vrfBlocks(cfg)
	if len(names) == 0 {
		return nil
	}
	start := time.Now()
	running, err := r.opts.RunningConfig(ctx)
	tl.since(StepRunning, start)
	if err != nil {
		return fmt.Errorf("prestage VRFs: %w", err)
	}
	_, have := vrfBlocks(running)
	for _, name := range names {
		if _, ok := have[name]; ok {
			continue // existing context: frr-reload.py orders its lines right
		}
		cmds := append([]string{"configure", "vrf " + name}, blocks[name]...)
		cmds = append(cmds, "exit-vrf")
		out, err := r.opts.Vtysh(ctx, cmds...)
		if err == nil && frrproc.Refused(out) {
			err = errors.New(strings.TrimSpace(string(out)))
		}
		if err != nil {
			return fmt.Errorf("prestage vrf %s: %w", name, err)
		}
	}
	return nil
}

// vrfBlocks returns the top-level "vrf NAME" blocks of a config, in order,
// with their inner lines (trimmed, without exit-vrf).
func vrfBlocks(cfg []byte) ([]string, map[string][]string) {
	var names []string
	blocks := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(string(cfg), "\n") {
		line = strings.TrimRight(line, " \r")
		switch {
		case strings.HasPrefix(line, "vrf ") && len(strings.Fields(line)) == 2:
			cur = strings.Fields(line)[1]
			if _, ok := blocks[cur]; !ok {
				names = append(names, cur)
				blocks[cur] = nil
			}
		case cur == "":
		case line == "exit-vrf" || line != "" && line[0] != ' ':
			cur = ""
		case strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "!"):
			blocks[cur] = append(blocks[cur], strings.TrimSpace(line))
		}
	}
	return names, blocks
}

func isNoise(line string) bool {
	for _, p := range []string{"frr version", "hostname ", "no hostname ", "service integrated-vtysh-config", "no service integrated-vtysh-config"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	// An empty "line vty" (das-schiff's bases end with one) is never shown.
	return line == "" || line == "line vty"
}

// rollback puts the previous frr.conf back and reloads it, so a reload that
// failed half-way does not leave FRR in a mixed state.
func (r *Reloader) rollback(ctx context.Context, confPath string, prev []byte, hadPrev bool, cause error) error {
	ctx = context.WithoutCancel(ctx)
	if !hadPrev {
		if err := os.Remove(confPath); err != nil {
			return fmt.Errorf("%w: %w; removing the new %s also failed: %w", ErrReloadFailed, cause, confPath, err)
		}
		return fmt.Errorf("%w: %w (no previous config to restore)", ErrReloadFailed, cause)
	}
	if err := writeFileAtomic(confPath, prev, r.opts.Owner); err != nil {
		return fmt.Errorf("%w: %w; restoring %s failed: %w", ErrReloadFailed, cause, confPath, err)
	}
	if err := r.reload(ctx, confPath, nil); err != nil {
		return fmt.Errorf("%w: %w; reloading the previous config failed too: %w", ErrReloadFailed, cause, err)
	}
	return fmt.Errorf("%w: %w (previous config restored)", ErrReloadFailed, cause)
}

// writeCandidate puts cfg next to frr.conf (same filesystem for the rename,
// readable by the daemons' user for their dry run), mode 0600.
func (r *Reloader) writeCandidate(cfg []byte) (string, error) {
	f, err := os.CreateTemp(r.opts.ConfDir, ".frr.conf.candidate-")
	if err != nil {
		return "", fmt.Errorf("candidate config: %w", err)
	}
	name := f.Name()
	if err := finishFile(f, cfg, r.opts.Owner); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("candidate config: %w", err)
	}
	return name, nil
}

// prepared is a validated candidate and how it will be applied.
type prepared struct {
	diff Diff
	cand *frrdiff.Config // frrdiff's reading of the candidate; nil when it cannot read it
	// delta turns the daemons' running config into the candidate; nil: frr-reload.py applies it, why says why.
	delta *frrdiff.Delta
	why   string
}

// prepare validates the candidate file (the scratch instance, or vtysh's parser alone) and computes its diff
// against the running daemons: frrdiff's, with the running config read while the candidate is checked, or
// frr-reload.py --test's where frrdiff cannot read a side.
func (r *Reloader) prepare(ctx context.Context, candFile string, cfg []byte, tl *timeline) (prepared, error) {
	var p prepared
	cand, err := parseCandidate(r.opts.Target, cfg)
	if err != nil {
		p.why = "candidate: " + err.Error()
	} else {
		p.cand = cand
	}
	var wg sync.WaitGroup
	var running *frrdiff.Config
	runErr := errors.New("not read")
	rctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		wg.Wait()
	}()
	if p.cand != nil {
		wg.Go(func() { running, runErr = runningConfig(rctx, r.opts.Target, tl) })
	}
	syntax := func() error { return check(ctx, r.opts.Target, candFile, nil, tl) }
	if r.scratch != nil {
		err = r.scratch.validate(ctx, candFile, p.cand, syntax, tl)
	} else {
		err = syntax()
	}
	if err != nil {
		return p, err
	}
	wg.Wait()
	if p.cand != nil {
		if runErr != nil {
			p.why = runErr.Error()
		} else if d, err := frrdiff.Compare(p.cand, running); err != nil {
			p.why = err.Error()
		} else {
			p.delta, p.diff = &d, deltaDiff(d)
			return p, nil
		}
	}
	diff, err := r.testDiff(ctx, candFile, tl)
	p.diff = diff
	return p, err
}

// testDiff is frr-reload.py --test's diff of the candidate file against the running daemons.
func (r *Reloader) testDiff(ctx context.Context, cand string, tl *timeline) (Diff, error) {
	start := time.Now()
	out, stderr, err := r.opts.Run(ctx, r.opts.Python, reloadArgs(r.opts.Target, "--test", cand)...)
	tl.since(StepTest, start)
	text := frr.Redact(string(out) + stderr)
	if err != nil {
		if ctx.Err() != nil {
			return Diff{}, fmt.Errorf("frr-reload.py --test: %w", ctx.Err())
		}
		return Diff{}, &ValidationError{Check: "frr-reload --test", Messages: errorLines(text)}
	}
	return parseDiff(text), nil
}

// reload applies confPath; tl (may be nil) records the step.
func (r *Reloader) reload(ctx context.Context, confPath string, tl *timeline) error {
	if r.opts.Method == ReloadSystemd {
		if err := r.opts.Systemd.ReloadUnit(ctx, r.opts.SystemdUnit); err != nil {
			return fmt.Errorf("systemd reload %s: %w", r.opts.SystemdUnit, err)
		}
		return nil
	}
	start := time.Now()
	out, stderr, err := r.opts.Run(ctx, r.opts.Python, reloadArgs(r.opts.Target, "--reload", confPath)...)
	tl.since(StepReload, start)
	if err != nil {
		msgs := errorLines(frr.Redact(string(out) + stderr))
		return fmt.Errorf("frr-reload.py --reload: %w: %s", err, strings.Join(msgs, "; "))
	}
	return nil
}

var logLineRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\s+(\w+): (.*)$`)

// errorLines keeps what explains a frr-reload.py failure: its warnings and
// errors plus vtysh's "%" messages.
func errorLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if m := logLineRe.FindStringSubmatch(l); m != nil {
			if m[1] != "INFO" && m[1] != "DEBUG" {
				out = appendUnique(out, m[1]+": "+m[2])
			}
			continue
		}
		if strings.HasPrefix(l, "% ") && !strings.Contains(l, "vtysh.conf") || strings.HasPrefix(l, "line ") {
			out = appendUnique(out, l)
		}
	}
	if len(out) == 0 {
		out = []string{strings.TrimSpace(text)}
	}
	return out
}

// parseDiff reads frr-reload.py --test output: "Lines To Delete" and
// "Lines To Add" sections, each under a line of '='.
func parseDiff(text string) Diff {
	var d Diff
	var cur *[]string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimRight(l, " ")
		switch {
		case t == "Lines To Delete":
			cur = &d.Delete
		case t == "Lines To Add":
			cur = &d.Add
		case strings.TrimSpace(t) == "" || strings.Trim(t, "=") == "" || logLineRe.MatchString(t) || strings.HasPrefix(t, "% "):
		case cur != nil:
			*cur = append(*cur, t)
		}
	}
	return d
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// writeFileAtomic writes data to a temp file in path's directory (0600,
// owned by owner when set), syncs it and renames it over path.
func writeFileAtomic(path string, data []byte, owner *FileOwner) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	if err := finishFile(f, data, owner); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

func finishFile(f *os.File, data []byte, owner *FileOwner) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil && owner != nil {
		err = f.Chown(owner.UID, owner.GID)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Restarted tells whether FRR's daemons were restarted since the last apply (their vty sockets are new: an FRR
// pod or DaemonSet replaced, a crash) and then does what Resync does, so a restart that lost the config makes the
// next Apply reload it instead of skipping an unchanged config. Cheap while nothing restarted: two stat calls.
func (r *Reloader) Restarted(ctx context.Context) (bool, error) {
	id := r.opts.Target.DaemonsIdentity()
	r.mu.Lock()
	same := id == r.daemons
	r.mu.Unlock()
	if same {
		return false, nil
	}
	return r.Resync(ctx)
}

// Resync drops the memory of the last applied config when FRR no longer runs it: the daemons were restarted
// with another frr.conf (FRR in the agent's pod restarts with the pod, from an empty config), so the next Apply
// reloads instead of skipping. It compares the "router ..." stanzas, which every config of ours has and which an
// FRR started afresh lacks. It reports whether it forgot.
func (r *Reloader) Resync(ctx context.Context) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.opts.Target.DaemonsIdentity() // before reading: a restart in between shows at the next look
	if r.last == "" {
		r.daemons = id
		return false, nil
	}
	applied, err := os.ReadFile(r.lastAppliedPath())
	if err != nil {
		return false, fmt.Errorf("read last applied config: %w", err)
	}
	running, err := r.opts.Target.RunningConfig(ctx)
	if err != nil {
		return false, fmt.Errorf("FRR's running config: %w", err)
	}
	r.daemons = id
	if slices.Equal(routerStanzas(applied), routerStanzas(running)) {
		return false, nil
	}
	r.last = ""
	r.gen++ // a prepared diff was computed against the config FRR no longer runs
	return true, nil
}

// routerStanzas are the "router ..." lines of a config, sorted.
func routerStanzas(cfg []byte) []string {
	var out []string
	for _, l := range strings.Split(string(cfg), "\n") {
		if strings.HasPrefix(l, "router ") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	slices.Sort(out)
	return out
}
