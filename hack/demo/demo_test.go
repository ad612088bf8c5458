// Package demo_test runs hack/demo-dataplane.sh (the data-plane-only demo) end to end, as
// `make demo-dataplane` does on a fresh machine.
package demo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDemoScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: the demo needs root (namespaces, BPF)")
	}
	if _, err := os.Stat("/run/netns/demo-router"); err == nil {
		t.Skip("skipping: a demo is running (hack/demo-dataplane.sh up); the test would tear it down")
	}
	for _, tool := range []string{"iperf3", "bpftool", "jq", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not installed (make deps installs it)", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./demo-dataplane.sh")
	cmd.Dir = ".." // hack/
	out, err := cmd.CombinedOutput()
	t.Logf("hack/demo-dataplane.sh:\n%s", out)
	if err != nil {
		t.Fatalf("hack/demo-dataplane.sh: %v", err)
	}
	text := string(out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`ping 10.2.0.2 from tenant A: no reply, as expected`),
		regexp.MustCompile(`a-cli +tc`),
		regexp.MustCompile(`applied generation 1 \(revision "demo-v1"\)`),
		regexp.MustCompile(`5 packets transmitted, 5 received`),
		regexp.MustCompile(`tenant A's server \+[5-9], tenant B's server \+0`),
		regexp.MustCompile(`tenant B's server \+[3-9], tenant A's server \+0`),
		regexp.MustCompile(`Gbits/sec .*receiver`),
		regexp.MustCompile(`Connection refused`),
		regexp.MustCompile(`1 tenant-a +forwarded-fib +forwarded +\d+`),
		regexp.MustCompile(`passed-not-fwded`),
		regexp.MustCompile(`"revision": "demo-v1"`),
		regexp.MustCompile(`"table_id": 102`),
	} {
		if !want.MatchString(text) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	for _, ns := range []string{"demo-router", "demo-a-cli", "demo-a-srv", "demo-b-cli", "demo-b-srv"} {
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
			t.Errorf("namespace %s left behind", ns)
		}
	}
	if _, err := os.Stat("/sys/fs/bpf/network-operator-demo"); err == nil {
		t.Error("pin dir /sys/fs/bpf/network-operator-demo left behind")
	}
	if strings.Contains(text, "isolation broken") {
		t.Error("the demo reported broken isolation")
	}
}
