// Package cluster runs the whole network-operator system on one machine: a real control plane (the
// project-built kube-apiserver and etcd on loopback, CRDs, RBAC and the validating webhook), the operator
// binary, N namespace "nodes" each with a Node object, its own agent process and its own FRR (zebra + bgpd), a
// fabric namespace with a BGP route reflector, tenant workloads (namespaces plugged into the nodes' L2
// networks) and a Prometheus server scraping every agent. The demo (demo/, the netop-demo command) and the end-to-end test
// (test/e2e) both drive it through RunScenario, so they run the same scenario.
//
// Everything started is registered for teardown (Close), also when a later step fails; every name is unique
// per run (namespaces nl<id>-*, pins /sys/fs/bpf/nl<id>, a private work directory). With Options.StateDir the
// cluster records what it started, so Down can stop it from another process and clean up after a crash.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/test/harness/kubenodes"
	"github.com/network-operator/network-operator/test/harness/lab"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// ErrNotRoot is returned when the process cannot create namespaces (tests skip on it).
var ErrNotRoot = errors.New("the cluster needs root (network namespaces, BPF, FRR)")

// ErrMissing is returned when a prerequisite (binary, package, envtest assets) is not installed; the message
// says how to get it.
var ErrMissing = errors.New("prerequisite missing")

// Options configure a cluster.
type Options struct {
	// Nodes is the number of namespace nodes (2..9; default 3).
	Nodes int
	// RepoRoot is the repository (config/crd, config/rbac, config/webhook, config/samples/demo); default: found
	// from the working directory.
	RepoRoot string
	// Operator and Agent are the binaries (default <RepoRoot>/bin/network-operator and network-agent).
	Operator, Agent string
	// Prometheus is the Prometheus server binary (default /usr/bin/prometheus).
	Prometheus string
	// PrometheusAddr is where Prometheus listens (default 127.0.0.1 on a free port). The demo asks for
	// 127.0.0.1:9090 when it is free.
	PrometheusAddr string
	// Samples is the directory of the demo's resources (default <RepoRoot>/config/samples/demo).
	Samples string
	// SmallMTUNode is the node (1-based) whose uplink carries 1500-byte overlay frames but no jumbo frames
	// (default: the last node). The others have jumbo uplinks.
	SmallMTUNode int
	// FRRRoot is the unpacked root file system of the FRR image, whose FRR the processes form runs (default
	// $NETOP_FRR_ROOT; make frr-root builds it): the daemons, and through --frr-root the agents' vtysh,
	// frr-reload.py and scratch daemons.
	FRRRoot string
	// NoFRRScratch makes the agents skip loading every new FRR config into throw-away daemons before applying
	// it (the agent's default, kept here: it costs little).
	NoFRRScratch bool
	// StateDir, when set, gets a state file (see State) kept current while the cluster runs.
	StateDir string
	// Install is how the operator, the agents and FRR run (default InstallProcesses).
	Install Install
	// Helm form: ImagesDir holds the image archives of `make images` (default <RepoRoot>/_out/images), ImageTag
	// their tag (default: read from the agent's archive); Chart is the chart (default
	// <RepoRoot>/charts/network-operator); ChartTools the directory of helm (default $NETOP_CHART_TOOLS);
	// NodeBinDir that of kubelet and the other node binaries (default $NETOP_K8S_BINARIES).
	ImagesDir, ImageTag, Chart, ChartTools, NodeBinDir string
	// Out receives the human-readable progress (nil: discarded).
	Out io.Writer
}

// frrTools run the FRR of the processes form.
func (o *Options) frrTools() frrproc.Tools { return frrproc.Tools{Root: o.FRRRoot} }

