package images

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// AnnotationImageName is the index.json annotation containerd's import takes, verbatim, as the image name.
const AnnotationImageName = "io.containerd.image.name"

// Archive describes one written image archive.
type Archive struct {
	Path   string
	Ref    string  // the image name containerd lists after an import
	Digest v1.Hash // the manifest digest: what `ctr images ls` shows
	Size   int64   // bytes of the archive
	Layers []int64 // compressed size of each layer, base first
}

// WriteArchive writes img, named ref (a fully qualified tag such as "localhost/network-operator/frr:dev"), as
// an OCI image layout packed into the tar file path. go-containerregistry writes the layout; the tar around
// it has fixed times and order, so the archive is as reproducible as the image.
//
// An OCI layout rather than a `docker save` tarball: containerd imports the layout's manifest as it is, so the
// digest it lists is the one printed here; from a docker tarball it would write a manifest of its own.
func WriteArchive(ctx context.Context, path, ref string, img v1.Image, mtime time.Time) (Archive, error) {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return Archive{}, fmt.Errorf("image name %q (want registry/repository:tag): %w", ref, err)
	}
	a := Archive{Path: path, Ref: ref}
	if a.Digest, err = img.Digest(); err != nil {
		return Archive{}, fmt.Errorf("%s: digest: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return Archive{}, fmt.Errorf("%s: layers: %w", ref, err)
	}
	for _, l := range layers {
		size, err := l.Size()
		if err != nil {
			return Archive{}, fmt.Errorf("%s: layer size: %w", ref, err)
		}
		a.Layers = append(a.Layers, size)
	}

	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Archive{}, fmt.Errorf("archive directory: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".oci-layout-")
	if err != nil {
		return Archive{}, fmt.Errorf("temporary layout: %w", err)
	}
	defer os.RemoveAll(tmp)
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return Archive{}, fmt.Errorf("%s: OCI layout: %w", ref, err)
	}
	err = lp.AppendImage(img,
		layout.WithPlatform(v1.Platform{OS: OS, Architecture: Arch}),
		layout.WithAnnotations(map[string]string{
			AnnotationImageName:                 ref,
			"org.opencontainers.image.ref.name": tag.TagStr(),
		}))
	if err != nil {
		return Archive{}, fmt.Errorf("%s: writing OCI layout: %w", ref, err)
	}
	if err := ctx.Err(); err != nil {
		return Archive{}, err
	}
	if err := tarDir(ctx, tmp, path, mtime); err != nil {
		return Archive{}, fmt.Errorf("%s: %w", ref, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return Archive{}, err
	}
	a.Size = st.Size()
	return a, nil
}

// tarDir packs the files below dir into the tar file out (written beside it, then renamed): lexical order,
// root-owned, one mtime, so equal trees give equal archives.
func tarDir(ctx context.Context, dir, out string, mtime time.Time) (err error) {
	f, err := os.CreateTemp(filepath.Dir(out), ".archive-*.tar")
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	tw := tar.NewWriter(f)
	mtime = mtime.UTC().Truncate(time.Second)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Mode: 0o644, Typeflag: tar.TypeReg}
		switch {
		case d.IsDir():
			hdr.Name += "/"
			hdr.Mode = 0o755
			hdr.Typeflag = tar.TypeDir
			return tw.WriteHeader(hdr)
		case d.Type().IsRegular():
			src, err := os.Open(p)
			if err != nil {
				return err
			}
			defer src.Close()
			st, err := src.Stat()
			if err != nil {
				return err
			}
			hdr.Size = st.Size()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err = io.Copy(tw, src)
			return err
		default:
			return fmt.Errorf("%s: not a regular file or directory", rel)
		}
	})
	if err != nil {
		return fmt.Errorf("packing %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing archive: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing archive: %w", err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return nil
}

// ArchiveRef returns the image name an archive written by WriteArchive registers on import (its index's
// io.containerd.image.name annotation), reading only index.json.
func ArchiveRef(archive string) (string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%s: no index.json", archive)
		}
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", archive, err)
		}
		if path.Clean(hdr.Name) != "index.json" {
			continue
		}
		var idx struct {
			Manifests []struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(tr).Decode(&idx); err != nil {
			return "", fmt.Errorf("%s: index.json: %w", archive, err)
		}
		for _, m := range idx.Manifests {
			if ref := m.Annotations["io.containerd.image.name"]; ref != "" {
				return ref, nil
			}
		}
		return "", fmt.Errorf("%s: index.json names no image", archive)
	}
}
