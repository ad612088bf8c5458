package kubenodes

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// certValidity covers any run of a test or a demo left running for a while.
const certValidity = 30 * 24 * time.Hour

// pki is the cluster's certificate authority and the files it wrote.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	serial int64
}

// newPKI makes a CA (written as ca.crt / ca.key in dir) and the service-account key pair (sa.key, sa.pub).
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "kubenodes-ca"}, key)
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	p := &pki{dir: dir, caCert: ca, caKey: key, serial: 1}
	if err := p.write("ca", ca, key); err != nil {
		return nil, err
	}
	// Service-account tokens: RSA, which every consumer accepts.
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saKey, err := keyutil.MarshalPrivateKeyToPEM(sa)
	if err != nil {
		return nil, err
	}
	saDER, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	saPub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saDER})
	if err := keyutil.WriteKey(p.path("sa.key"), saKey); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.path("sa.pub"), saPub, 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// issue writes NAME.crt and NAME.key: a certificate for cn in groups orgs, for serving (with SANs) and/or client
// authentication.
func (p *pki) issue(name, cn string, orgs []string, sans []string, usages ...x509.ExtKeyUsage) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usages,
	}
	for _, s := range sans {
		if ip := net.ParseIP(s); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, s)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return fmt.Errorf("certificate %s: %w", name, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	return p.write(name, c, key)
}

func (p *pki) write(name string, c *x509.Certificate, key crypto.Signer) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	certPEM, err := cert.EncodeCertificates(c)
	if err != nil {
		return err
	}
	if err := cert.WriteCert(p.path(name+".crt"), certPEM); err != nil {
		return fmt.Errorf("write %s.crt: %w", name, err)
	}
	if err := keyutil.WriteKey(p.path(name+".key"), keyPEM); err != nil {
		return fmt.Errorf("write %s.key: %w", name, err)
	}
	return nil
}

// client issues a client certificate and writes a kubeconfig NAME.kubeconfig for server with it.
func (p *pki) client(name, user string, groups []string, server string) (string, error) {
	if err := p.issue(name, user, groups, nil, x509.ExtKeyUsageClientAuth); err != nil {
		return "", err
	}
	path := p.path(name + ".kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubenodes
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: kubenodes
  context: {cluster: kubenodes, user: %s}
current-context: kubenodes
`, server, p.path("ca.crt"), user, p.path(name+".crt"), p.path(name+".key"), user)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", err
	}
	return path, nil
}
