package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/network-operator/network-operator/agent/kube"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// Identities: the operator runs as its own user, the agents as users of one group; each is bound to its own
// ClusterRole generated from its code's RBAC markers (config/rbac/operator, config/rbac/agent), so the demo also
// proves each role is sufficient on its own.
const (
	operatorUser = "network-operator"
	agentGroup   = "network-operator:agents"
)

// generatedRole is a generated ClusterRole and whom the harness binds it to.
type generatedRole struct {
	file, name string
	subject    rbacv1.Subject
}

// generatedRoles: the operator's, then the agents'.
func generatedRoles() []generatedRole {
	return []generatedRole{
		{"config/rbac/operator/role.yaml", "network-operator", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: operatorUser}},
		{"config/rbac/agent/role.yaml", "network-operator-agent", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: agentGroup}},
	}
}

// StartControlPlane starts etcd and kube-apiserver (the project-built binaries, on loopback), installs the
// CRDs, the validating webhook configuration (pointing at the operator's webhook server on loopback, with a
// CA made for this run) and the RBAC role, and writes the kubeconfigs.
func (c *Cluster) StartControlPlane(ctx context.Context) error {
	start := time.Now()
	// controller-runtime's packages log through a global logger; the demo reports what matters itself.
	ctrllog.SetLogger(logr.Discard())
	assets, err := testenv.AssetsDir()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMissing, err)
	}
	// The webhook configuration points at the operator's webhook server on a free loopback port, with a CA
	// made for this run (StartOperator hands the port and certificate to the operator). etcd's data and the
	// API server's certificates live in the work directory: `down` finds leftovers by it.
	env, err := testenv.Start(ctx, testenv.Options{ExternalWebhooks: true, WorkDir: c.workDir, RepoRoot: c.opts.RepoRoot})
	if err != nil {
		return fmt.Errorf("start kube-apiserver and etcd from %s: %w", assets, err)
	}
	c.env = env
	c.onClose("kube-apiserver and etcd", env.Stop)
	host, port, certDir := env.WebhookServing()
	if err := c.recordDirs(certDir); err != nil {
		return err
	}
	cfg := env.Config
	c.client, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	c.apiServer = cfg.Host
	c.startWatcher()
	c.kubeconfig = filepath.Join(c.workDir, "kubeconfig")
	if err := os.WriteFile(c.kubeconfig, env.AdminKubeconfig(), 0o600); err != nil {
		return fmt.Errorf("write admin kubeconfig: %w", err)
	}
	if err := c.installRBAC(ctx); err != nil {
		return err
	}
	version := "?"
	if dc, err := discovery.NewDiscoveryClientForConfig(cfg); err == nil {
		if v, err := dc.ServerVersion(); err == nil {
			version = v.GitVersion
		}
	}
	c.versions = version
	if err := c.state.update(func(s *State) { s.APIServer, s.Kubeconfig = c.apiServer, c.kubeconfig }); err != nil {
		return err
	}
	c.logf("  kube-apiserver %s and etcd (%s) on %s, up in %v", version, filepath.Base(assets), c.apiServer, time.Since(start).Round(10*time.Millisecond))
	c.logf("  CRDs from config/crd/bases, ValidatingWebhookConfiguration -> https://%s:%d (operator), ClusterRoles %s (operator) and %s (agents)",
		host, port, generatedRoles()[0].name, generatedRoles()[1].name)
	c.logf("  admin kubeconfig: %s", c.kubeconfig)
	return nil
}

// operatorFlags lists the flags the operator binary accepts (from its -h output).
func operatorFlags(bin string) (map[string]bool, error) {
	out, _ := exec.Command(bin, "-h").CombinedOutput() // -h exits with status 0 or 2 depending on the flag package
	flags := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "-") {
			name, _, _ := strings.Cut(strings.TrimLeft(line, "-"), " ")
			flags[name] = true
		}
	}
	if !flags["kubeconfig"] && !flags["metrics-bind-address"] {
		return nil, fmt.Errorf("%s -h lists no flags: %s", bin, strings.TrimSpace(string(out)))
	}
	return flags, nil
}

// freeAddr returns a loopback address nobody listens on (the kernel picks the port).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// installRBAC installs the generated ClusterRoles and binds the operator's to its user, the agent's to the
// agents' group.
func (c *Cluster) installRBAC(ctx context.Context) error {
	for _, role := range generatedRoles() {
		if err := c.installRole(ctx, role.file, role.name, role.subject); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) installRole(ctx context.Context, file, name string, subject rbacv1.Subject) error {
	objs, err := decodeFile(filepath.Join(c.opts.RepoRoot, file))
	if err != nil {
		return fmt.Errorf("RBAC role: %w", err)
	}
	found := false
	for _, o := range objs {
		if r, ok := o.(*rbacv1.ClusterRole); ok && r.Name == name {
			found = true
			if err := c.client.Create(ctx, r); err != nil {
				return fmt.Errorf("create ClusterRole %s: %w", name, err)
			}
		}
	}
	if !found {
		return fmt.Errorf("%s has no ClusterRole %s", file, name)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	if err := c.client.Create(ctx, binding); err != nil {
		return fmt.Errorf("create ClusterRoleBinding %s: %w", name, err)
	}
	return nil
}

// writeKubeconfig writes a kubeconfig for a user of the control plane (client certificate).
func (c *Cluster) writeKubeconfig(path, user string, groups ...string) error {
	data, err := c.env.UserKubeconfig(user, groups...)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig of %s: %w", user, err)
	}
	return nil
}

// CreateNodes creates a Node object per namespace node: Ready, InternalIP = the node's loopback (the operator
// derives router id and VTEP from it), and the agent's start-up taint, which the agent removes once healthy.
func (c *Cluster) CreateNodes(ctx context.Context) error {
	for _, n := range c.nodes {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{
				"kubernetes.io/hostname": n.Name, "kubernetes.io/os": "linux",
			}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: kube.DefaultStartupTaint, Effect: corev1.TaintEffectNoSchedule}}},
		}
		if err := c.client.Create(ctx, node); err != nil {
			return fmt.Errorf("create Node %s: %w", n.Name, err)
		}
		now := metav1.Now()
		node.Status = corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.Address.String()}, {Type: corev1.NodeHostName, Address: n.Name}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "namespace node of the demo", LastHeartbeatTime: now, LastTransitionTime: now}},
		}
		if err := c.client.Status().Update(ctx, node); err != nil {
			return fmt.Errorf("set status of Node %s: %w", n.Name, err)
		}
	}
	c.logf("  %d Node objects: Ready, InternalIP = loopback, taint %s:NoSchedule until the agent is healthy", len(c.nodes), kube.DefaultStartupTaint)
	return nil
}
