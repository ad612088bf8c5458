package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/network-operator/network-operator/agent/kube"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/operator/nodespec"
	"github.com/network-operator/network-operator/test/harness/images"
	"github.com/network-operator/network-operator/test/harness/kubenodes"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// Install is how the cluster runs the operator, the agents and FRR.
type Install string

const (
	// InstallHelm is what a user does: real kubelet nodes (test/harness/kubenodes) in the node namespaces, the
	// images imported into every node's containerd, the chart installed with helm; the agent and FRR run as
	// DaemonSet pods, the operator as a Deployment.
	InstallHelm Install = "helm"
	// InstallProcesses runs the binaries as processes next to an envtest control plane: the quick loop for
	// development (no images, no kubelets).
	InstallProcesses Install = "processes"
)

// The chart's names (charts/network-operator): release, namespace, workloads, containers.
const (
	Release           = "network-operator"
	Namespace         = "network-operator"
	AgentDaemonSet    = "network-agent"
	FRRDaemonSet      = "network-frr"
	OperatorDeploy    = "network-operator"
	agentContainer    = "agent"
	operatorContainer = "operator"
	agentMetricsPort  = 9750
	webhookConfigName = "network-operator-validating"
)

// images are the archives the helm form imports into every node, by image.
var imageNames = []string{"network-operator", "network-agent", "frr"}

// StartKubeNodes brings up the control plane and a kubelet + containerd + kube-proxy in every node's network
// namespace (test/harness/kubenodes), registers the Nodes with the agent's start-up taint and annotates each with its
// loopback as router id and VTEP (the kubelet's node IP is the management address).
func (c *Cluster) StartKubeNodes(ctx context.Context) error {
	start := time.Now()
	// controller-runtime's packages log through a global logger; the demo reports what matters itself.
	ctrllog.SetLogger(logr.Discard())
	assets, err := testenv.AssetsDir()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMissing, err)
	}
	pause := kubenodes.ImageRef{Archive: filepath.Join(c.opts.ImagesDir, "pause.tar")}
	if pause.Name, err = images.ArchiveRef(pause.Archive); err != nil {
		return err
	}
	var specs []kubenodes.NodeSpec
	for _, n := range c.nodes {
		specs = append(specs, kubenodes.NodeSpec{Name: n.Name, Netns: n.NS.Path,
			Taints: []corev1.Taint{{Key: kube.DefaultStartupTaint, Effect: corev1.TaintEffectNoSchedule}}})
	}
	kn, err := kubenodes.Start(ctx, kubenodes.Options{
		Prefix:          c.NetnsPrefix(),
		WorkDir:         filepath.Join(c.workDir, "kube"),
		APIServerBinDir: assets,
		NodeBinDir:      c.opts.NodeBinDir,
		PauseImage:      pause,
		// The agents' state hostPath: one per node, as on separate machines.
		PrivateDirs: []string{"/var/lib/network-operator"},
		Nodes:       specs,
		Out:         indent{c.opts.Out},
	})
	if err != nil {
		return fmt.Errorf("kubernetes nodes: %w", err)
	}
	c.kube = kn
	c.onClose("kubernetes nodes and control plane", kn.Close)
	c.restConfig = kn.RESTConfig()
	if c.client, err = client.NewWithWatch(c.restConfig, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	c.apiServer, c.kubeconfig = kn.APIServerURL(), kn.AdminKubeconfig()
	c.startWatcher()
	byName := map[string]*kubenodes.Node{}
	for _, kn := range kn.Nodes() {
		byName[kn.Name] = kn
	}
	for _, n := range c.nodes {
		k, ok := byName[n.Name]
		if !ok {
			return fmt.Errorf("kubenodes has no node %s", n.Name)
		}
		n.kube = k
		n.MetricsAddr = net.JoinHostPort(k.MgmtAddr.String(), strconv.Itoa(agentMetricsPort))
		if err := c.annotateNode(ctx, n); err != nil {
			return err
		}
	}
	if err := c.state.update(func(s *State) { s.APIServer, s.Kubeconfig = c.apiServer, c.kubeconfig }); err != nil {
		return err
	}
	c.logf("  %d nodes Ready %.1fs after the start (kubelet, containerd, kube-proxy in each node's namespace)", len(c.nodes), time.Since(start).Seconds())
	for _, n := range c.nodes {
		c.logf("    %-7s node IP %s (management), router id and VTEP %s (annotations)", n.Name, n.kube.MgmtAddr, n.Address)
	}
	c.logf("  admin kubeconfig: %s", c.kubeconfig)
	return nil
}

