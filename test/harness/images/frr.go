package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sys/unix"
)

// FRRRecipe is how the FRR image's root file system is made with mmdebstrap. All of it goes into the cache key.
type FRRRecipe struct {
	Suite string `json:"suite"`
	// Packages are "name=version": pinned, so the recipe alone says what the image holds (and keys the cache).
	Packages []string `json:"packages"`
	Sources  []string `json:"sources"` // one-line apt entries, see AptSourcesFor
	// Epoch is mmdebstrap's SOURCE_DATE_EPOCH: file times after it are clamped to it, and it is the image's
	// creation time. Fixed rather than the commit time, so a new commit does not rebuild the root file system.
	Epoch int64 `json:"epoch"`
}

// frrEpoch is 2025-05-20T00:00:00Z, a fixed past date (see FRRRecipe.Epoch); changing it rebuilds the rootfs.
const frrEpoch = 1747699200

// FRRSuite is the Debian release the FRR image comes from.
const FRRSuite = "trixie"

// DefaultFRRRecipe is Debian 13's FRR 10.3 from the given sources: frr (zebra, bgpd, bfdd, mgmtd, vtysh),
// frr-pythontools (frr-reload.py) and the python3 it runs with, and iproute2 to look at the pod's network from
// inside.
func DefaultFRRRecipe(sources []string) FRRRecipe {
	return FRRRecipe{
		Suite: FRRSuite,
		Packages: []string{"frr=10.3-3+deb13u1", "frr-pythontools=10.3-3+deb13u1", "python3=3.13.5-1",
			"iproute2=6.15.0-1"},
		Sources: sources,
		Epoch:   frrEpoch,
	}
}

// pin splits a "name=version" package.
func pin(p string) (name, version string) {
	name, version, _ = strings.Cut(p, "=")
	return name, version
}

// names are the recipe's package names without their versions.
func (r FRRRecipe) names() []string {
	out := make([]string, len(r.Packages))
	for i, p := range r.Packages {
		out[i], _ = pin(p)
	}
	return out
}

// check refuses a recipe with a package not pinned to a version.
func (r FRRRecipe) check() error {
	for _, p := range r.Packages {
		if name, version := pin(p); name == "" || version == "" {
			return fmt.Errorf("FRR recipe: package %q is not pinned (want name=version)", p)
		}
	}
	return nil
}

// mmdebstrapArgs is the whole mmdebstrap command line for target.
func (r FRRRecipe) mmdebstrapArgs(target string) []string {
	args := []string{"--variant=apt", "--format=tar", "--include=" + strings.Join(r.Packages, ",")}
	// Documentation, manuals and translations are two thirds of the files and no use in a container; the
	// copyright files stay.
	for _, o := range []string{
		"path-exclude=/usr/share/man/*", "path-exclude=/usr/share/locale/*",
		"path-include=/usr/share/locale/locale.alias",
		"path-exclude=/usr/share/doc/*", "path-include=/usr/share/doc/*/copyright",
	} {
		args = append(args, "--dpkgopt="+o)
	}
	// mmdebstrap copies the host's resolver configuration and name in, which would make the output differ
	// between machines; the container runtime mounts its own over them.
	args = append(args, `--customize-hook=rm -f "$1/etc/resolv.conf" "$1/etc/hostname"`)
	args = append(args, r.Suite, target)
	return append(args, r.Sources...)
}

// RootfsCache keeps built root file systems in Dir (e.g. ~/.cache/network-operator/frr-rootfs), one
// directory per cache key: the recipe, the mmdebstrap version and the candidate versions of the recipe's
// packages in the machine's apt lists. A new package version in the archive (after `apt-get update`) or a
// changed recipe builds a new one; nothing else does.
type RootfsCache struct {
	Dir string
	Log io.Writer // mmdebstrap's progress; nil discards it
}

// Rootfs is a built root file system.
type Rootfs struct {
	Path     string            `json:"-"` // the tarball mmdebstrap wrote
	Key      string            `json:"key"`
	Recipe   FRRRecipe         `json:"recipe"`
	Versions map[string]string `json:"versions"` // installed version of each recipe package
	Built    bool              `json:"-"`        // built by this call rather than found
}

// rootfsKeyInput is what the cache key hashes; it is also written beside the tarball for people.
type rootfsKeyInput struct {
	Args       []string `json:"mmdebstrapArgs"`
	Epoch      int64    `json:"epoch"`
	Mmdebstrap string   `json:"mmdebstrapVersion"`
}

