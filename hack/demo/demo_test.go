// Package demo_test runs hack/demo-dataplane.sh (the data-plane-only demo) end to end, as
// `make demo-dataplane` does on a fresh machine.
package demo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestDemoScript(t *testing.T) {
	testreq.BPFFS(t)
	testreq.Commands(t, "iperf3", "bpftool", "jq", "nsenter", "ip")
	// Names of our own: a demo the user left running (hack/demo-dataplane.sh up) is not touched.
	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	prefix := "dt" + hex.EncodeToString(id[:]) + "-"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./demo-dataplane.sh")
	cmd.Dir = ".." // hack/
	cmd.Env = append(os.Environ(), "DEMO_PREFIX="+prefix)
	t.Cleanup(func() {
		// Whatever a failed run left: the script's own `down` removes it.
		down := exec.Command("./demo-dataplane.sh", "down")
		down.Dir, down.Env = "..", cmd.Env
		if out, err := down.CombinedOutput(); err != nil {
			t.Errorf("hack/demo-dataplane.sh down: %v\n%s", err, out)
		}
	})
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
		// Tenant A's ping and iperf3 went through the fib + bpf_redirect_peer path (the servers are behind
		// veths into their own namespaces): thousands of packets, in the rows of VRF 1 (after its passed row).
		regexp.MustCompile(`(?m)^ +(1 tenant-a)? +forwarded-peer +forwarded +\d{4,} `),
		regexp.MustCompile(`passed-not-fwded`),
		regexp.MustCompile(`"revision": "demo-v1"`),
		regexp.MustCompile(`"table_id": 102`),
	} {
		if !want.MatchString(text) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	for _, ns := range []string{"router", "a-cli", "a-srv", "b-cli", "b-srv"} {
		if _, err := os.Stat(namedns.Path(prefix + ns)); err == nil {
			t.Errorf("namespace %s left behind", prefix+ns)
		}
	}
	pins := "/sys/fs/bpf/network-operator-" + strings.TrimSuffix(prefix, "-")
	if _, err := os.Stat(pins); err == nil {
		t.Errorf("pin dir %s left behind", pins)
	}
	if strings.Contains(text, "isolation broken") {
		t.Error("the demo reported broken isolation")
	}
}
