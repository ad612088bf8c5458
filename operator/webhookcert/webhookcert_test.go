package webhookcert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

// setup creates a namespace and a ValidatingWebhookConfiguration with two webhooks, both unique to the test.
func setup(t *testing.T) (client.Client, Options) {
	t.Helper()
	env := shared.Get(t)
	ctx := context.Background()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	none := admissionv1.SideEffectClassNone
	hook := func(n string) admissionv1.ValidatingWebhook {
		return admissionv1.ValidatingWebhook{Name: n + ".example.com", SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: name, Name: "webhook", Path: ptr.To("/" + n)}}}
	}
	vwc := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionv1.ValidatingWebhook{hook("a"), hook("b")}}
	if err := env.Client.Create(ctx, vwc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), vwc)
		_ = env.Client.Delete(context.Background(), ns)
	})
	return env.Client, Options{Namespace: name, SecretName: "webhook-cert", ServiceName: "webhook",
		WebhookConfiguration: name, CertDir: t.TempDir()}
}

// handshake serves TLS from the files in dir and connects as the API server would: trusting the caBundle of
// the webhook configuration, for the Service's DNS name.
func handshake(t *testing.T, c client.Client, o Options) {
	t.Helper()
	var vwc admissionv1.ValidatingWebhookConfiguration
	if err := c.Get(context.Background(), client.ObjectKey{Name: o.WebhookConfiguration}, &vwc); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(o.CertDir, KeyCert), filepath.Join(o.CertDir, KeyKey))
	if err != nil {
		t.Fatalf("load the written pair: %v", err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			_ = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
	}()
	for _, w := range vwc.Webhooks[1:] {
		if string(w.ClientConfig.CABundle) != string(vwc.Webhooks[0].ClientConfig.CABundle) {
			t.Fatalf("webhook %s has another caBundle than %s", w.Name, vwc.Webhooks[0].Name)
		}
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(vwc.Webhooks[0].ClientConfig.CABundle) {
		t.Fatal("no CA in the caBundle")
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(),
		&tls.Config{RootCAs: roots, ServerName: "webhook." + o.Namespace + ".svc", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS handshake trusting the caBundle: %v", err)
	}
	conn.Close()
}

func secret(t *testing.T, c client.Client, o Options) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: o.Namespace, Name: o.SecretName}, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestFreshInstallThenNoOp(t *testing.T) {
	c, o := setup(t)
	m, err := New(c, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	handshake(t, c, o)
	s := secret(t, c, o)
	if s.Type != corev1.SecretTypeTLS || len(s.Data[KeyCA]) == 0 || len(s.Data[KeyPreviousCA]) != 0 {
		t.Errorf("secret: type %s, keys %v", s.Type, keys(s.Data))
	}
	// A second pass (another replica, a restart) changes nothing.
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if again := secret(t, c, o); again.ResourceVersion != s.ResourceVersion {
		t.Errorf("second Ensure rewrote the Secret (%s -> %s)", s.ResourceVersion, again.ResourceVersion)
	}
}

func TestRenewalTrustsOldAndNewCA(t *testing.T) {
	c, o := setup(t)
	m, err := New(c, o)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	m.now = func() time.Time { return now }
	ctx := context.Background()
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	first := secret(t, c, o)
	expiry, err := m.Expiry()
	if err != nil {
		t.Fatal(err)
	}
	// Just inside the renewal window.
	now = expiry.Add(-30*24*time.Hour + time.Minute)
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	second := secret(t, c, o)
	if string(second.Data[KeyCert]) == string(first.Data[KeyCert]) {
		t.Fatal("the certificate was not renewed inside the renewal window")
	}
	if string(second.Data[KeyPreviousCA]) != string(first.Data[KeyCA]) {
		t.Error("the old CA is not kept as the previous one")
	}
	var vwc admissionv1.ValidatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: o.WebhookConfiguration}, &vwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		b := string(w.ClientConfig.CABundle)
		if !strings.Contains(b, string(first.Data[KeyCA])) || !strings.Contains(b, string(second.Data[KeyCA])) {
			t.Errorf("webhook %s: caBundle does not trust both the old and the new CA", w.Name)
		}
	}
	if got, _ := m.Expiry(); !got.After(expiry) {
		t.Errorf("files not renewed: expiry %v, was %v", got, expiry)
	}
}

// TestReplicasRace: two replicas start at once on a fresh install and end with one certificate.
func TestReplicasRace(t *testing.T) {
	c, o := setup(t)
	var wg sync.WaitGroup
	dirs := []string{t.TempDir(), t.TempDir()}
	errs := make([]error, len(dirs))
	for i, dir := range dirs {
		oi := o
		oi.CertDir = dir
		m, err := New(c, oi)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[i] = m.Ensure(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dirs[0], KeyCert))
	b, _ := os.ReadFile(filepath.Join(dirs[1], KeyCert))
	if string(a) != string(b) || string(a) != string(secret(t, c, o).Data[KeyCert]) {
		t.Error("the replicas serve different certificates")
	}
	for _, dir := range dirs {
		oi := o
		oi.CertDir = dir
		handshake(t, c, oi)
	}
}

func TestOptionsNameTheField(t *testing.T) {
	_, err := New(nil, Options{Namespace: "x", ServiceName: "s", WebhookConfiguration: "w", CertDir: "/d",
		Validity: time.Hour, RenewBefore: 2 * time.Hour})
	if err == nil {
		t.Fatal("bad options accepted")
	}
	for _, want := range []string{"webhookcert.secretName: Required", "webhookcert.renewBefore: Invalid value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
