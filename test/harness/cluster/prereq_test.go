package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingImageArchive: an install whose image archive does not exist is refused before anything starts,
// with the file named and how to make it.
func TestMissingImageArchive(t *testing.T) {
	images := t.TempDir()
	for _, name := range []string{"network-operator", "frr", "pause"} { // network-agent.tar is missing
		if err := os.WriteFile(filepath.Join(images, name+".tar"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "helm"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Nodes: 3, RepoRoot: root, Install: InstallHelm, ImagesDir: images, ChartTools: tools,
		NodeBinDir: t.TempDir()}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	err = checkPrerequisites(&o)
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("checkPrerequisites: %v, want ErrMissing", err)
	}
	want := filepath.Join(images, "network-agent.tar") + " (make images)"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error does not name the missing archive %q:\n%v", want, err)
	}
	for _, present := range []string{"network-operator.tar", "frr.tar", "pause.tar", "helm"} {
		if strings.Contains(err.Error(), string(filepath.Separator)+present+" ") {
			t.Errorf("error names %s, which exists:\n%v", present, err)
		}
	}
}
