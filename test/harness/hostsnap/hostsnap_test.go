package hostsnap

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestDiff(t *testing.T) {
	host := "net:[1]"
	before := &Snapshot{
		Namespaces: []string{"keep"}, BPFFS: []string{"/sys/fs/bpf/cilium"},
		Programs: map[uint32]string{7: "SchedCLS old"}, Links: map[uint32]string{},
		Processes: map[int]Process{1: {Start: 1, Comm: "init", Netns: host}, 50: {Start: 9, Comm: "zebra", Netns: host}},
		Mounts:    []string{"/", "/sys/fs/bpf"}, Temp: []string{"a"},
		Sysctls: map[string]string{"net.ipv4.ip_forward": "0", "kernel.panic": "0"},
	}
	after := &Snapshot{
		Namespaces: []string{"keep", "nl01-r"},
		BPFFS:      []string{"/sys/fs/bpf/cilium", "/sys/fs/bpf/nl01", "/sys/fs/bpf/nl01/pins-0"},
		Programs:   map[uint32]string{7: "SchedCLS old", 9: "SchedCLS tc_router"},
		Links:      map[uint32]string{3: "type 11, program 9"},
		Processes: map[int]Process{
			1:  {Start: 1, Comm: "init", Netns: host},
			50: {Start: 9, Comm: "zebra", Netns: host},       // was there before
			51: {Start: 20, Comm: "bgpd", Netns: host},       // a project program, new
			52: {Start: 21, Comm: "sleep", Netns: "net:[2]"}, // new, in another namespace
			53: {Start: 22, Comm: "bash", Netns: host},       // new, unrelated
			54: {Start: 23, Comm: "make", Netns: host},       // the caller: excluded
		},
		Mounts:  []string{"/", "/sys/fs/bpf", "/run/netns", "/run/netns/nl01-r", "/sys/kernel/debug/tracing"},
		Temp:    []string{"a", "nl-frr123"},
		Sysctls: map[string]string{"net.ipv4.ip_forward": "1", "kernel.panic": "0"}, HostNetns: host,
	}
	got := Diff(before, after, map[int]bool{54: true})
	want := []string{
		"BPF link 3 (type 11, program 9)",
		"BPF program 9 (SchedCLS tc_router)",
		"bpffs path /sys/fs/bpf/nl01",
		"mount /run/netns/nl01-r",
		"network namespace nl01-r",
		"process 51 bgpd (, net:[1])",
		"process 52 sleep (, net:[2])",
		"sysctl net.ipv4.ip_forward changed: 0 -> 1",
		"temp entry nl-frr123",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := Diff(after, after, nil); len(d) != 0 {
		t.Errorf("Diff of a snapshot with itself: %v", d)
	}
}

// TestTakeSeesRealObjects leaves a namespace, a process inside it and a temp directory, and checks that a
// snapshot taken afterwards names each.
func TestTakeSeesRealObjects(t *testing.T) {
	testreq.Commands(t, "nsenter", "sleep")
	tmp := t.TempDir()
	before := Take(Options{TempDir: tmp})
	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	name := "hsnap-" + hex.EncodeToString(id[:])
	h, err := namedns.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	cmd := exec.Command("nsenter", "--net="+namedns.Path(name), "--", "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err := namedns.Delete(name); err != nil {
			t.Error(err)
		}
	})
	// Wait (bounded) until the process has entered the namespace.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids, err := namedns.Processes(name)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(pids, cmd.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not enter %s within 10 s", cmd.Process.Pid, name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Mkdir(filepath.Join(tmp, "left"), 0o700); err != nil {
		t.Fatal(err)
	}
	after := Take(Options{TempDir: tmp})
	got := strings.Join(Diff(before, after, Ancestors(os.Getpid())), "\n")
	for _, want := range []string{"network namespace " + name, "temp entry left", fmt.Sprintf("process %d ", cmd.Process.Pid)} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
}

func TestProcessStart(t *testing.T) {
	a, err := ProcessStart(os.Getpid())
	if err != nil || a == 0 {
		t.Fatalf("own start %d, %v", a, err)
	}
	if _, err := ProcessStart(1 << 30); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a pid that does not exist: %v, want ErrNotExist", err)
	}
}