// annotateNode gives the operator the node's loopback as router id and VTEP: the kubelet's InternalIP is the
// management address, which the fabric does not route.
func (c *Cluster) annotateNode(ctx context.Context, n *Node) error {
	var node corev1.Node
	if err := c.client.Get(ctx, client.ObjectKey{Name: n.Name}, &node); err != nil {
		return fmt.Errorf("Node %s: %w", n.Name, err)
	}
	patch := client.MergeFrom(node.DeepCopy())
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[nodespec.AnnotationRouterID] = n.Address.String()
	node.Annotations[nodespec.AnnotationVTEPAddress] = n.Address.String()
	if err := c.client.Patch(ctx, &node, patch); err != nil {
		return fmt.Errorf("annotate Node %s: %w", n.Name, err)
	}
	return nil
}

// ImportImages loads the image archives into every node's containerd.
func (c *Cluster) ImportImages(ctx context.Context) error {
	start := time.Now()
	var archives []string
	for _, name := range imageNames {
		archives = append(archives, filepath.Join(c.opts.ImagesDir, name+".tar"))
	}
	if err := c.kube.ImportImages(ctx, archives...); err != nil {
		return err
	}
	c.logf("  %s imported into %d nodes' containerd in %.1fs", strings.Join(imageNames, ", "), len(c.nodes), time.Since(start).Seconds())
	return nil
}

// imageTag is the tag of the archives: Options.ImageTag, else the agent archive's.
func (c *Cluster) imageTag() (string, error) {
	if c.opts.ImageTag != "" {
		return c.opts.ImageTag, nil
	}
	ref, err := images.ArchiveRef(filepath.Join(c.opts.ImagesDir, "network-agent.tar"))
	if err != nil {
		return "", err
	}
	i := strings.LastIndex(ref, ":")
	if i < 0 {
		return "", fmt.Errorf("image %s has no tag", ref)
	}
	return ref[i+1:], nil
}

// helmValues are the chart values of the demo: the fabric's underlay and the demo's operator settings.
func (c *Cluster) helmValues(tag string) map[string]any {
	return map[string]any{
		"image": map[string]any{"tag": tag},
		"operator": map[string]any{
			"underlay": map[string]any{
				"asn": UnderlayASN, "remoteASN": "internal", "interfaces": []string{Uplink},
			},
			"debounce":            operatorDebounce.String(),
			"dataplaneL2Gateways": true,
		},
		// Every VXLAN leaves through the uplink: its MTU bounds the overlay's.
		"agent": map[string]any{"vtepInterface": Uplink, "podNetwork": c.podNetworkValues()},
	}
}

// podNetworkValues point the agents' pod networking at their node's containerd: each test node keeps its runtime
// under its own directory, which Kubernetes expands per pod ($(NODE_NAME) in the agent's argument); the nodes'
// directory is mounted into the agent (a shared mount on every node, see kubenodes.Cluster.NodesDir). The
// namespaces are found the chart's default way (auto: the runtime's netns path when the agent sees it, else the
// sandbox's pid).
func (c *Cluster) podNetworkValues() map[string]any {
	nodes := c.kube.NodesDir()
	socket := "containerd.sock"
	if kn := c.kube.Nodes(); len(kn) > 0 {
		if rel, err := filepath.Rel(kn[0].Dir, kn[0].CRISocket()); err == nil {
			socket = rel
		}
	}
	return map[string]any{"enabled": true, "netns": "auto",
		"criSocket": filepath.Join(nodes, "$(NODE_NAME)", socket), "hostPaths": []string{nodes}}
}

