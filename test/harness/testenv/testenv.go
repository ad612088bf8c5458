/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package testenv starts a real kube-apiserver + etcd (controller-runtime's envtest) with this project's CRDs
// installed and, optionally, its admission webhooks served by the test process or by an operator started
// elsewhere. It is the one way the harness starts such a control plane: tests (one per package from TestMain,
// Shared), the demo's and e2e's process install (test/harness/cluster) and the bench. A control plane takes ~3 s
// to start and ~300 MB of memory. (Real kubelet nodes need the full control plane of test/harness/kubenodes:
// controller-manager, scheduler and the Node authorizer, which envtest does not run.)
//
// The binaries come from $KUBEBUILDER_ASSETS or from the cache hack/envtest-assets.sh fills (`make envtest`). When
// neither has them, Start fails with a message saying so: API-server tests never skip silently.
package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	networkv1alpha1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

const (
	// modulePath identifies the repository root (its go.mod) when walking up from the test's directory.
	modulePath = "github.com/network-operator/network-operator"

	// DefaultK8sVersion and DefaultEtcdVersion are the versions the Makefile passes to hack/envtest-assets.sh;
	// ENVTEST_K8S_VERSION / ENVTEST_ETCD_VERSION override them, like the Makefile variables.
	DefaultK8sVersion  = "1.37.1"
	DefaultEtcdVersion = "3.7.0"

	webhookReadyTimeout = 30 * time.Second
)

// ErrNoAssets says the kube-apiserver/etcd binaries were not found.
var ErrNoAssets = errors.New("envtest binaries not found: run `make envtest` (or set KUBEBUILDER_ASSETS)")

// Options configure Start.
type Options struct {
	// Webhooks, when set, registers admission webhooks on a manager served by this process; the webhook
	// configurations from config/webhook are installed in the API server, pointing at it.
	Webhooks func(mgr manager.Manager) error
	// ExternalWebhooks installs the webhook configurations from config/webhook pointing at a free port on
	// 127.0.0.1 with a CA made for this run, for a server started elsewhere (the operator binary: see
	// Env.WebhookServing). It excludes Webhooks.
	ExternalWebhooks bool
	// WorkDir, when set, holds etcd's data and the API server's certificates (so a crashed run's leftovers are
	// found by it); else they go to temporary directories envtest removes.
	WorkDir string
	// RepoRoot is where config/ is read from (default: found from the working directory, RepoRoot).
	RepoRoot string
}

// Env is a running control plane.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is a direct (uncached) client with Scheme.
	Client client.Client
	// Scheme has client-go's types and network.network-operator.io/v1alpha1.
	Scheme *runtime.Scheme
	// Manager serves the webhooks (nil without Options.Webhooks).
	Manager manager.Manager

	env     *envtest.Environment
	stopMgr context.CancelFunc
	mgrDone chan error
}

// Start starts etcd and kube-apiserver, installs the CRDs from config/crd/bases and, with opts.Webhooks, serves the
// webhooks from this process and waits until the API server can reach them.
func Start(ctx context.Context, opts Options) (*Env, error) {
	if opts.Webhooks != nil && opts.ExternalWebhooks {
		return nil, errors.New("testenv: Options.Webhooks and Options.ExternalWebhooks exclude each other")
	}
	root := opts.RepoRoot
	if root == "" {
		var err error
		if root, err = RepoRoot(); err != nil {
			return nil, err
		}
	}
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("add client-go types to scheme: %w", err)
	}
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("add %s types to scheme: %w", networkv1alpha1.GroupVersion, err)
	}

	te := &envtest.Environment{
		Scheme:                scheme,
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if opts.Webhooks != nil || opts.ExternalWebhooks {
		te.WebhookInstallOptions.Paths = []string{filepath.Join(root, "config", "webhook")}
		te.WebhookInstallOptions.LocalServingHost = "127.0.0.1"
	}
	if opts.WorkDir != "" {
		te.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(opts.WorkDir, "etcd")}
		te.ControlPlane.APIServer = &envtest.APIServer{CertDir: filepath.Join(opts.WorkDir, "apiserver")}
		for _, d := range []string{te.ControlPlane.Etcd.DataDir, te.ControlPlane.APIServer.CertDir} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, fmt.Errorf("control plane directory: %w", err)
			}
		}
	}
	// controller-runtime warns loudly when no logger is set; the tests assert on behaviour, not on its logs.
	ctrl.SetLogger(logr.Discard())

	cfg, err := te.Start()
	if err != nil {
		// envtest leaves etcd and kube-apiserver running when a later step (CRD install) fails.
		err = fmt.Errorf("start envtest control plane from %s: %w", assets, err)
		if serr := te.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop half-started control plane: %w", serr))
		}
		return nil, err
	}
	e := &Env{Config: cfg, Scheme: scheme, env: te}
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, errors.Join(fmt.Errorf("create client: %w", err), e.Stop())
	}
	if opts.Webhooks != nil {
		if err := e.serveWebhooks(ctx, opts.Webhooks); err != nil {
			return nil, errors.Join(err, e.Stop())
		}
	}
	return e, nil
}

