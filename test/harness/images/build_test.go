package images

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestCommandImages builds the operator and agent images twice from this checkout, each time compiling the
// binaries afresh, and expects equal digests and equal archives; then it validates the archives and imports
// them into a private containerd, which must list them under their names with the same digests.
func TestCommandImages(t *testing.T) {
	goTool := testreq.Tools(t, "go")[0]
	ctrd := startContainerd(t)
	// A cold Go build cache (-trimpath builds share nothing with `go test`'s) takes ~5 min on 2 cores.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	moduleDir, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range Commands() {
		names = append(names, c.Name)
	}
	// The agent sits on FRR's root file system (cached; built first if missing).
	testreq.Commands(t, "mmdebstrap", "apt-cache")
	cacheBase, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	recipe := DefaultFRRRecipe(nil)
	if recipe.Sources, err = AptSourcesFor("/", recipe.Suite); err != nil {
		t.Fatal(err)
	}
	rootfs := RootfsCache{Dir: filepath.Join(cacheBase, "network-operator", "frr-rootfs")}
	rf, err := rootfs.Get(ctx, recipe)
	if err != nil {
		t.Fatal(err)
	}
	frrLayer, err := FRRLayer(rf)
	if err != nil {
		t.Fatal(err)
	}
	frrDigest, err := frrLayer.Layer.Digest()
	if err != nil {
		t.Fatal(err)
	}
	var runs [2][]Built
	for i := range runs {
		start := time.Now()
		runs[i], err = Build(ctx, Options{
			ModuleDir: moduleDir, OutDir: t.TempDir(), Repo: "localhost/network-operator", Tag: "test",
			Meta: testMeta(), GoTool: goTool, Rootfs: rootfs, FRRRecipe: recipe,
		}, names...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("build %d: %.1f s", i+1, time.Since(start).Seconds())
	}

	for i, c := range Commands() {
		t.Run(c.Name, func(t *testing.T) {
			a, b := runs[0][i], runs[1][i]
			t.Logf("%s %s: archive %d bytes, layers %v", a.Ref, a.Digest, a.Size, a.Layers)
			if a.Digest != b.Digest {
				t.Fatalf("two builds gave digests %s and %s", a.Digest, b.Digest)
			}
			if !bytes.Equal(readFile(t, a.Path), readFile(t, b.Path)) {
				t.Fatalf("two builds gave equal digests but different archives %s, %s", a.Path, b.Path)
			}

			got := openArchive(t, a.Path)
			if got.digest != a.Digest || got.ref != "localhost/network-operator/"+c.Name+":test" {
				t.Errorf("archive holds %s %s, want %s %s", got.ref, got.digest, a.Ref, a.Digest)
			}
			cf, err := got.image.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			entry := "/usr/local/bin/" + c.Name
			if !slices.Equal(cf.Config.Entrypoint, []string{entry}) || cf.Config.User != c.User ||
				cf.OS != OS || cf.Architecture != Arch || cf.Config.Labels[LabelRevision] != testMeta().Revision ||
				!cf.Created.Equal(testMeta().Created) {
				t.Errorf("config: entrypoint %v user %q platform %s/%s labels %v created %v",
					cf.Config.Entrypoint, cf.Config.User, cf.OS, cf.Architecture, cf.Config.Labels, cf.Created)
			}
			files := imageFiles(t, got.image)
			if h := files[strings.TrimPrefix(entry, "/")]; h == nil || h.Mode&0o111 == 0 || h.Size < 1<<20 {
				t.Errorf("entrypoint %s in the image: %+v", entry, h)
			}
			if c.OnFRR {
				// FRR's layer, byte for byte: containerd stores it once for both images.
				layers, err := got.image.Layers()
				if err != nil {
					t.Fatal(err)
				}
				if d, err := layers[0].Digest(); err != nil || d != frrDigest {
					t.Errorf("base layer %s (%v), want FRR's %s", d, err, frrDigest)
				}
				for _, p := range []string{"usr/bin/vtysh", "usr/lib/frr/frr-reload.py", "usr/lib/frr/zebra"} {
					if files[p] == nil {
						t.Errorf("%s missing from the image", p)
					}
				}
			} else {
				for _, p := range []string{"etc/passwd", "etc/group", "tmp"} {
					if h := files[p]; h == nil || !h.ModTime.Equal(testMeta().Created) {
						t.Errorf("%s in the image: %+v", p, h)
					}
				}
			}

			listed, err := ctrd.importAndList(ctx, a.Path, a.Ref)
			if err != nil {
				t.Fatal(err)
			}
			if listed != a.Digest.String() {
				t.Errorf("containerd lists %s as %s, want %s", a.Ref, listed, a.Digest)
			}
		})
	}
}

