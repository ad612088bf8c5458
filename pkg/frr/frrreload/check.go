package frrreload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// ErrRejected marks a configuration FRR refused (errors.Is).
var ErrRejected = errors.New("FRR rejected the configuration")

// ConfigLine is one line of a checked config file (secrets redacted).
type ConfigLine struct {
	Number int
	Text   string
}

// ValidationError says which check refused a config, on which lines, and why.
type ValidationError struct {
	// Check is "vtysh -C", "scratch load" or "frr-reload --test".
	Check    string
	Lines    []ConfigLine
	Messages []string
}

// renumber turns the lines' numbers in a prepared file into those of its source (origin, see vtyshFile).
func (e *ValidationError) renumber(origin []int) {
	for i, l := range e.Lines {
		if l.Number >= 1 && l.Number <= len(origin) && origin[l.Number-1] > 0 {
			e.Lines[i].Number = origin[l.Number-1]
		}
	}
	slices.SortFunc(e.Lines, func(a, b ConfigLine) int { return a.Number - b.Number })
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", ErrRejected.Error(), e.Check)
	for _, l := range e.Lines {
		fmt.Fprintf(&b, "; line %d: %s", l.Number, strings.TrimSpace(l.Text))
	}
	for _, m := range e.Messages {
		fmt.Fprintf(&b, "; %s", m)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrRejected) true.
func (e *ValidationError) Is(target error) bool { return target == ErrRejected }

// DefaultScratchDaemons are started for the scratch load of a check: the daemons the node runs for what pkg/frr
// renders (bfdd holds the BFD profiles; without it their lines would stay a difference).
var DefaultScratchDaemons = []string{"zebra", "bgpd", "bfdd"}

// check validates a config file without touching the running daemons. First
// vtysh's parser checks every line's syntax ("vtysh -C"). Then, unless
// scratchDaemons is empty, the file is loaded into a throw-away FRR instance
// (those daemons, in a fresh network namespace, no BGP listener): the
// daemons' own checks run there, such as prefix-list ranges, VNI conflicts or
// peer-group rules, which a syntax check cannot see. Each daemon's own "-C"
// dry run is not used: a daemon reading the integrated config misreads the
// other daemons' lines (zebra takes bgpd's "vni 100" for an L3VNI).
// Its steps are recorded in tl.
func check(ctx context.Context, t frrvty.Target, file string, scratchDaemons []string, tl *timeline) error {
	t = t.WithDefaults()
	start := time.Now()
	stdout, stderr, err := t.Run(ctx, t.VtyshPath, "--config_dir", t.ConfDir, "-C", "-f", file)
	tl.since(StepSyntax, start)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("vtysh -C: %w", ctx.Err())
		}
		if verr := parseLoadOutput("vtysh -C", string(stdout)+stderr, file); verr != nil {
			return verr
		}
		return fmt.Errorf("vtysh -C -f %s: %w: %s", file, err, frr.Redact(stderr+string(stdout)))
	}
	if len(scratchDaemons) == 0 {
		return nil
	}
	return scratchLoad(ctx, t, file, scratchDaemons, nil, tl)
}

func scratchLoad(ctx context.Context, t frrvty.Target, file string, daemons []string, after func(*frrproc.Instance) error, tl *timeline) (err error) {
	start := time.Now()
	ns, in, err := startScratch(ctx, t, daemons)
	if err != nil {
		return err
	}
	tl.since(StepScratchStart, start)
	defer func() {
		start := time.Now()
		if serr := stopScratch(ctx, ns, in); serr != nil && err == nil {
			err = serr
		}
		tl.since(StepScratchStop, start)
	}()
	start = time.Now()
	err = loadVerdict(ctx, in, file)
	tl.since(StepScratchLoad, start)
	if err != nil {
		return err
	}
	if after != nil {
		return after(in)
	}
	return nil
}

// startScratch starts daemons for a scratch load: in a namespace of their own, without a BGP listener.
func startScratch(ctx context.Context, t frrvty.Target, daemons []string) (*frrproc.Netns, *frrproc.Instance, error) {
	ns, err := frrproc.NewNetns(ctx, "frrchk-")
	if err != nil {
		return nil, nil, fmt.Errorf("scratch FRR for validation: %w", err)
	}
	// Forwarding on, as FRR's datacenter defaults want it, so a config that
	// does not mention forwarding matches the scratch instance.
	for _, key := range []string{"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"} {
		if err := ns.Sysctl(ctx, key, "1"); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("scratch FRR for validation: %w", err), ns.Delete(context.WithoutCancel(ctx)))
		}
	}
	in, err := frrproc.Start(ctx, frrproc.Options{
		Netns: ns.Name, Daemons: daemons, NoBGPListen: true, Tools: t.Tools, DaemonDir: t.DaemonDir, Vtysh: t.VtyshPath,
	})
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("scratch FRR for validation: %w", err), ns.Delete(context.WithoutCancel(ctx)))
	}
	return ns, in, nil
}

// stopScratch stops the daemons, then removes their namespace.
func stopScratch(ctx context.Context, ns *frrproc.Netns, in *frrproc.Instance) error {
	return errors.Join(in.Stop(), ns.Delete(context.WithoutCancel(ctx)))
}

