package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of a layer made from memory: a regular file, or a directory when Dir is set.
type File struct {
	Path string // relative to /, without a leading slash: "usr/local/bin/network-agent"
	Mode int64  // permission bits (and sticky bit), e.g. 0o755 or 0o1777
	UID  int
	GID  int
	Dir  bool
	Data []byte
}

// FilesLayer makes a layer of files, adding each missing parent directory (root-owned, 0755). Every header is
// fixed (owner, mtime, order), so equal files give an equal digest.
func FilesLayer(files []File, mtime time.Time) (v1.Layer, error) {
	data, err := filesTar(files, mtime)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer from %d files: %w", len(files), err)
	}
	return layer, nil
}

func filesTar(files []File, mtime time.Time) ([]byte, error) {
	byPath := make(map[string]File, len(files))
	for _, f := range files {
		p := path.Clean(f.Path)
		if p == "." || p == "/" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("layer file %q: want a relative path below /", f.Path)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("layer file %q given twice", p)
		}
		f.Path = p
		byPath[p] = f
	}
	for p := range byPath {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = File{Path: d, Mode: 0o755, Dir: true}
			}
		}
	}
	names := make([]string, 0, len(byPath))
	for p := range byPath {
		names = append(names, p)
	}
	sort.Strings(names) // a parent sorts before its children

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime = mtime.UTC().Truncate(time.Second)
	for _, p := range names {
		f := byPath[p]
		hdr := &tar.Header{
			Name:    p,
			Mode:    f.Mode,
			Uid:     f.UID,
			Gid:     f.GID,
			ModTime: mtime,
		}
		if f.Dir {
			if len(f.Data) > 0 {
				return nil, fmt.Errorf("layer directory %q has data", p)
			}
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		} else {
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar header %s: %w", p, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, fmt.Errorf("tar data %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing layer tar: %w", err)
	}
	return buf.Bytes(), nil
}