// TestFRRImage makes the FRR image twice from the cached root file system (building that first if the cache
// has none: ~1.5-2.5 min once) and expects equal digests, a valid archive with FRR's daemons, vtysh and
// frr-reload.py in it, and a containerd that imports it.
func TestFRRImage(t *testing.T) {
	testreq.Commands(t, "mmdebstrap", "apt-cache")
	ctrd := startContainerd(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cacheBase, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	recipe := DefaultFRRRecipe(nil)
	if recipe.Sources, err = AptSourcesFor("/", recipe.Suite); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rf, err := RootfsCache{Dir: filepath.Join(cacheBase, "network-operator", "frr-rootfs")}.Get(ctx, recipe)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("root file system %s (built: %v, %.1f s), versions %v", rf.Path, rf.Built, time.Since(start).Seconds(), rf.Versions)

	const ref = "localhost/network-operator/frr:test"
	var archives [2]Archive
	for i := range archives {
		start := time.Now()
		img, err := FRRImage(rf)
		if err != nil {
			t.Fatal(err)
		}
		if archives[i], err = WriteArchive(ctx, filepath.Join(t.TempDir(), "frr.tar"), ref, img, time.Unix(rf.Recipe.Epoch, 0)); err != nil {
			t.Fatal(err)
		}
		t.Logf("image %d: %s, archive %d bytes, layers %v, %.1f s", i+1, archives[i].Digest, archives[i].Size,
			archives[i].Layers, time.Since(start).Seconds())
	}
	if archives[0].Digest != archives[1].Digest {
		t.Fatalf("one root file system gave digests %s and %s", archives[0].Digest, archives[1].Digest)
	}

	got := openArchive(t, archives[0].Path)
	cf, err := got.image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if v := cf.Config.Labels[LabelVersion]; v == "" || v != rf.Versions["frr"] {
		t.Errorf("version label %q, want FRR's %q", v, rf.Versions["frr"])
	}
	files := imageFiles(t, got.image)
	for _, p := range []string{"usr/lib/frr/zebra", "usr/lib/frr/bgpd", "usr/lib/frr/frr-reload.py", "usr/bin/vtysh"} {
		if h := files[p]; h == nil || h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
			t.Errorf("%s is not an executable file in the image: %+v", p, h)
		}
	}
	if h := files["usr/bin/python3"]; h == nil {
		t.Error("no python3 (frr-reload.py's interpreter) in the image")
	}
	for p := range files {
		if strings.HasPrefix(p, "dev/") {
			t.Errorf("device entry %s in the image", p)
		}
	}

	listed, err := ctrd.importAndList(ctx, archives[0].Path, ref)
	if err != nil {
		t.Fatal(err)
	}
	if listed != archives[0].Digest.String() {
		t.Errorf("containerd lists %s as %s, want %s", ref, listed, archives[0].Digest)
	}
}

// TestReadMeta stamps from this checkout: git's commit and commit time, or SOURCE_DATE_EPOCH.
func TestReadMeta(t *testing.T) {
	gitPath := testreq.Tools(t, "git")[0]
	ctx := t.Context()
	out, err := exec.CommandContext(ctx, gitPath, "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	head, ct, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	commitTime, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		epoch string
		want  int64
	}{
		{"", commitTime},
		{"1747699200", 1747699200},
	} {
		m, err := ReadMeta(ctx, "../../..", tt.epoch)
		if err != nil {
			t.Fatal(err)
		}
		if m.Revision != head || m.Version == "" || m.Created.Unix() != tt.want {
			t.Errorf("SOURCE_DATE_EPOCH=%q: %+v, want revision %s, created %d", tt.epoch, m, head, tt.want)
		}
	}
	if _, err := ReadMeta(ctx, "../../..", "yesterday"); err == nil {
		t.Error("ReadMeta accepted SOURCE_DATE_EPOCH=yesterday")
	}
}

// imageFiles lists the image's flattened file system by path (cleaned: "tmp", "usr/bin/vtysh").
func imageFiles(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("reading the image's file system: %v", err)
		}
		files[h.Name] = h
	}
}
