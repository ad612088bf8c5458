// Package webhookcert gives the operator's admission webhooks a serving certificate with no manual step and no
// cert-manager: a self-signed CA and a serving certificate for the webhook Service, kept in one Secret that every
// replica shares, written to the webhook server's certificate directory (controller-runtime reloads it), and the
// CA put into the caBundle of the ValidatingWebhookConfiguration. The certificate is renewed before it expires;
// during a renewal the caBundle trusts the old and the new CA, so no admission request fails on the switch.
package webhookcert

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// The Secret lives in the operator's namespace ("system" is replaced by kustomize and the chart).
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;create;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;update

// Keys of the Secret: the usual TLS pair, the CA, and the CA it replaced (trusted until it expires).
const (
	KeyCert       = corev1.TLSCertKey       // tls.crt
	KeyKey        = corev1.TLSPrivateKeyKey // tls.key
	KeyCA         = "ca.crt"
	KeyPreviousCA = "ca-previous.crt"
)

// Options say which objects the Manager keeps.
type Options struct {
	// Namespace of the Secret and of the webhook Service.
	Namespace string
	// SecretName holds the certificate.
	SecretName string
	// ServiceName is the webhook Service: the certificate is for <service>.<namespace>.svc (and .cluster.local).
	ServiceName string
	// WebhookConfiguration is the ValidatingWebhookConfiguration whose webhooks get the caBundle.
	WebhookConfiguration string
	// CertDir is the webhook server's certificate directory (tls.crt, tls.key).
	CertDir string
	// Validity of a certificate (default 1 year); RenewBefore its expiry it is replaced (default 30 days).
	Validity, RenewBefore time.Duration
	// Interval between checks while running (default 1 hour).
	Interval time.Duration
}

// Manager keeps the certificate; see the package comment.
type Manager struct {
	c client.Client
	o Options
	// now is the clock: time.Now (the tests of this package move it).
	now func() time.Time
}

// maxConflicts bounds how often one Ensure re-reads after another replica wrote first.
const maxConflicts = 5

// New checks the options; the error names each bad field.
func New(c client.Client, o Options) (*Manager, error) {
	if o.Validity == 0 {
		o.Validity = 365 * 24 * time.Hour
	}
	if o.RenewBefore == 0 {
		o.RenewBefore = 30 * 24 * time.Hour
	}
	if o.Interval == 0 {
		o.Interval = time.Hour
	}
	var errs field.ErrorList
	p := field.NewPath("webhookcert")
	for _, f := range []struct{ name, value string }{{"namespace", o.Namespace}, {"secretName", o.SecretName},
		{"serviceName", o.ServiceName}, {"webhookConfiguration", o.WebhookConfiguration}, {"certDir", o.CertDir}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), "needed for self-managed webhook certificates"))
		}
	}
	if o.RenewBefore >= o.Validity {
		errs = append(errs, field.Invalid(p.Child("renewBefore"), o.RenewBefore.String(), "must be shorter than validity "+o.Validity.String()))
	}
	if err := errs.ToAggregate(); err != nil {
		return nil, err
	}
	return &Manager{c: c, o: o, now: time.Now}, nil
}

// DNSNames are the names the serving certificate is for.
func (m *Manager) DNSNames() []string {
	svc := m.o.ServiceName + "." + m.o.Namespace + ".svc"
	return []string{svc, svc + ".cluster.local"}
}

// Ensure makes one pass: a valid certificate in the Secret (created or renewed when needed), the caBundle of every
// webhook, the files in CertDir. Safe to run from every replica at once: a write that loses a race re-reads.
func (m *Manager) Ensure(ctx context.Context) error {
	pair, err := m.ensureSecret(ctx)
	if err != nil {
		return err
	}
	if err := m.ensureCABundle(ctx, pair.caBundle()); err != nil {
		return err
	}
	return m.writeFiles(pair)
}

// Start runs Ensure every Interval until ctx ends (a manager.Runnable on every replica: each serves webhooks).
func (m *Manager) Start(ctx context.Context) error {
	t := time.NewTicker(m.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			// A failed pass is retried at the next tick; the current certificate stays valid for RenewBefore.
			if err := m.Ensure(ctx); err != nil {
				ctrllog.FromContext(ctx).Error(err, "keeping the webhook certificate")
			}
		}
	}
}

// NeedLeaderElection is false: every replica needs the files.
func (m *Manager) NeedLeaderElection() bool { return false }

// keyPair is the Secret's content.
type keyPair struct {
	cert, key, ca, previousCA []byte
}

func (k keyPair) caBundle() []byte {
	return append(append([]byte{}, k.ca...), k.previousCA...)
}

