// Command imagebuild writes the project's container images (operator, agent, FRR) as OCI archives for
// `ctr -n k8s.io images import`, without docker or a registry (`make images`; docs/images.md):
//
//	imagebuild [-out _out/images] [-repo localhost/network-operator] [-tag TAG] [-overlay FILE] [IMAGE...]
//	imagebuild -frr-root
//
// IMAGE is network-operator, network-agent or frr (default: all). Run it from the module root. The Go images
// are stamped from git (SOURCE_DATE_EPOCH overrides the commit time); the FRR image's root file system is
// built with mmdebstrap (root) and cached under the user cache directory. -frr-root builds no image: it prints
// the directory of that root file system unpacked (make frr-root), whose FRR the tests, the demo and the
// benchmarks run. All logic is in test/harness/images.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/network-operator/network-operator/test/harness/images"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "_out/images", "directory for the archives (NAME.tar)")
	repo := fs.String("repo", "localhost/network-operator", "image names are REPO/NAME:TAG")
	tag := fs.String("tag", "", "image tag (default: git describe --tags --always --dirty)")
	overlay := fs.String("overlay", "", "go build -overlay file for the Go images (files replaced for this build only)")
	cacheDir := fs.String("cache", "", "root file system cache (default: $XDG_CACHE_HOME or ~/.cache, /network-operator/frr-rootfs)")
	frrRoot := fs.Bool("frr-root", false, "print the FRR image's root file system unpacked (built and unpacked once, cached)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names := fs.Args()
	if len(names) == 0 {
		names = images.Names()
	}
	if *cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		*cacheDir = filepath.Join(base, "network-operator", "frr-rootfs")
	}
	moduleDir, err := os.Getwd()
	if err != nil {
		return err
	}
	if *frrRoot {
		sources, err := images.AptSourcesFor("/", images.FRRSuite)
		if err != nil {
			return err
		}
		cache := images.RootfsCache{Dir: *cacheDir, Log: stderr}
		rf, err := cache.Get(ctx, images.DefaultFRRRecipe(sources))
		if err != nil {
			return err
		}
		dir, err := cache.Unpacked(ctx, rf)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, dir)
		return nil
	}
	if _, err := os.Stat(filepath.Join(moduleDir, "go.mod")); err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}

	o := images.Options{
		ModuleDir: moduleDir,
		OutDir:    *out,
		Repo:      *repo,
		Tag:       *tag,
		GoOverlay: *overlay,
		Rootfs:    images.RootfsCache{Dir: *cacheDir, Log: stderr},
		Log:       stderr,
	}
	if o.Meta, err = images.ReadMeta(ctx, moduleDir, os.Getenv("SOURCE_DATE_EPOCH")); err != nil {
		return err
	}
	if images.NeedFRRRootfs(names...) {
		sources, err := images.AptSourcesFor("/", images.FRRSuite)
		if err != nil {
			return err
		}
		o.FRRRecipe = images.DefaultFRRRecipe(sources)
	}
	start := time.Now()
	built, err := images.Build(ctx, o, names...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%-16s %-71s %10s %8s  %s\n", "IMAGE", "DIGEST", "ARCHIVE", "TIME", "LAYERS (compressed)")
	for _, b := range built {
		layers := make([]string, len(b.Layers))
		for i, l := range b.Layers {
			layers[i] = mib(l)
		}
		fmt.Fprintf(stdout, "%-16s %-71s %10s %7.1fs  %s\n", filepath.Base(strings.TrimSuffix(b.Path, ".tar")),
			b.Digest, mib(b.Size), b.Took.Seconds(), strings.Join(layers, " + "))
	}
	for _, b := range built {
		fmt.Fprintf(stdout, "%s  %s\n", b.Path, b.Ref)
	}
	fmt.Fprintf(stdout, "built %d images in %.1f s; load with: ctr -n k8s.io images import %s/NAME.tar\n",
		len(built), time.Since(start).Seconds(), *out)
	return nil
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
}
