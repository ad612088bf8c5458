// Package images builds the project's container images (operator, agent, FRR) as OCI image archives that
// `ctr images import` loads, without docker and without a registry. The same inputs give the same digest: file
// times, owners and order, the creation time and the labels are fixed by the inputs, never by the clock.
//
// go-containerregistry does everything of the image format (layers, config, manifest, OCI layout); this package
// only decides what goes into the images and packs the finished layout directory into one tar file.
package images

import (
	"fmt"
	"maps"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The one platform the images are built for.
const (
	OS   = "linux"
	Arch = "amd64"
)

// OCI annotation keys used as labels.
const (
	LabelTitle    = "org.opencontainers.image.title"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelCreated  = "org.opencontainers.image.created"
)

// Meta says where an image comes from. It becomes labels and the image's creation time, so it must not
// depend on the clock.
type Meta struct {
	Version  string    // e.g. `git describe --tags --always --dirty`
	Revision string    // the full commit hash
	Created  time.Time // SOURCE_DATE_EPOCH, or the commit time
}

// Spec is what a container of the image runs.
type Spec struct {
	Title      string
	Entrypoint []string
	Cmd        []string
	User       string // "uid:gid"; empty runs as root
	Env        []string
	Labels     map[string]string // beyond the ones made from Meta
}

// Layer is one layer and the history line that describes it.
type Layer struct {
	Layer     v1.Layer
	CreatedBy string
}

// defaultPath is the PATH of every image: the agent finds vtysh and frr-reload.py through it, FRR its tools.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// NewImage stacks layers on an empty base and sets the config: OCI media types, linux/amd64, the spec, labels
// from meta, and meta.Created as the creation time of the image and of every history entry.
func NewImage(spec Spec, meta Meta, layers ...Layer) (v1.Image, error) {
	if meta.Created.IsZero() {
		return nil, fmt.Errorf("image %s: no creation time (SOURCE_DATE_EPOCH or the commit time)", spec.Title)
	}
	created := v1.Time{Time: meta.Created.UTC()}
	labels := map[string]string{LabelCreated: created.Format(time.RFC3339)}
	for k, v := range map[string]string{LabelTitle: spec.Title, LabelVersion: meta.Version, LabelRevision: meta.Revision} {
		if v != "" {
			labels[k] = v
		}
	}
	maps.Copy(labels, spec.Labels)
	env := spec.Env
	if len(env) == 0 {
		env = []string{defaultPath}
	}

	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	base, err := mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: Arch,
		OS:           OS,
		Created:      created,
		Config: v1.Config{
			Entrypoint: spec.Entrypoint,
			Cmd:        spec.Cmd,
			User:       spec.User,
			Env:        env,
			WorkingDir: "/",
			Labels:     labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", spec.Title, err)
	}
	adds := make([]mutate.Addendum, len(layers))
	for i, l := range layers {
		adds[i] = mutate.Addendum{
			Layer:     l.Layer,
			History:   v1.History{Created: created, CreatedBy: l.CreatedBy},
			MediaType: types.OCILayer,
		}
	}
	img, err := mutate.Append(base, adds...)
	if err != nil {
		return nil, fmt.Errorf("image %s: appending %d layers: %w", spec.Title, len(layers), err)
	}
	return img, nil
}