func (m *Manager) ensureSecret(ctx context.Context) (keyPair, error) {
	key := client.ObjectKey{Namespace: m.o.Namespace, Name: m.o.SecretName}
	for range maxConflicts {
		var s corev1.Secret
		err := m.c.Get(ctx, key, &s)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return keyPair{}, fmt.Errorf("get Secret %s: %w", key, err)
		}
		cur := keyPair{cert: s.Data[KeyCert], key: s.Data[KeyKey], ca: s.Data[KeyCA], previousCA: s.Data[KeyPreviousCA]}
		if exists && m.fresh(cur) {
			return cur, nil
		}
		next, err := m.issue(cur)
		if err != nil {
			return keyPair{}, err
		}
		s.Namespace, s.Name, s.Type = m.o.Namespace, m.o.SecretName, corev1.SecretTypeTLS
		s.Data = map[string][]byte{KeyCert: next.cert, KeyKey: next.key, KeyCA: next.ca}
		if len(next.previousCA) > 0 {
			s.Data[KeyPreviousCA] = next.previousCA
		}
		if exists {
			err = m.c.Update(ctx, &s)
		} else {
			err = m.c.Create(ctx, &s)
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue // another replica wrote first: use its certificate
		}
		if err != nil {
			return keyPair{}, fmt.Errorf("write Secret %s: %w", key, err)
		}
		return next, nil
	}
	return keyPair{}, fmt.Errorf("write Secret %s: still conflicting after %d tries", key, maxConflicts)
}

// fresh reports whether k holds a serving certificate for our names, signed by its CA, not due for renewal.
func (m *Manager) fresh(k keyPair) bool {
	leaf, err := parseCert(k.cert)
	if err != nil {
		return false
	}
	if _, err := tlsKeyMatches(k.cert, k.key); err != nil {
		return false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(k.ca) {
		return false
	}
	now := m.now()
	for _, name := range m.DNSNames() {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			return false
		}
	}
	return now.Before(leaf.NotAfter.Add(-m.o.RenewBefore))
}

// issue makes a new CA and serving certificate; the current CA, while still valid, stays trusted as the previous.
func (m *Manager) issue(cur keyPair) (keyPair, error) {
	now := m.now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "network-operator-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(m.o.Validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return keyPair{}, fmt.Errorf("CA certificate: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("serving key: %w", err)
	}
	names := m.DNSNames()
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(m.o.Validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("serving key: %w", err)
	}
	next := keyPair{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		ca:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}
	if old, err := parseCert(cur.ca); err == nil && now.Before(old.NotAfter) {
		next.previousCA = cur.ca // the API server may still hold a bundle with only this one
	}
	return next, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // cannot fail on Linux
	}
	return n
}

func parseCert(data []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}

// tlsKeyMatches checks that key is the private key of cert.
func tlsKeyMatches(cert, key []byte) (*x509.Certificate, error) {
	leaf, err := parseCert(cert)
	if err != nil {
		return nil, err
	}
	b, _ := pem.Decode(key)
	if b == nil {
		return nil, errors.New("no PEM key")
	}
	k, err := x509.ParseECPrivateKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&k.PublicKey) {
		return nil, errors.New("key does not match the certificate")
	}
	return leaf, nil
}

func (m *Manager) ensureCABundle(ctx context.Context, bundle []byte) error {
	key := client.ObjectKey{Name: m.o.WebhookConfiguration}
	for range maxConflicts {
		var vwc admissionv1.ValidatingWebhookConfiguration
		if err := m.c.Get(ctx, key, &vwc); err != nil {
			return fmt.Errorf("get ValidatingWebhookConfiguration %s: %w", key.Name, err)
		}
		changed := false
		for i := range vwc.Webhooks {
			if !bytes.Equal(vwc.Webhooks[i].ClientConfig.CABundle, bundle) {
				vwc.Webhooks[i].ClientConfig.CABundle = bundle
				changed = true
			}
		}
		if !changed {
			return nil
		}
		err := m.c.Update(ctx, &vwc)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("set caBundle of ValidatingWebhookConfiguration %s: %w", key.Name, err)
		}
		return nil
	}
	return fmt.Errorf("set caBundle of ValidatingWebhookConfiguration %s: still conflicting after %d tries", key.Name, maxConflicts)
}

// writeFiles writes tls.crt and tls.key when they differ, each by rename so the server never reads half a file.
func (m *Manager) writeFiles(k keyPair) error {
	if err := os.MkdirAll(m.o.CertDir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", m.o.CertDir, err)
	}
	// The key first: controller-runtime reloads on a change of either, and a new key with the old
	// certificate only fails the reload until the certificate follows.
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyKey, k.key}, {KeyCert, k.cert}} {
		path := filepath.Join(m.o.CertDir, f.name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.data) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", tmp, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

// Expiry returns when the certificate in CertDir expires (for status and tests).
func (m *Manager) Expiry() (time.Time, error) {
	data, err := os.ReadFile(filepath.Join(m.o.CertDir, KeyCert))
	if err != nil {
		return time.Time{}, err
	}
	leaf, err := parseCert(data)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", filepath.Join(m.o.CertDir, KeyCert), err)
	}
	return leaf.NotAfter, nil
}
