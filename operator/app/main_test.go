package app_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/operator/app"
	"github.com/network-operator/network-operator/operator/nodespec"
	"github.com/network-operator/network-operator/pkg/syncbuf"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// shared is the package's control plane: the tests run one operator process after the other against it.
var shared testenv.Shared

// reexecEnv makes the test binary run the operator instead of the tests: each test starts "the operator
// binary" as a real child process (a process of its own: controller-runtime's metrics registry, controller
// names and logger are per process) without a separate go build.
const reexecEnv = "NETWORK_OPERATOR_TEST_REEXEC"

func TestMain(m *testing.M) {
	if os.Getenv(reexecEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(shared.Main(m))
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitFor polls cond until it returns nil; its last error says what was missing.
func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	waittest.Must(t, 50*time.Millisecond, time.Minute, what, waittest.Check(func() (bool, error) {
		err := cond()
		return err == nil, err
	}))
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(body), err
}

// TestBinaryWiring runs the operator as a process against a real API server: leader election,
// health and readiness endpoints, metrics, and a node receiving its configuration.
func TestBinaryWiring(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	metricsAddr, probeAddr, webhookAddr := freePort(t), freePort(t), freePort(t)
	certDir := filepath.Join(t.TempDir(), "certs")
	wantCert := writeServingCert(t, certDir)
	webhookHost, webhookPort, err := net.SplitHostPort(webhookAddr)
	if err != nil {
		t.Fatal(err)
	}
	logs := runOperator(t, env, "--leader-elect",
		"--leader-election-namespace", "default", "--metrics-bind-address", metricsAddr,
		"--health-probe-bind-address", probeAddr, "--debounce", "100ms", "--underlay-interfaces", "eth1,eth2",
		"--webhook-host", webhookHost, "--webhook-port", webhookPort, "--webhook-cert-dir", certDir)

	waitFor(t, "/readyz", func() error { _, err := get("http://" + probeAddr + "/readyz"); return err })
	if _, err := get("http://" + probeAddr + "/healthz"); err != nil {
		t.Fatal(err)
	}
	// The webhook server listens where the flags say, with the certificate from --webhook-cert-dir.
	conn, err := tls.Dial("tcp", webhookAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // checks the served cert below
	if err != nil {
		t.Fatalf("webhook server on %s: %v", webhookAddr, err)
	}
	served := conn.ConnectionState().PeerCertificates
	conn.Close()
	if len(served) == 0 || !served[0].Equal(wantCert) {
		t.Fatalf("webhook server on %s does not serve the certificate from --webhook-cert-dir", webhookAddr)
	}
	waitFor(t, "the leader election Lease", func() error {
		var l coordinationv1.Lease
		return env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "network-operator.network.network-operator.io"}, &l)
	})

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker", Annotations: map[string]string{nodespec.AnnotationRouterID: "192.0.2.1"}}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the node's configuration", func() error {
		var nnc v1.NodeNetworkConfig
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "worker"}, &nnc); err != nil {
			return err
		}
		if got := strings.Join(nnc.Spec.Underlay.Interfaces, ","); got != "eth1,eth2" {
			return fmt.Errorf("underlay interfaces %q", got)
		}
		return nil
	})
	waitFor(t, "operator metrics", func() error {
		body, err := get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		for _, want := range []string{"network_operator_revision_sequence 1", `network_operator_rollout_node_updates_total{reason="rollout"} 1`,
			`controller_runtime_reconcile_total{controller="rollout"`, `controller_runtime_reconcile_total{controller="networkconfig"`,
			// the operator's own requests, counted by its client configuration
			`network_operator_api_requests_total{resource="nodenetworkconfigs",verb="create"} 1`} {
			if !strings.Contains(body, want) {
				return fmt.Errorf("metrics lack %q", want)
			}
		}
		return nil
	})
	if t.Failed() {
		t.Log(logs.String())
	}
}

// runOperator runs the operator (this test binary, re-executed) with args against env (an admin kubeconfig is
// added) until the test ends, when it must stop cleanly on SIGTERM. It returns the process's log.
func runOperator(t *testing.T, env *testenv.Env, args ...string) *syncbuf.Buffer {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), reexecEnv+"=1")
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("operator exited with %v after SIGTERM\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("operator did not stop after SIGTERM\n%s", logs.String())
		}
	})
	return logs
}

// TestSelfManagedWebhookCert: with --webhook-cert-mode=self a fresh install needs no certificate: the operator
// makes one for its Service, stores it in a Secret, publishes the CA in the webhook configuration's caBundle, and
// serves it; the API server's view (trust the caBundle, dial the Service's DNS name) verifies.
func TestSelfManagedWebhookCert(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	const ns, vwcName = "netop-system", "network-operator-validating"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	none := admissionv1.SideEffectClassNone
	vwc := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: vwcName},
		Webhooks: []admissionv1.ValidatingWebhook{{Name: "vrf.network-operator.io", SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, ClientConfig: admissionv1.WebhookClientConfig{
				Service: &admissionv1.ServiceReference{Namespace: ns, Name: "network-operator-webhook"}}}}}
	if err := env.Client.Create(ctx, vwc); err != nil {
		t.Fatal(err)
	}
	probeAddr, webhookAddr := freePort(t), freePort(t)
	webhookHost, webhookPort, err := net.SplitHostPort(webhookAddr)
	if err != nil {
		t.Fatal(err)
	}
	logs := runOperator(t, env, "--namespace", ns, "--webhook-cert-mode", "self",
		"--webhook-cert-dir", filepath.Join(t.TempDir(), "certs"), "--metrics-bind-address", "0",
		"--health-probe-bind-address", probeAddr, "--webhook-host", webhookHost, "--webhook-port", webhookPort)
	waitFor(t, "/readyz", func() error { _, err := get("http://" + probeAddr + "/readyz"); return err })

	if err := env.Client.Get(ctx, client.ObjectKey{Name: vwcName}, vwc); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(vwc.Webhooks[0].ClientConfig.CABundle) {
		t.Fatalf("no CA in the caBundle\n%s", logs.String())
	}
	conn, err := tls.Dial("tcp", webhookAddr, &tls.Config{RootCAs: roots, ServerName: "network-operator-webhook." + ns + ".svc",
		MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("the served certificate does not verify against the caBundle: %v\n%s", err, logs.String())
	}
	conn.Close()
	var s corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "network-operator-webhook-cert"}, &s); err != nil {
		t.Fatalf("certificate Secret: %v", err)
	}
}

// writeServingCert writes a self-signed tls.crt/tls.key for 127.0.0.1 into dir and returns the certificate.
func writeServingCert(t *testing.T, dir string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "network-operator-webhook"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