func (o *Options) defaults() error {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Nodes < 2 || o.Nodes > 9 {
		return fmt.Errorf("nodes: %d, want 2..9 (node names sort by name, the rollout order)", o.Nodes)
	}
	if o.RepoRoot == "" {
		root, err := testenv.RepoRoot()
		if err != nil {
			return err
		}
		o.RepoRoot = root
	}
	if o.Operator == "" {
		o.Operator = filepath.Join(o.RepoRoot, "bin", "network-operator")
	}
	if o.Agent == "" {
		o.Agent = filepath.Join(o.RepoRoot, "bin", "network-agent")
	}
	if o.Prometheus == "" {
		o.Prometheus = "/usr/bin/prometheus"
	}
	if o.Samples == "" {
		o.Samples = filepath.Join(o.RepoRoot, "config", "samples", "demo")
	}
	if o.SmallMTUNode == 0 {
		o.SmallMTUNode = o.Nodes
	}
	if o.SmallMTUNode < 1 || o.SmallMTUNode > o.Nodes {
		return fmt.Errorf("small-MTU node %d: want 1..%d", o.SmallMTUNode, o.Nodes)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	switch o.Install {
	case "":
		o.Install = InstallProcesses
	case InstallProcesses, InstallHelm:
	default:
		return fmt.Errorf("install: %q, want %s or %s", o.Install, InstallHelm, InstallProcesses)
	}
	if o.ImagesDir == "" {
		o.ImagesDir = filepath.Join(o.RepoRoot, "_out", "images")
	}
	if o.Chart == "" {
		o.Chart = filepath.Join(o.RepoRoot, "charts", "network-operator")
	}
	if o.ChartTools == "" {
		o.ChartTools = os.Getenv("NETOP_CHART_TOOLS")
	}
	if o.NodeBinDir == "" {
		o.NodeBinDir = os.Getenv("NETOP_K8S_BINARIES")
	}
	if o.FRRRoot == "" {
		o.FRRRoot = os.Getenv(frrproc.EnvRoot)
	}
	return nil
}

// Cluster is a running system. Create it with New, bring it up with Start (or the step methods in order), and
// always Close it.
type Cluster struct {
	opts  Options
	start time.Time

	workDir string
	state   *stateRecorder
	lab     *lab.Lab
	pinRoot string

	env        *testenv.Env
	client     client.WithWatch
	apiServer  string
	kubeconfig string // admin
	versions   string

	samples *Samples
	fabric  *frrproc.Instance
	fabricN *lab.Netns
	nodes   []*Node
	loads   []*Workload
	flows   []FlowPair

	operator      *proc
	operatorStart time.Time
	// Helm form: the real nodes and the operator pods' metrics addresses.
	kube             *kubenodes.Cluster
	restConfig       *rest.Config
	opMetricsTargets []string
	operatorDir      string
	opMetrics        string
	prometheus       *Prometheus
	watcher          *rolloutWatcher

	mu       sync.Mutex
	teardown []teardownStep
	closed   bool
}

type teardownStep struct {
	what string
	fn   func() error
}

// New checks the prerequisites and creates the work directory; it starts nothing yet.
func New(opts Options) (*Cluster, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w (running as uid %d)", ErrNotRoot, os.Geteuid())
	}
	if err := checkPrerequisites(&opts); err != nil {
		return nil, err
	}
	samples, err := LoadSamples(opts.Samples)
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts, start: time.Now(), samples: samples, state: &stateRecorder{}}
	l, err := lab.Open()
	if err != nil {
		return nil, err
	}
	c.lab = l
	c.onClose("namespaces and pins", func() error { return errors.Join(l.Close()...) })
	c.workDir, err = os.MkdirTemp("", "netop-demo-"+l.ID()+"-")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("work directory: %w", err), c.Close())
	}
	c.onClose("work directory", func() error { return os.RemoveAll(c.workDir) })
	if opts.StateDir != "" {
		if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
			return nil, errors.Join(fmt.Errorf("state directory: %w", err), c.Close())
		}
		c.state.path = filepath.Join(opts.StateDir, StateFileName)
		c.onClose("state file", func() error {
			if err := os.Remove(c.state.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			return nil
		})
	}
	if err := c.state.update(func(s *State) {
		s.Supervisor, s.SupervisorCmdline = os.Getpid(), cmdline(os.Getpid())
		s.WorkDir, s.NetnsPrefix, s.PinRoot = c.workDir, c.NetnsPrefix(), c.PinRoot()
	}); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// checkPrerequisites names what is missing and how to get it.
func checkPrerequisites(o *Options) error {
	var errs []error
	type file struct{ path, hint string }
	files := []file{{o.Prometheus, "make deps (Debian package prometheus)"}}
	switch o.Install {
	case InstallProcesses:
		files = append(files,
			file{o.Operator, "go build -o bin/network-operator ./cmd/network-operator"},
			file{o.Agent, "go build -o bin/network-agent ./cmd/network-agent"})
		if o.FRRRoot == "" {
			errs = append(errs, fmt.Errorf("%w: no FRR root file system (set NETOP_FRR_ROOT; make frr-root builds it)", ErrMissing))
		} else if err := o.frrTools().CheckDaemons(); err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", ErrMissing, err))
		}
	case InstallHelm:
		for _, name := range append(slices.Clone(imageNames), "pause") {
			files = append(files, file{filepath.Join(o.ImagesDir, name+".tar"), "make images"})
		}
		if o.ChartTools == "" {
			errs = append(errs, fmt.Errorf("%w: no helm directory (set NETOP_CHART_TOOLS; make chart-tools builds helm)", ErrMissing))
		} else {
			files = append(files, file{filepath.Join(o.ChartTools, "helm"), "make chart-tools"})
		}
		if o.NodeBinDir == "" {
			errs = append(errs, fmt.Errorf("%w: no node binaries directory (set NETOP_K8S_BINARIES; make k8s-binaries builds them)", ErrMissing))
		}
		if st, err := os.Stat(filepath.Join(o.Chart, "Chart.yaml")); err != nil || st.IsDir() {
			errs = append(errs, fmt.Errorf("%w: no chart at %s", ErrMissing, o.Chart))
		}
	}
	for _, f := range files {
		st, err := os.Stat(f.path)
		if err != nil || st.IsDir() || (!strings.HasSuffix(f.path, ".tar") && st.Mode()&0o111 == 0) {
			errs = append(errs, fmt.Errorf("%w: no file %s (%s)", ErrMissing, f.path, f.hint))
		}
	}
	for _, tool := range []string{"ip", "nsenter", "ping"} {
		if _, err := exec.LookPath(tool); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s not in PATH (make deps)", ErrMissing, tool))
		}
	}
	if _, err := testenv.AssetsDir(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %v", ErrMissing, err))
	}
	return errors.Join(errs...)
}