// helm runs the helm binary against the cluster.
func (c *Cluster) helm(ctx context.Context, args ...string) ([]byte, error) {
	args = append(args, "--kubeconfig", c.kubeconfig)
	cmd := exec.CommandContext(ctx, filepath.Join(c.opts.ChartTools, "helm"), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(c.workDir, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(c.workDir, "helm", "config"), "HELM_DATA_HOME="+filepath.Join(c.workDir, "helm", "data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("helm %s: %w\n%s", strings.Join(args[:min(2, len(args))], " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// HelmInstall installs the chart (the operator Deployment, the agent DaemonSet with FRR, RBAC, the webhook and
// the node-scope policy) and waits until the operator serves its webhook and an agent pod runs on every node.
func (c *Cluster) HelmInstall(ctx context.Context) error {
	tag, err := c.imageTag()
	if err != nil {
		return err
	}
	values, err := yaml.Marshal(c.helmValues(tag))
	if err != nil {
		return err
	}
	file := filepath.Join(c.workDir, "values.yaml")
	if err := os.WriteFile(file, values, 0o644); err != nil {
		return fmt.Errorf("values file: %w", err)
	}
	c.operatorStart = time.Now()
	if _, err := c.helm(ctx, "install", Release, c.opts.Chart, "--namespace", Namespace, "--create-namespace",
		"--values", file); err != nil {
		return err
	}
	c.logf("  $ helm install %s %s -n %s --create-namespace -f %s", Release, c.rel(c.opts.Chart), Namespace, file)
	if err := c.waitOperator(ctx); err != nil {
		return err
	}
	c.logf("  operator: %s/%s available (2 replicas, leader elected), webhook certificate made by the operator, %.1fs after install",
		Namespace, OperatorDeploy, time.Since(c.operatorStart).Seconds())
	if err := c.waitAgentPods(ctx, 3*time.Minute); err != nil {
		return err
	}
	c.logf("  agents: %s/%s has a running pod on every node (FRR in its own DaemonSet network-frr), %.1fs after install",
		Namespace, AgentDaemonSet, time.Since(c.operatorStart).Seconds())
	return c.recordOperatorMetrics(ctx)
}

// waitOperator waits until the operator Deployment is available and the webhook configuration has the CA the
// operator made.
func (c *Cluster) waitOperator(ctx context.Context) error {
	return wait.Poll(ctx, 250*time.Millisecond, 3*time.Minute, "operator Deployment available with its webhook CA published",
		func(ctx context.Context) (bool, string, error) {
			var d appsv1.Deployment
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: OperatorDeploy}, &d); err != nil {
				return false, err.Error(), nil
			}
			if d.Status.AvailableReplicas < 1 || d.Status.UpdatedReplicas != d.Status.Replicas {
				return false, fmt.Sprintf("%d/%d available", d.Status.AvailableReplicas, d.Status.Replicas), nil
			}
			var vwc admissionregistrationv1.ValidatingWebhookConfiguration
			if err := c.client.Get(ctx, client.ObjectKey{Name: webhookConfigName}, &vwc); err != nil {
				return false, err.Error(), nil
			}
			for _, w := range vwc.Webhooks {
				if len(w.ClientConfig.CABundle) == 0 {
					return false, "webhook " + w.Name + " has no caBundle yet", nil
				}
			}
			return true, "", nil
		})
}

// waitAgentPods waits until the agent DaemonSet runs an up-to-date pod with every container started on every
// node (readiness follows the node's configuration, which the rollout shows).
func (c *Cluster) waitAgentPods(ctx context.Context, timeout time.Duration) error {
	return wait.Poll(ctx, 250*time.Millisecond, timeout, "an agent pod running on every node", func(ctx context.Context) (bool, string, error) {
		for _, n := range c.nodes {
			p, err := c.agentPod(ctx, n)
			if err != nil {
				return false, err.Error(), nil
			}
			if p.Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("%s on %s is %s", p.Name, n.Name, p.Status.Phase), nil
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Running == nil || (cs.Started != nil && !*cs.Started) {
					return false, fmt.Sprintf("container %s of %s on %s not started", cs.Name, p.Name, n.Name), nil
				}
			}
		}
		return true, "", nil
	})
}

// agentPod is the agent DaemonSet's pod on n that is not being deleted.
func (c *Cluster) agentPod(ctx context.Context, n *Node) (*corev1.Pod, error) {
	return c.daemonSetPod(ctx, n, AgentDaemonSet)
}

// daemonSetPod is the pod of DaemonSet ds on node n that is not going away.
func (c *Cluster) daemonSetPod(ctx context.Context, n *Node, ds string) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.client.List(ctx, &pods, client.InNamespace(Namespace)); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != n.Name || p.DeletionTimestamp != nil || !ownedByDaemonSet(p, ds) {
			continue
		}
		return p, nil
	}
	return nil, fmt.Errorf("no %s pod on %s", ds, n.Name)
}

