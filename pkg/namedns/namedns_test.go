package namedns

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// inPrivateMountNS is set in the environment of the test binary re-executed by runInPrivateMountNS.
const inPrivateMountNS = "NAMEDNS_TEST_PRIVATE_MNT"

// runInPrivateMountNS re-runs the current test in a private mount namespace (unshare --mount --propagation
// private) and reports whether the caller is that child. There, /run is a fresh tmpfs, so /run/netns starts as
// it does on a machine where nobody ever ran `ip netns add`, and nothing the test mounts reaches the host.
func runInPrivateMountNS(t *testing.T) (child bool) {
	t.Helper()
	if os.Getenv(inPrivateMountNS) == t.Name() {
		// Drop the host's /run/netns mounts from this private view (they would still be listed in mountinfo
		// under a new /run), then start from an empty /run.
		for {
			if err := unix.Unmount(Dir, unix.MNT_DETACH); err != nil {
				break
			}
		}
		if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, "mode=0755"); err != nil {
			t.Fatalf("mount a fresh tmpfs on /run: %v", err)
		}
		return true
	}
	testreq.Root(t)
	paths := testreq.Commands(t, "unshare", "ip")
	cmd := exec.Command(paths[0], "--mount", "--propagation", "private", "--",
		os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), inPrivateMountNS+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("child in a private mount namespace:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child did not pass %s", t.Name())
	}
	return false
}

// mountsUnder lists the mount points at or below dir (from /proc/self/mountinfo).
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			out = append(out, fields[4])
		}
	}
	return out
}

func isMountPoint(t *testing.T, dir string) bool {
	t.Helper()
	for _, m := range mountsUnder(t, dir) {
		if m == dir {
			return true
		}
	}
	return false
}

// TestCreateAlongsideIPNetns starts from a /run/netns that is not a mount point, creates namespaces while `ip
// netns add` runs concurrently, deletes everything (ours with Delete, ip's with `ip netns del`), and checks that
// nothing is left: no file in /run/netns, no nsfs mount under it.
func TestCreateAlongsideIPNetns(t *testing.T) {
	if !runInPrivateMountNS(t) {
		return
	}
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if isMountPoint(t, Dir) {
		t.Fatalf("%s is a mount point before the test", Dir)
	}

	const ours, theirs = 24, 12
	var wg sync.WaitGroup
	errs := make(chan error, ours+theirs)
	handles := make([]netns.NsHandle, ours)
	for i := range ours {
		wg.Go(func() {
			h, err := Create(fmt.Sprintf("ours-%d", i))
			if err != nil {
				errs <- err
				return
			}
			handles[i] = h
		})
	}
	for i := range theirs {
		wg.Go(func() {
			if out, err := exec.Command("ip", "netns", "add", fmt.Sprintf("ip-%d", i)).CombinedOutput(); err != nil {
				errs <- fmt.Errorf("ip netns add ip-%d: %v: %s", i, err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	if !isMountPoint(t, Dir) {
		t.Errorf("%s is not a mount point after Create", Dir)
	}

	// Each handle is a namespace of its own, not the test's.
	self, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	seen := map[string]bool{}
	for i, h := range handles {
		if h.Equal(self) {
			t.Errorf("ours-%d is the test's own namespace", i)
		}
		if seen[h.UniqueId()] {
			t.Errorf("ours-%d is a namespace made before", i)
		}
		seen[h.UniqueId()] = true
		h.Close()
	}
	// `ip` sees ours, and we see ip's.
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v: %s", err, out)
	}
	for i := range ours {
		if !strings.Contains(string(out), fmt.Sprintf("ours-%d", i)) {
			t.Errorf("ip netns list misses ours-%d:\n%s", i, out)
		}
	}
	names, err := List("ip-")
	if err != nil || len(names) != theirs {
		t.Errorf("List(ip-) = %v, %v; want %d names", names, err, theirs)
	}

	// More `ip netns add` after ours exist (what used to hide them), then delete everything.
	if out, err := exec.Command("ip", "netns", "add", "ip-late").CombinedOutput(); err != nil {
		t.Fatalf("ip netns add ip-late: %v: %s", err, out)
	}
	for i := range ours {
		if err := Delete(fmt.Sprintf("ours-%d", i)); err != nil {
			t.Error(err)
		}
	}
	for i := range theirs {
		if out, err := exec.Command("ip", "netns", "del", fmt.Sprintf("ip-%d", i)).CombinedOutput(); err != nil {
			t.Errorf("ip netns del ip-%d: %v: %s", i, err, out)
		}
	}
	if err := Delete("ip-late"); err != nil {
		t.Errorf("Delete of a namespace made by ip: %v", err)
	}
	if left, _ := List(""); len(left) != 0 {
		t.Errorf("left in %s: %v", Dir, left)
	}
	for _, m := range mountsUnder(t, Dir) {
		if m != Dir {
			t.Errorf("mount left: %s", m)
		}
	}
	if err := Delete("ours-0"); !errors.Is(err, ErrNotExist) {
		t.Errorf("second Delete = %v, want ErrNotExist", err)
	}
}

// TestHiddenMountIsReported reproduces what this package prevents: a namespace bind-mounted while /run/netns was a
// plain directory, then hidden by `ip netns add`. Delete cannot remove it and says why (ErrHidden).
func TestHiddenMountIsReported(t *testing.T) {
	if !runInPrivateMountNS(t) {
		return
	}
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The old way: bind the namespace without making Dir a mount point first.
	path := Path("old")
	if f, err := os.Create(path); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	if err := unix.Mount("/proc/self/ns/net", path, "none", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "netns", "add", "ip-hider").CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	if err := Delete("old"); !errors.Is(err, ErrHidden) {
		t.Errorf("Delete of a hidden namespace = %v, want ErrHidden", err)
	}
	if err := Delete("ip-hider"); err != nil {
		t.Error(err)
	}
}

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"nl01ab-r", true}, {"", false}, {".", false}, {"..", false}, {"a/b", false},
		{strings.Repeat("x", 255), true}, {strings.Repeat("x", 256), false},
	} {
		if err := ValidateName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
