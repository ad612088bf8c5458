package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/syncbuf"
	"github.com/network-operator/network-operator/test/harness/bench/benchproc"
)

// requestsMetric is the operator's count of its own API requests (operator/metrics APIRequests).
const requestsMetric = "network_operator_api_requests_total"

// operatorProc is the operator binary running against the control plane.
type operatorProc struct {
	*benchproc.Proc
	metricsAddr string
}

// startOperator starts bin as the chart runs it (leader election, metrics and probes, the given extra flags), but
// with a kubeconfig and without the webhooks (they need a serving certificate the API server trusts), and waits
// until it is ready (informers synced).
func startOperator(ctx context.Context, bin string, cfg *rest.Config, dir string, extra ...string) (*operatorProc, error) {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := benchproc.WriteKubeconfig(cfg, "operator", kubeconfig); err != nil {
		return nil, err
	}
	metricsAddr, err := benchproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	probeAddr, err := benchproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig", kubeconfig, "--leader-elect", "--leader-election-namespace", "default",
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr, "--webhooks=false"}, extra...)
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logs, logs
	proc, err := benchproc.Start("the operator", cmd, func() ([]byte, error) { return []byte(logs.String()), nil })
	if err != nil {
		return nil, err
	}
	p := &operatorProc{Proc: proc, metricsAddr: metricsAddr}
	err = wait.Poll(ctx, 50*time.Millisecond, time.Minute, "operator ready", func(ctx context.Context) (bool, string, error) {
		if err := p.Running(); err != nil {
			return false, "", err
		}
		if _, err := get(ctx, "http://"+probeAddr+"/readyz"); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		return nil, errors.Join(err, p.stop())
	}
	return p, nil
}

// stop ends the operator with SIGTERM: it must exit cleanly within 30 s.
func (p *operatorProc) stop() error { return p.StopCleanly(30 * time.Second) }

func get(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}

// requests scrapes the operator's request counts ("verb resource" -> count).
func (p *operatorProc) requests(ctx context.Context) (map[string]float64, error) {
	body, err := get(ctx, "http://"+p.metricsAddr+"/metrics")
	if err != nil {
		return nil, err
	}
	return parseRequests(string(body))
}

// parseRequests reads requestsMetric from a Prometheus text exposition ("verb resource" -> count).
func parseRequests(text string) (map[string]float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("operator metrics: %w", err)
	}
	f, ok := families[requestsMetric]
	if !ok {
		return nil, fmt.Errorf("operator metrics have no %s", requestsMetric)
	}
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		var verb, resource string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			}
		}
		out[verb+" "+resource] += m.GetCounter().GetValue()
	}
	return out, nil
}

// memory is the operator's resident set now and its peak (VmRSS, VmHWM of /proc/<pid>/status), in bytes.
func (p *operatorProc) memory() (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0, 0, fmt.Errorf("operator memory: %w", err)
	}
	return parseStatusMemory(string(b))
}

// parseStatusMemory reads VmRSS and VmHWM (kB) of a /proc/<pid>/status text, in bytes.
func parseStatusMemory(text string) (rss, peak float64, err error) {
	found := 0
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("/proc status: %s: %q", k, v)
		}
		n, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc status: %s: %w", k, err)
		}
		if k == "VmRSS" {
			rss = n * 1024
		} else {
			peak = n * 1024
		}
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("/proc status: no VmRSS and VmHWM")
	}
	return rss, peak, nil
}
