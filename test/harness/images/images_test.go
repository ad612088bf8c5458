package images

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// testMeta is what the tests stamp images with instead of git's answers.
func testMeta() Meta {
	return Meta{Version: "v0.0.0-test", Revision: strings.Repeat("ab", 20), Created: time.Unix(1700000000, 0).UTC()}
}

func TestFilesLayer(t *testing.T) {
	bin := File{Path: "usr/local/bin/app", Mode: 0o755, Data: []byte("binary")}
	tmp := File{Path: "tmp", Mode: 0o1777, Dir: true}
	passwd := File{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0::/:/sbin/nologin\n")}
	digest := func(t *testing.T, files []File, mtime time.Time) v1.Hash {
		t.Helper()
		l, err := FilesLayer(files, mtime)
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ref := digest(t, []File{bin, tmp, passwd}, testMeta().Created)
	tests := []struct {
		name  string
		files []File
		mtime time.Time
		same  bool
	}{
		{name: "another order", files: []File{passwd, tmp, bin}, mtime: testMeta().Created, same: true},
		{name: "sub-second time", files: []File{bin, tmp, passwd}, mtime: testMeta().Created.Add(time.Millisecond), same: true},
		{name: "another time", files: []File{bin, tmp, passwd}, mtime: testMeta().Created.Add(time.Second)},
		{name: "another mode", files: []File{{Path: bin.Path, Mode: 0o700, Data: bin.Data}, tmp, passwd}, mtime: testMeta().Created},
		{name: "another owner", files: []File{bin, {Path: "tmp", Mode: 0o1777, UID: 1, Dir: true}, passwd}, mtime: testMeta().Created},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := digest(t, tt.files, tt.mtime); (got == ref) != tt.same {
				t.Errorf("digest %s vs %s: same=%v, want %v", got, ref, got == ref, tt.same)
			}
		})
	}

	t.Run("entries", func(t *testing.T) {
		data, err := filesTar([]File{bin, tmp}, testMeta().Created)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %o %d:%d %s", h.Name, h.Mode, h.Uid, h.Gid, h.ModTime.UTC().Format(time.RFC3339)))
		}
		want := []string{
			"tmp/ 1777 0:0 2023-11-14T22:13:20Z",
			"usr/ 755 0:0 2023-11-14T22:13:20Z",
			"usr/local/ 755 0:0 2023-11-14T22:13:20Z",
			"usr/local/bin/ 755 0:0 2023-11-14T22:13:20Z",
			"usr/local/bin/app 755 0:0 2023-11-14T22:13:20Z",
		}
		if !slices.Equal(got, want) {
			t.Errorf("entries\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	for _, bad := range []struct {
		name  string
		files []File
		err   string
	}{
		{"absolute", []File{{Path: "/etc/passwd"}}, "relative path"},
		{"outside", []File{{Path: "../x"}}, "relative path"},
		{"twice", []File{passwd, passwd}, "given twice"},
		{"directory with data", []File{{Path: "d", Dir: true, Data: []byte("x")}}, "has data"},
	} {
		t.Run("refuses "+bad.name, func(t *testing.T) {
			if _, err := FilesLayer(bad.files, testMeta().Created); err == nil || !strings.Contains(err.Error(), bad.err) {
				t.Fatalf("error %v, want %q", err, bad.err)
			}
		})
	}
}

// TestWriteArchive writes a small image twice and reads it back: equal bytes, a valid OCI layout, the name
// containerd imports it as, and the config that NewImage set.
func TestWriteArchive(t *testing.T) {
	ctx := t.Context()
	layer, err := FilesLayer(append(baseFiles(), File{Path: "usr/local/bin/app", Mode: 0o755, Data: []byte("x")}), testMeta().Created)
	if err != nil {
		t.Fatal(err)
	}
	img, err := NewImage(Spec{Title: "app", Entrypoint: []string{"/usr/local/bin/app"}, User: NonRootUser}, testMeta(),
		Layer{Layer: layer, CreatedBy: "test"})
	if err != nil {
		t.Fatal(err)
	}
	const ref = "localhost/network-operator/app:v0.0.0-test"
	var archives [2]Archive
	for i := range archives {
		if archives[i], err = WriteArchive(ctx, filepath.Join(t.TempDir(), "app.tar"), ref, img, testMeta().Created); err != nil {
			t.Fatal(err)
		}
	}
	a, b := readFile(t, archives[0].Path), readFile(t, archives[1].Path)
	if !bytes.Equal(a, b) {
		t.Fatal("two archives of one image differ")
	}
	if archives[0].Size != int64(len(a)) || len(archives[0].Layers) != 1 {
		t.Errorf("archive %+v: size or layers wrong (file has %d bytes)", archives[0], len(a))
	}

	got := openArchive(t, archives[0].Path)
	if got.ref != ref || got.digest != archives[0].Digest {
		t.Errorf("archive names %s %s, want %s %s", got.ref, got.digest, ref, archives[0].Digest)
	}
	cf, err := got.image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != OS || cf.Architecture != Arch || !cf.Created.Equal(testMeta().Created) ||
		!slices.Equal(cf.Config.Entrypoint, []string{"/usr/local/bin/app"}) || cf.Config.User != NonRootUser ||
		cf.Config.Labels[LabelRevision] != testMeta().Revision || cf.Config.Labels[LabelVersion] != testMeta().Version ||
		cf.Config.Labels[LabelCreated] != "2023-11-14T22:13:20Z" {
		t.Errorf("config %+v", cf)
	}
	if len(cf.History) != 1 || !cf.History[0].Created.Equal(testMeta().Created) {
		t.Errorf("history %+v", cf.History)
	}

	for _, bad := range []string{"app:latest", "localhost/app", "Localhost/APP:x"} {
		if _, err := WriteArchive(ctx, filepath.Join(t.TempDir(), "x.tar"), bad, img, testMeta().Created); err == nil {
			t.Errorf("WriteArchive accepted image name %q", bad)
		}
	}
}

func TestParseEpoch(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1747699200", 1747699200, true},
		{" 0\n", 0, true},
		{"-1", 0, false},
		{"2025-05-20", 0, false},
		{"", 0, false},
	} {
		got, err := ParseEpoch(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got.Unix() != tt.want) {
			t.Errorf("ParseEpoch(%q) = %v, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// openedArchive is an archive read back: the one image in it, its digest and the name containerd gives it.
type openedArchive struct {
	image  v1.Image
	digest v1.Hash
	ref    string
}

// openArchive unpacks an archive, validates its layout and every blob with go-containerregistry's validate
// (digests, sizes, diff IDs, layer contents), and returns its one image.
func openArchive(t *testing.T, path string) openedArchive {
	t.Helper()
	idx, err := unpackArchive(context.Background(), path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("%s: %d manifests, want 1", path, len(im.Manifests))
	}
	desc := im.Manifests[0]
	if desc.Platform == nil || desc.Platform.OS != OS || desc.Platform.Architecture != Arch {
		t.Errorf("%s: platform %v", path, desc.Platform)
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return openedArchive{image: img, digest: desc.Digest, ref: desc.Annotations[AnnotationImageName]}
}