// loadVerdict loads file into the scratch daemons in and says whether FRR refused any of it: the scratch load's
// one verdict, a *ValidationError naming the file's lines.
func loadVerdict(ctx context.Context, in *frrproc.Instance, file string) error {
	prepared, remove, origin, err := preparedFile(file)
	if err != nil {
		return err
	}
	defer remove()
	out, loadErr := in.LoadFile(ctx, prepared)
	if ctx.Err() != nil {
		return fmt.Errorf("scratch load: %w", ctx.Err())
	}
	if verr := parseLoadOutput("scratch load", string(out), prepared); verr != nil {
		verr.renumber(origin)
		return verr
	}
	if loadErr != nil {
		return &ValidationError{Check: "scratch load", Messages: []string{frr.Redact(strings.TrimSpace(string(out))), loadErr.Error()}}
	}
	return nil
}

var (
	vtyshLineRe  = regexp.MustCompile(`(?m)^line (\d+): (.*)$`)
	errorDescRe  = regexp.MustCompile(`(?m)^Error description: (.*)$`)
	percentMsgRe = regexp.MustCompile(`(?m)^(% .*)$`)
	failedRe     = regexp.MustCompile(`(?m)^% Configuration failed\.?$`)
	codeRe       = regexp.MustCompile(`\[\d+\]`)
)

// groupHeader starts FRR's list of northbound commands refused together
// ("- <line>" each, without line numbers).
const groupHeader = "dynamically grouped into the same transaction and rejected:"

// parseLoadOutput turns vtysh's output for "-C -f" or "-f" into a
// ValidationError, or nil when it reports no refusal. vtysh names lines it
// could not run ("line N: % Unknown command[25]: ..."); northbound refusals
// come as "% Configuration failed" with an error description and the
// refused commands, which are found back in the file.
func parseLoadOutput(check, out, file string) *ValidationError {
	lines := fileLines(file)
	e := &ValidationError{Check: check}
	seen := map[int]bool{}
	addLine := func(n int) {
		if n > 0 && !seen[n] {
			seen[n] = true
			e.Lines = append(e.Lines, ConfigLine{Number: n, Text: lineText(lines, n)})
		}
	}
	for _, m := range vtyshLineRe.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		addLine(n)
		e.Messages = appendUnique(e.Messages, vtyshMessage(m[2]))
	}
	inGroup := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, groupHeader):
			inGroup = true
		case inGroup && strings.HasPrefix(l, "- "):
			addLine(findLine(lines, strings.TrimPrefix(l, "- "), seen))
		default:
			inGroup = false
		}
	}
	for _, m := range errorDescRe.FindAllStringSubmatch(out, -1) {
		e.Messages = appendUnique(e.Messages, frr.Redact(strings.TrimSpace(m[1])))
	}
	percent := 0
	for _, m := range percentMsgRe.FindAllStringSubmatch(out, -1) {
		if frrproc.Advisory(m[1]) {
			continue
		}
		percent++
		if !failedRe.MatchString(m[1]) {
			e.Messages = appendUnique(e.Messages, frr.Redact(strings.TrimSpace(m[1])))
		}
	}
	if len(e.Lines) == 0 && percent == 0 {
		return nil
	}
	slices.SortFunc(e.Lines, func(a, b ConfigLine) int { return a.Number - b.Number })
	return e
}

// vtyshMessage shortens "% Unknown command[25]:  <the line>" to
// "% Unknown command" and "Failure to communicate[13] to bgpd, line: ..."
// to "Failure to communicate to bgpd": the line itself is reported apart,
// redacted.
func vtyshMessage(m string) string {
	m = codeRe.ReplaceAllString(m, "")
	if i := strings.Index(m, ", line:"); i >= 0 {
		m = m[:i]
	}
	if i := strings.Index(m, ":  "); i >= 0 {
		m = m[:i]
	}
	return strings.TrimSpace(m)
}

// findLine returns the number of the first line equal to text not yet
// reported, or 0.
func findLine(lines []string, text string, seen map[int]bool) int {
	for i, l := range lines {
		if strings.TrimRight(l, " \r") == strings.TrimRight(text, " \r") && !seen[i+1] {
			return i + 1
		}
	}
	return 0
}

func fileLines(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")
}

func lineText(lines []string, n int) string {
	if n < 1 || n > len(lines) {
		return ""
	}
	return frr.Redact(lines[n-1])
}

func appendUnique(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// reloadArgs are frr-reload.py's arguments for mode "--test" or "--reload".
// --confdir is always frr.conf's own directory: frr-reload.py then sees it is
// reloading that very file and does not overwrite it with "write".
func reloadArgs(t frrvty.Target, mode, file string) []string {
	t = t.WithDefaults()
	args := []string{t.ReloadScript, mode, "--stdout",
		"--bindir", filepath.Dir(t.VtyshPath), "--confdir", t.ConfDir, "--rundir", t.RunDir}
	if t.Pathspace != "" {
		args = append(args, "--pathspace", t.Pathspace)
	} else if t.VtySocket != "" {
		args = append(args, "--vty_socket", t.VtySocket)
	}
	return append(args, file)
}