// step is one start-up step under a heading.
type startStep struct {
	title string
	fn    func(context.Context) error
}

// steps are the start-up steps of the install form.
func (c *Cluster) steps() []startStep {
	topology := startStep{fmt.Sprintf("Fabric and %d nodes: network namespaces, underlay, FRR", c.opts.Nodes), c.BuildTopology}
	prometheus := startStep{"Prometheus", c.StartPrometheus}
	if c.opts.Install == InstallHelm {
		return []startStep{
			topology,
			{"Kubernetes: control plane, and kubelet + containerd + kube-proxy in every node's namespace", c.StartKubeNodes},
			{"Images: the archives of `make images` into every node's containerd", c.ImportImages},
			{"helm install: the operator Deployment, the agent and FRR DaemonSets, RBAC, webhook, node-scope policy", c.HelmInstall},
			prometheus,
		}
	}
	return []startStep{
		{"Control plane: kube-apiserver + etcd (built from source), CRDs, webhook, RBAC", c.StartControlPlane},
		topology,
		{"Kubernetes Node objects", c.CreateNodes},
		{"Operator (bin/network-operator)", c.StartOperator},
		{"One agent per node (bin/network-agent)", c.StartAgents},
		prometheus,
	}
}

// Start runs every start-up step in order, each under a heading on Options.Out: in the processes form control
// plane, topology and FRR, Node objects, operator, agents, Prometheus; in the helm form topology, real nodes,
// images, helm install, Prometheus.
func (c *Cluster) Start(ctx context.Context) error {
	p := &printer{w: c.opts.Out}
	for _, st := range c.steps() {
		p.heading("%s", st.title)
		if err := st.fn(ctx); err != nil {
			return err
		}
	}
	return nil
}

// onClose registers a teardown step; Close runs them in reverse order.
func (c *Cluster) onClose(what string, fn func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.teardown = append(c.teardown, teardownStep{what, fn})
}

// Close tears everything down in reverse start order and reports every failure; calling it again is a no-op.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	steps := c.teardown
	c.teardown = nil
	c.mu.Unlock()
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		if err := steps[i].fn(); err != nil {
			errs = append(errs, fmt.Errorf("tear down %s: %w", steps[i].what, err))
		}
	}
	return errors.Join(errs...)
}

// logf writes one progress line.
func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Out, format+"\n", args...)
}

// Nodes returns the nodes in name order.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Workloads returns the tenant workloads.
func (c *Cluster) Workloads() []*Workload { return c.loads }

// Client is an administrator's client of the API server.
func (c *Cluster) Client() client.WithWatch { return c.client }

// WorkDir holds logs, configs and data of this run.
func (c *Cluster) WorkDir() string { return c.workDir }

// Kubeconfig is an administrator's kubeconfig file.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// NetnsPrefix starts the name of every namespace of this cluster.
func (c *Cluster) NetnsPrefix() string { return lab.NamePrefix + c.lab.ID() + "-" }

// PinRoot is the bpffs directory holding every node's pins.
func (c *Cluster) PinRoot() string { return filepath.Join("/sys/fs/bpf", lab.NamePrefix+c.lab.ID()) }

// SmallMTUNode is the node whose uplink cannot carry jumbo frames.
func (c *Cluster) SmallMTUNode() *Node { return c.nodes[c.opts.SmallMTUNode-1] }

// MarkReady records in the state file that the cluster is up and left running.
func (c *Cluster) MarkReady() error {
	return c.state.update(func(s *State) { s.Ready = true })
}

// recordDirs adds directories outside the work directory to the state file (removed by Down after a crash).
func (c *Cluster) recordDirs(dirs ...string) error {
	return c.state.update(func(s *State) {
		for _, d := range dirs {
			if d != "" && !slices.Contains(s.Dirs, d) {
				s.Dirs = append(s.Dirs, d)
			}
		}
	})
}

// recordProc adds a child to the state file and registers its stop.
func (c *Cluster) recordProc(p *proc, grace time.Duration) error {
	c.onClose(p.name, func() error { return p.stop(grace) })
	return c.state.update(func(s *State) {
		s.Processes = append(s.Processes, ProcessRecord{Name: p.name, PGID: p.pid()})
	})
}
