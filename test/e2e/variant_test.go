package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// routerVariant compiles the eBPF router the way bpf/gen.go's go:generate line does, but with -mcpu=v2 instead
// of -mcpu=v3: other instructions (no 32-bit jumps), the same maps and behaviour. It returns a go build -overlay
// file that puts that object in place of bpf/router_bpfel.o, so an agent built with it runs other code in its
// data path: an upgrade to it must swap the program on every attachment, under traffic.
func routerVariant(t *testing.T, root string) string {
	t.Helper()
	gen, err := os.ReadFile(filepath.Join(root, "bpf", "gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for l := range strings.SplitSeq(string(gen), "\n") {
		if rest, ok := strings.CutPrefix(l, "//go:generate go tool bpf2go "); ok && strings.Contains(rest, " Router router.c ") {
			args = strings.Fields(rest)
		}
	}
	const from, to = "-mcpu=v3", "-mcpu=v2"
	i := slices.Index(args, from)
	if i < 0 {
		t.Fatalf("bpf/gen.go: no bpf2go line for the router with %s (the variant changes it to %s)", from, to)
	}
	args[i] = to
	dir := t.TempDir()
	cmd := exec.Command("go", append([]string{"tool", "bpf2go", "-output-dir", dir}, args...)...)
	cmd.Dir = filepath.Join(root, "bpf")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go tool bpf2go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	orig := filepath.Join(root, "bpf", "router_bpfel.o")
	variant := filepath.Join(dir, "router_bpfel.o")
	a, err1 := os.ReadFile(orig)
	b, err2 := os.ReadFile(variant)
	if err1 != nil || err2 != nil || bytes.Equal(a, b) {
		t.Fatalf("the variant router object is not other code: %v %v, equal %v", err1, err2, bytes.Equal(a, b))
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {orig: variant}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(path, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
