package images

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// FRRName is the name of the FRR image; the Go images are named after their commands.
const FRRName = "frr"

// Names lists every image Build can make, in build order.
func Names() []string {
	var names []string
	for _, c := range Commands() {
		names = append(names, c.Name)
	}
	return append(names, FRRName)
}

// Options say where Build finds its inputs and puts the archives.
type Options struct {
	ModuleDir string // root of this module (Go images)
	OutDir    string // archives are written here as NAME.tar
	Repo      string // image names are REPO/NAME:TAG, e.g. localhost/network-operator/frr:TAG
	Tag       string // empty: Meta.Version
	Meta      Meta   // of the Go images; the FRR image has its own (see FRRImage)
	GoTool    string // empty: "go" from PATH
	// GoOverlay is go build's -overlay file for the Go images (empty: none): a build of other code from the same
	// tree, e.g. the end-to-end test's agent with a router compiled differently.
	GoOverlay string
	// Rootfs and FRRRecipe make the FRR image's root file system.
	Rootfs    RootfsCache
	FRRRecipe FRRRecipe
	Log       io.Writer // progress; nil discards it
}

// Built is one image Build wrote, and how long it took.
type Built struct {
	Archive
	Took time.Duration
}

// Build makes the named images (see Names) and writes each as an OCI archive.
func Build(ctx context.Context, o Options, names ...string) ([]Built, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.GoTool == "" {
		o.GoTool = "go"
	}
	tag := o.Tag
	if tag == "" {
		tag = o.Meta.Version
	}
	for _, n := range names {
		if !slices.Contains(Names(), n) {
			return nil, fmt.Errorf("unknown image %q (have %v)", n, Names())
		}
	}
	binDir, err := os.MkdirTemp("", "imagebuild-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binDir)

	var out []Built
	for _, n := range Names() {
		if !slices.Contains(names, n) {
			continue
		}
		start := time.Now()
		ref := o.Repo + "/" + n + ":" + tag
		fmt.Fprintf(o.Log, "imagebuild: %s\n", ref)
		img, mtime, err := o.image(ctx, n, binDir)
		if err != nil {
			return nil, err
		}
		a, err := WriteArchive(ctx, filepath.Join(o.OutDir, n+".tar"), ref, img, mtime)
		if err != nil {
			return nil, err
		}
		out = append(out, Built{Archive: a, Took: time.Since(start)})
	}
	return out, nil
}

// image makes one image and returns it with the time its archive's files get.
func (o Options) image(ctx context.Context, name, binDir string) (v1.Image, time.Time, error) {
	if name == FRRName {
		rf, err := o.rootfs(ctx, name)
		if err != nil {
			return nil, time.Time{}, err
		}
		img, err := FRRImage(rf)
		return img, time.Unix(rf.Recipe.Epoch, 0), err
	}
	i := slices.IndexFunc(Commands(), func(c Command) bool { return c.Name == name })
	c := Commands()[i]
	var base []Layer
	if c.OnFRR {
		rf, err := o.rootfs(ctx, name)
		if err != nil {
			return nil, time.Time{}, err
		}
		l, err := FRRLayer(rf)
		if err != nil {
			return nil, time.Time{}, err
		}
		base = append(base, l)
	}
	bin, err := BuildBinary(ctx, o.GoTool, o.ModuleDir, c, binDir, o.GoOverlay)
	if err != nil {
		return nil, time.Time{}, err
	}
	img, err := CommandImage(c, bin, o.Meta, base...)
	return img, o.Meta.Created, err
}

// NeedFRRRootfs reports whether building names needs FRR's root file system (and so Options.FRRRecipe).
func NeedFRRRootfs(names ...string) bool {
	for _, c := range Commands() {
		if c.OnFRR && slices.Contains(names, c.Name) {
			return true
		}
	}
	return slices.Contains(names, FRRName)
}

// rootfs gets FRR's root file system from the cache (building it the first time).
func (o Options) rootfs(ctx context.Context, image string) (Rootfs, error) {
	if o.FRRRecipe.Suite == "" || len(o.FRRRecipe.Sources) == 0 {
		return Rootfs{}, fmt.Errorf("image %s: no FRR recipe with apt sources (see DefaultFRRRecipe, AptSources)", image)
	}
	rf, err := o.Rootfs.Get(ctx, o.FRRRecipe)
	if err != nil {
		return Rootfs{}, err
	}
	if rf.Built {
		fmt.Fprintf(o.Log, "imagebuild: built root file system %s\n", rf.Path)
	} else {
		fmt.Fprintf(o.Log, "imagebuild: cached root file system %s\n", rf.Path)
	}
	return rf, nil
}