// Get returns the root file system for r, building it with mmdebstrap (as root: ~1.5-2.5 min) when the cache
// has none for its key. Concurrent callers wait for one build.
func (c RootfsCache) Get(ctx context.Context, r FRRRecipe) (Rootfs, error) {
	key, keyJSON, err := rootfsKey(ctx, r)
	if err != nil {
		return Rootfs{}, err
	}
	dir := filepath.Join(c.Dir, key[:16])
	if rf, err := readRootfs(dir); err == nil {
		return rf, nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return Rootfs{}, fmt.Errorf("rootfs cache: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(c.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return Rootfs{}, fmt.Errorf("rootfs cache lock: %w", err)
	}
	defer lock.Close() // releases the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return Rootfs{}, fmt.Errorf("rootfs cache lock: %w", err)
	}
	if rf, err := readRootfs(dir); err == nil {
		return rf, nil // built meanwhile by another caller
	}

	tmp, err := os.MkdirTemp(c.Dir, ".build-"+key[:16]+"-")
	if err != nil {
		return Rootfs{}, fmt.Errorf("rootfs cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	tarPath := filepath.Join(tmp, "rootfs.tar")
	cmd := exec.CommandContext(ctx, "mmdebstrap", r.mmdebstrapArgs(tarPath)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", r.Epoch))
	var tail bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &tail
	if c.Log != nil {
		cmd.Stderr = io.MultiWriter(c.Log, &tail)
	}
	if err := cmd.Run(); err != nil {
		return Rootfs{}, fmt.Errorf("mmdebstrap %s: %w\n%s", r.Suite, err, lastLines(tail.String(), 20))
	}
	versions, err := installedVersions(tarPath, r.names())
	if err != nil {
		return Rootfs{}, err
	}
	for _, p := range r.Packages {
		if name, want := pin(p); versions[name] != want {
			return Rootfs{}, fmt.Errorf("mmdebstrap %s: %s %s installed, the recipe pins %s", r.Suite, name, versions[name], want)
		}
	}
	rf := Rootfs{Key: key, Recipe: r, Versions: versions}
	meta, err := json.MarshalIndent(struct {
		Rootfs
		Input json.RawMessage `json:"keyInput"`
	}{rf, keyJSON}, "", "  ")
	if err != nil {
		return Rootfs{}, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "rootfs.json"), append(meta, '\n'), 0o644); err != nil {
		return Rootfs{}, fmt.Errorf("rootfs cache: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Rootfs{}, fmt.Errorf("rootfs cache: %w", err)
	}
	os.RemoveAll(dir) // a half-written entry from a crash
	if err := os.Rename(tmp, dir); err != nil {
		return Rootfs{}, fmt.Errorf("rootfs cache: %w", err)
	}
	rf.Path, rf.Built = filepath.Join(dir, "rootfs.tar"), true
	return rf, nil
}

// Unpacked returns the directory holding rf unpacked (a "root" beside its tarball), unpacking it once: the FRR
// that ships, for tests, the demo and the benchmarks to run chrooted (see frrproc.Tools).
func (c RootfsCache) Unpacked(ctx context.Context, rf Rootfs) (string, error) {
	dir := filepath.Join(filepath.Dir(rf.Path), "root")
	if _, err := os.Stat(filepath.Join(dir, "usr", "lib", "frr", "zebra")); err == nil {
		return dir, nil
	}
	lock, err := os.OpenFile(filepath.Join(c.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("rootfs cache lock: %w", err)
	}
	defer lock.Close() // releases the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", fmt.Errorf("rootfs cache lock: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "usr", "lib", "frr", "zebra")); err == nil {
		return dir, nil // unpacked meanwhile by another caller
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	// Device nodes stay out: whoever runs from the root binds the machine's /dev over it.
	out, err := exec.CommandContext(ctx, "tar", "-xf", rf.Path, "-C", tmp, "--numeric-owner", "--exclude=./dev/*").CombinedOutput()
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("unpack %s: %w: %s", rf.Path, err, out)
	}
	_ = os.RemoveAll(dir) // a half-written one from a crash
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("rootfs cache: %w", err)
	}
	return dir, nil
}

func readRootfs(dir string) (Rootfs, error) {
	data, err := os.ReadFile(filepath.Join(dir, "rootfs.json"))
	if err != nil {
		return Rootfs{}, err
	}
	var rf Rootfs
	if err := json.Unmarshal(data, &rf); err != nil {
		return Rootfs{}, fmt.Errorf("%s: %w", dir, err)
	}
	rf.Path = filepath.Join(dir, "rootfs.tar")
	if _, err := os.Stat(rf.Path); err != nil {
		return Rootfs{}, err
	}
	return rf, nil
}

func rootfsKey(ctx context.Context, r FRRRecipe) (string, []byte, error) {
	if err := r.check(); err != nil {
		return "", nil, err
	}
	ver, err := exec.CommandContext(ctx, "mmdebstrap", "--version").Output()
	if err != nil {
		return "", nil, fmt.Errorf("mmdebstrap --version: %w (install it: hack/install-deps.sh)", err)
	}
	in, err := json.Marshal(rootfsKeyInput{
		Args:       r.mmdebstrapArgs("TARGET"),
		Epoch:      r.Epoch,
		Mmdebstrap: strings.TrimSpace(string(ver)),
	})
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(in)
	return hex.EncodeToString(sum[:]), in, nil
}

// installedVersions reads the versions of packages from the dpkg status file in a rootfs tarball.
func installedVersions(tarPath string, packages []string) (map[string]string, error) {
	f, err := os.Open(tarPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no var/lib/dpkg/status", tarPath)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", tarPath, err)
		}
		if cleanName(hdr.Name) != "var/lib/dpkg/status" {
			continue
		}
		status, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", tarPath, err)
		}
		return dpkgVersions(status, packages)
	}
}

