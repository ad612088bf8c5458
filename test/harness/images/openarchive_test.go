package images

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Only the tests open archives again (the nodes' containerd imports them).

// unpackArchive unpacks an archive written by WriteArchive into dir (empty or missing) and opens its OCI layout.
func unpackArchive(ctx context.Context, archive, dir string) (v1.ImageIndex, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", archive, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rel := filepath.Clean(filepath.FromSlash(hdr.Name))
		if !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("%s: entry %q leaves the archive", archive, hdr.Name)
		}
		p := filepath.Join(dir, rel)
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = writeFile(p, tr)
		default:
			err = fmt.Errorf("entry %q: unexpected type %q", hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			return nil, fmt.Errorf("unpacking %s: %w", archive, err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: OCI layout: %w", archive, err)
	}
	return idx, nil
}

func writeFile(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