func ownedByDaemonSet(p *corev1.Pod, name string) bool {
	return slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "DaemonSet" && o.Name == name })
}

// recordOperatorMetrics points Prometheus at the operator pods' metrics (pod IPs are routed from the host).
func (c *Cluster) recordOperatorMetrics(ctx context.Context) error {
	var pods corev1.PodList
	if err := c.client.List(ctx, &pods, client.InNamespace(Namespace)); err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, OperatorDeploy+"-") && p.Status.PodIP != "" && !ownedByDaemonSet(&p, AgentDaemonSet) {
			c.opMetricsTargets = append(c.opMetricsTargets, net.JoinHostPort(p.Status.PodIP, "8080"))
		}
	}
	return nil
}

// vtysh runs a vtysh command against n's FRR: the process (processes form) or the frr container of its agent
// pod (helm form).
func (c *Cluster) vtysh(ctx context.Context, n *Node, command string) ([]byte, error) {
	if c.opts.Install != InstallHelm {
		return n.FRR.Vtysh(ctx, command)
	}
	p, err := c.agentPod(ctx, n)
	if err != nil {
		return nil, err
	}
	// The agent container has vtysh and may open FRR's sockets (the FRR container's root lacks DAC_OVERRIDE).
	return podExec(ctx, c.restConfig, Namespace, p.Name, agentContainer, "vtysh", "--vty_socket", "/var/run/frr", "-c", command)
}

// RESTConfig is an administrator's client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return c.restConfig }

// indent prefixes what the node harness prints, so it reads as part of the step.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	if _, err := i.w.Write([]byte(b.String())); err != nil {
		return 0, err
	}
	return len(p), nil
}

// podPinDir is the agent's --pin-dir in the chart.
const podPinDir = "/sys/fs/bpf/network-operator"

// containerLogs returns the log of one container through the API server (the kubelet).
func (c *Cluster) containerLogs(ctx context.Context, namespace, pod, container string) (string, error) {
	cs, err := kubernetes.NewForConfig(c.restConfig)
	if err != nil {
		return "", err
	}
	data, err := cs.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("logs of %s/%s %s: %w", namespace, pod, container, err)
	}
	return string(data), nil
}

// podLogTails returns the last lines of every container of the release's pods, through the API server.
func (c *Cluster) podLogTails(lines int) string {
	if c.restConfig == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := kubernetes.NewForConfig(c.restConfig)
	if err != nil {
		return fmt.Sprintf("==== pod logs: %v\n", err)
	}
	pods, err := cs.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("==== pod logs: %v\n", err)
	}
	var b strings.Builder
	tail := int64(lines)
	for _, p := range pods.Items {
		for _, ct := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			data, err := cs.CoreV1().Pods(Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: ct.Name, TailLines: &tail}).DoRaw(ctx)
			if err != nil {
				data = []byte(err.Error() + "\n")
			}
			fmt.Fprintf(&b, "==== pod %s (%s) container %s\n%s", p.Name, p.Spec.NodeName, ct.Name, tailLines(data, lines))
		}
	}
	return b.String()
}
