package nodescale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/test/harness/bench/benchproc"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// IdleScale is the idle agent's small config: one VRF and its layer-2 network (4 interfaces, one routed by the
// eBPF router).
var IdleScale = Scale{VRFs: 1, Prefixes: 3}

// idleResyncs are the reconciles of the unchanged small config the idle agent runs (one a second) before its
// memory is read.
const idleResyncs = 10

// Idle is the agent at rest: RssAnon (bytes) after idleResyncs resyncs of the small config, and its largest
// sample from the start on.
type Idle struct {
	Anon, AnonPeak float64
	Reconciles     int
}

// idleAgent starts the agent binary standalone (a config file, no API server) in a namespace of its own with
// zebra + bgpd, the small config IdleScale and the flags of the scale run, waits for it to apply the config and
// resync it idleResyncs times, and reads its anonymous memory; the agent and FRR are stopped before it returns.
func idleAgent(ctx context.Context, l *lab.Lab, bin, work string, tools frrproc.Tools, memoryLimit string) (idle Idle, err error) {
	ns, err := l.AddNamespace("idle")
	if err != nil {
		return idle, err
	}
	pins, err := l.PinDir()
	if err != nil {
		return idle, err
	}
	in, err := frrproc.Start(ctx, frrproc.Options{Tools: tools, Netns: ns.Name})
	if err != nil {
		return idle, fmt.Errorf("the idle node's FRR: %w", err)
	}
	defer func() { err = errors.Join(err, in.Stop()) }()
	dir := filepath.Join(work, "idle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return idle, err
	}
	doc := v1.NodeNetworkConfig{Spec: Spec(IdleScale, "idle-1")}
	doc.APIVersion, doc.Kind, doc.Name = v1.GroupVersion.String(), "NodeNetworkConfig", "idle"
	data, err := yaml.Marshal(doc)
	if err != nil {
		return idle, err
	}
	config := filepath.Join(dir, "node.yaml")
	if err := os.WriteFile(config, data, 0o644); err != nil {
		return idle, err
	}
	agent, err := startAgent(bin, dir, "--config-file", config, "--status-file", filepath.Join(dir, "status.yaml"),
		"--netns", ns.Name, "--pin-dir", pins, "--state-file", filepath.Join(dir, "last-good.yaml"), "--listen", "",
		"--resync", "1s", "--frr", "reload", "--frr-vty-socket", in.Dir, "--frr-conf-dir", in.ConfDir, "--frr-root", tools.Root,
		"--frr-state-dir", filepath.Join(dir, "frr"), "--memory-limit", memoryLimit)
	if err != nil {
		return idle, err
	}
	defer func() { err = errors.Join(err, agent.Stop(30*time.Second)) }()
	err = wait.Poll(ctx, 200*time.Millisecond, 3*time.Minute, fmt.Sprintf("the idle agent applies and resyncs %d times", idleResyncs),
		func(context.Context) (bool, string, error) {
			if err := agent.Running(); err != nil {
				return false, "", err
			}
			idle.sample(agent)
			recs := standaloneReconciles(agent.Output())
			for _, r := range recs {
				if r.result != "applied" && r.result != "unchanged" {
					return false, "", fmt.Errorf("the idle agent did not apply its config: %s", r.line)
				}
			}
			idle.Reconciles = len(recs)
			return len(recs) > idleResyncs, fmt.Sprintf("%d reconciles", len(recs)), nil
		})
	if err != nil {
		return idle, fmt.Errorf("%w\nagent log:\n%s", err, agent.Tail())
	}
	st, err := procStatus(agent.Pid())
	if err != nil {
		return idle, err
	}
	if st["RssAnon"] == 0 {
		return idle, fmt.Errorf("/proc/%d/status lacks RssAnon: %v", agent.Pid(), st)
	}
	idle.Anon = st["RssAnon"]
	idle.AnonPeak = max(idle.AnonPeak, idle.Anon)
	return idle, nil
}

// standaloneRe is the line a standalone agent prints per reconcile (agent/standalone).
var standaloneRe = regexp.MustCompile(`(?m)^reconcile (\S+): revision .*$`)

// standaloneReconciles reads the reconcile lines of a standalone agent's output (result and line only).
func standaloneReconciles(out string) []reconciled {
	var recs []reconciled
	for _, m := range standaloneRe.FindAllStringSubmatch(out, -1) {
		recs = append(recs, reconciled{result: m[1], line: m[0]})
	}
	return recs
}

// sample keeps the largest RssAnon of the agent seen.
func (i *Idle) sample(agent *benchproc.Proc) {
	if st, err := procStatus(agent.Pid()); err == nil {
		i.AnonPeak = max(i.AnonPeak, st["RssAnon"])
	}
}
