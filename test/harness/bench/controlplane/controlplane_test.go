package controlplane

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/nodespec"
)

func TestParseRequests(t *testing.T) {
	text := `# HELP network_operator_api_requests_total Requests of the operator to the API server.
# TYPE network_operator_api_requests_total counter
network_operator_api_requests_total{resource="nodenetworkconfigs",verb="patch"} 1000
network_operator_api_requests_total{resource="leases",verb="update"} 12
# TYPE other_total counter
other_total 5
`
	got, err := parseRequests(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["patch nodenetworkconfigs"] != 1000 || got["update leases"] != 12 {
		t.Errorf("parsed %v", got)
	}
	if _, err := parseRequests("other_total 5\n"); err == nil {
		t.Error("no error without the operator's request counter")
	}
}

func TestRequestDetail(t *testing.T) {
	got := requestDetail(map[string]float64{"update leases": 20, "patch nodenetworkconfigs": 2000, "list nodes": 0}, 2000)
	want := "by verb and resource: patch nodenetworkconfigs 1, update leases 0.01"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseStatusMemory(t *testing.T) {
	rss, peak, err := parseStatusMemory("Name:\tnetwork-operator\nVmHWM:\t  153600 kB\nVmRSS:\t   102400 kB\nThreads:\t9\n")
	if err != nil {
		t.Fatal(err)
	}
	if rss != 100<<20 || peak != 150<<20 {
		t.Errorf("rss %v, peak %v", rss, peak)
	}
	if _, _, err := parseStatusMemory("VmRSS:\t1 kB\n"); err == nil {
		t.Error("no error without VmHWM")
	}
}

func TestParseStat(t *testing.T) {
	// pid (comm with a space) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	got, err := parseStat("4242 (network operator) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0")
	if err != nil {
		t.Fatal(err)
	}
	if got != (stat{comm: "network operator", ppid: 17, cpu: 3 * time.Second}) {
		t.Errorf("got %+v, want network operator, ppid 17, 3s (300 ticks)", got)
	}
	if _, err := parseStat("4242 network-operator S 17"); err == nil {
		t.Error("no error without the command name")
	}
}

func TestApplyDelay(t *testing.T) {
	slow := 0
	for i := range 900 {
		name := "node-" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		d := applyDelay(42, name, int64(i))
		if d != applyDelay(42, name, int64(i)) {
			t.Fatalf("%s generation %d: not repeatable", name, i)
		}
		if d < 10*time.Millisecond || d >= 380*time.Millisecond {
			t.Fatalf("%s: delay %v out of range", name, d)
		}
		if d >= 310*time.Millisecond {
			slow++
		}
	}
	if slow < 50 || slow > 150 {
		t.Errorf("%d of 900 applies slow, want about a ninth", slow)
	}
}

func TestConfirms(t *testing.T) {
	nnc := &v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:   v1.NodeNetworkConfigSpec{Revision: "r2", ExpectedMapVersion: "m2"},
		Status: v1.NodeNetworkConfigStatus{AppliedRevision: "r2", MapVersion: "m2"}}
	ready := metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 2}
	nnc.Status.Conditions = []metav1.Condition{ready}
	if !confirms(nnc) {
		t.Error("applied, map version and Ready of the generation: not confirmed")
	}
	old := nnc.DeepCopy()
	old.Status.Conditions[0].ObservedGeneration = 1
	wrongMap := nnc.DeepCopy()
	wrongMap.Status.MapVersion = "m1"
	for name, n := range map[string]*v1.NodeNetworkConfig{"Ready of an older generation": old, "other map version": wrongMap} {
		if confirms(n) {
			t.Errorf("%s: confirmed", name)
		}
	}
}

func TestAllowed(t *testing.T) {
	for in, want := range map[string]int{"10%": 100, "1": 1, "0%": 1, "25": 25} {
		if got := allowed(in, 1000); got != want {
			t.Errorf("allowed(%q, 1000) = %d, want %d", in, got, want)
		}
	}
}

// TestKubeletNode: the simulated Nodes are about as large as a small real node's, and Ready with an InternalIP
// (the router id) so every node gets a configuration.
func TestKubeletNode(t *testing.T) {
	n := kubeletNode(1234)
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes of JSON", len(b))
	if len(b) < 4000 || len(b) > 12000 {
		t.Errorf("%d bytes of JSON, want a small real node's 4-12 KB", len(b))
	}
	ready := false
	for _, c := range n.Status.Conditions {
		ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
	}
	if !ready || n.Status.Addresses[0].Address != n.Annotations[nodespec.AnnotationRouterID] || n.Name != "node-1234" {
		t.Errorf("node %s: ready %v, addresses %v", n.Name, ready, n.Status.Addresses)
	}
}