// dpkgVersions picks the installed version of each package from a dpkg status file.
func dpkgVersions(status []byte, packages []string) (map[string]string, error) {
	out := map[string]string{}
	for _, para := range strings.Split(string(status), "\n\n") {
		fields, err := deb822Fields(para)
		if err != nil {
			return nil, fmt.Errorf("dpkg status: %w", err)
		}
		if p := fields["package"]; slices.Contains(packages, p) && strings.HasSuffix(fields["status"], " installed") {
			out[p] = fields["version"]
		}
	}
	for _, p := range packages {
		if out[p] == "" {
			return nil, fmt.Errorf("dpkg status: %s is not installed", p)
		}
	}
	return out, nil
}

func cleanName(name string) string {
	n := path.Clean("/" + name)
	return strings.TrimPrefix(n, "/")
}

// RootfsLayer makes a layer of an mmdebstrap tarball, streamed through a filter: no /dev entries (the runtime
// provides /dev; device nodes in a layer need root to unpack), no "./" prefixes and no root entry, file times
// clamped to clamp. Compressed once and kept in memory (~70 MB), as the digest and the write both need it.
func RootfsLayer(tarPath string, clamp time.Time) (v1.Layer, error) {
	opener := func() (io.ReadCloser, error) {
		f, err := os.Open(tarPath)
		if err != nil {
			return nil, err
		}
		pr, pw := io.Pipe()
		go func() {
			pw.CloseWithError(filterRootfs(f, pw, clamp))
			f.Close()
		}()
		return pr, nil
	}
	layer, err := tarball.LayerFromOpener(opener, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("layer from %s: %w", tarPath, err)
	}
	return layer, nil
}

func filterRootfs(r io.Reader, w io.Writer, clamp time.Time) error {
	tr := tar.NewReader(r)
	tw := tar.NewWriter(w)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading rootfs: %w", err)
		}
		name := cleanName(hdr.Name)
		if name == "" || strings.HasPrefix(name, "dev/") {
			continue
		}
		if hdr.Typeflag == tar.TypeDir {
			name += "/"
		}
		hdr.Name = name
		if hdr.Typeflag == tar.TypeLink {
			hdr.Linkname = cleanName(hdr.Linkname)
		}
		if hdr.ModTime.After(clamp) {
			hdr.ModTime = clamp
		}
		// Access and change times say when the build ran.
		hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
		delete(hdr.PAXRecords, "atime")
		delete(hdr.PAXRecords, "ctime")
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("rootfs entry %s: %w", name, err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return fmt.Errorf("rootfs entry %s: %w", name, err)
		}
	}
	return tw.Close()
}

// FRRImage makes the FRR image from a root file system. It depends on nothing else (no commit, no clock): its
// version label is FRR's package version and its creation time the recipe's epoch, so the same rootfs gives
// the same digest on any commit. No entrypoint: the pod names the daemons it runs (zebra, bgpd, ...).
func FRRImage(rf Rootfs) (v1.Image, error) {
	created := time.Unix(rf.Recipe.Epoch, 0).UTC()
	layer, err := FRRLayer(rf)
	if err != nil {
		return nil, fmt.Errorf("image frr: %w", err)
	}
	return NewImage(Spec{
		Title: "frr",
		Labels: map[string]string{
			"org.opencontainers.image.description": fmt.Sprintf("Debian %s FRR %s with frr-reload.py (%s)",
				rf.Recipe.Suite, rf.Versions["frr"], strings.Join(rf.Recipe.Packages, ", ")),
		},
	}, Meta{Version: rf.Versions["frr"], Created: created},
		layer)
}

// FRRLayer is the root file system as a layer: the same bytes (and digest) in every image built on it.
func FRRLayer(rf Rootfs) (Layer, error) {
	l, err := RootfsLayer(rf.Path, time.Unix(rf.Recipe.Epoch, 0).UTC())
	if err != nil {
		return Layer{}, err
	}
	return Layer{Layer: l, CreatedBy: "mmdebstrap --variant=apt --include=" + strings.Join(rf.Recipe.Packages, ",") +
		" " + rf.Recipe.Suite}, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