func (e *Env) serveWebhooks(ctx context.Context, setup func(manager.Manager) error) error {
	wio := &e.env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    wio.LocalServingHost,
			Port:    wio.LocalServingPort,
			CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		return fmt.Errorf("create webhook manager: %w", err)
	}
	if err := setup(mgr); err != nil {
		return fmt.Errorf("register webhooks: %w", err)
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.Manager, e.stopMgr, e.mgrDone = mgr, cancel, make(chan error, 1)
	go func() { e.mgrDone <- mgr.Start(mctx) }()

	// The API server calls the webhooks over TLS: wait until the server accepts TLS connections.
	started := mgr.GetWebhookServer().StartedChecker()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, webhookReadyTimeout, true,
		func(context.Context) (bool, error) {
			select {
			case err := <-e.mgrDone:
				e.mgrDone <- err
				return false, fmt.Errorf("webhook manager exited: %w", err)
			default:
			}
			return started(nil) == nil, nil
		})
	if err != nil {
		return fmt.Errorf("wait for webhook server on %s:%d: %w", wio.LocalServingHost, wio.LocalServingPort, err)
	}
	return nil
}

// WebhookServing is where the installed webhook configurations send admission requests: host, port and the
// directory of the serving certificate and key made for this run (zero without webhooks).
func (e *Env) WebhookServing() (host string, port int, certDir string) {
	wio := e.env.WebhookInstallOptions
	return wio.LocalServingHost, wio.LocalServingPort, wio.LocalServingCertDir
}

// AdminKubeconfig is a kubeconfig that reaches the API server as an administrator.
func (e *Env) AdminKubeconfig() []byte { return e.env.KubeConfig }

// UserKubeconfig adds a user authenticated by a client certificate, with groups, and returns its kubeconfig.
func (e *Env) UserKubeconfig(name string, groups ...string) ([]byte, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	return data, nil
}

// Stop stops the webhook manager, kube-apiserver and etcd.
func (e *Env) Stop() error {
	var errs []error
	if e.stopMgr != nil {
		e.stopMgr()
		if err := <-e.mgrDone; err != nil {
			errs = append(errs, fmt.Errorf("webhook manager: %w", err))
		}
		e.stopMgr = nil
	}
	if e.env != nil {
		if err := e.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop envtest control plane: %w", err))
		}
		e.env = nil
	}
	return errors.Join(errs...)
}

// AssetsDir returns the directory holding kube-apiserver and etcd: $KUBEBUILDER_ASSETS when set, else the cache
// of hack/envtest-assets.sh for the Makefile's versions. It returns an error wrapping ErrNoAssets when the
// binaries are not there.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	from := "KUBEBUILDER_ASSETS"
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%w: no KUBEBUILDER_ASSETS and no home directory: %v", ErrNoAssets, err)
			}
			cache = filepath.Join(home, ".cache")
		}
		k8s, etcd := envOr("ENVTEST_K8S_VERSION", DefaultK8sVersion), envOr("ENVTEST_ETCD_VERSION", DefaultEtcdVersion)
		dir = filepath.Join(cache, "network-operator", "envtest", k8s+"-"+etcd)
		from = "hack/envtest-assets.sh cache"
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		st, err := os.Stat(filepath.Join(dir, bin))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: no executable %s in %s (%s)", ErrNoAssets, bin, dir, from)
		}
	}
	return dir, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// RepoRoot finds the repository root by walking up from the working directory (a test's package directory) to
// the go.mod of this module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if isModuleRoot(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of %s above %s", modulePath, dir)
		}
	}
}

func isModuleRoot(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == modulePath
		}
	}
	return false
}

// Shared is the one control plane of a test package: the first test that asks for it starts it, Main stops it
// after the last test. A test that asks without the binaries fails in `make test` and skips elsewhere, with the
// reason (test/harness/testreq).
type Shared struct {
	// Options configure the control plane.
	Options Options

	assetsOnce sync.Once
	missing    error // why the binaries are not there (nil when they are)
	once       sync.Once
	env        *Env
	err        error
}

// Get returns the running control plane, starting it on first use.
func (s *Shared) Get(tb testreq.TB) *Env {
	tb.Helper()
	s.assetsOnce.Do(func() { _, s.missing = AssetsDir() })
	testreq.Available(tb, "API-server binaries (kube-apiserver, etcd)", s.missing)
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		s.env, s.err = Start(ctx, s.Options)
	})
	if s.err != nil {
		tb.Fatalf("start the shared control plane: %v", s.err)
	}
	return s.env
}

// Main runs the package's tests (call it from TestMain with its *testing.M) and stops the control plane if a
// test started it.
func (s *Shared) Main(m interface{ Run() int }) int {
	code := m.Run()
	if s.env != nil {
		if err := s.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the shared control plane: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// DecodeObjects reads every YAML (or JSON) document of data as an object, skipping empty documents; a document
// that does not decode is an error (a test must not silently stop at a malformed one).
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
