package images

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Command is a Go command of this module that gets an image of its own: the static binary on an empty base.
type Command struct {
	Name    string // binary and image name
	Package string // package path relative to the module root
	User    string // "uid:gid" it runs as
	// OnFRR puts the binary on FRR's root file system (the FRR image's very layer, stored once by containerd)
	// instead of the empty base: the agent runs vtysh, frr-reload.py and scratch daemons next to FRR's sockets.
	OnFRR bool
}

// NonRootUser is the operator's user: it needs no privileges, and 65532 is the usual "nonroot" of static images.
const NonRootUser = "65532:65532"

// Commands are the project's Go images.
func Commands() []Command {
	return []Command{
		{Name: "network-operator", Package: "./cmd/network-operator", User: NonRootUser},
		// Root: the agent loads BPF programs, writes routes and talks to FRR's sockets.
		{Name: "network-agent", Package: "./cmd/network-agent", User: "0:0", OnFRR: true},
		// The sandbox image of the test nodes' pods (test/harness/kubenodes): no registry to pull one from.
		{Name: "pause", Package: "./test/harness/kubenodes/pause", User: "65535:65535"},
	}
}

// BuildBinary compiles c in the module at moduleDir with the go tool at goTool into outDir and returns the
// binary's path. The same source and toolchain give the same bytes. overlay, when set, is go build's -overlay
// file: it replaces files of the module (an embedded BPF object, say) for this build only.
func BuildBinary(ctx context.Context, goTool, moduleDir string, c Command, outDir, overlay string) (string, error) {
	out := filepath.Join(outDir, c.Name)
	// Fixed flags: no paths, no VCS stamp, no symbol tables, no build ID.
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, goTool, append(args, c.Package)...)
	cmd.Dir = moduleDir
	// Pin what else changes a binary's bytes, so the caller's GOFLAGS or GOAMD64 cannot: static (no cgo),
	// linux/amd64 at the baseline ISA level.
	cmd.Env = append(os.Environ(),
		"CGO_ENABLED=0", "GOOS="+OS, "GOARCH="+Arch, "GOAMD64=v1", "GOFLAGS=", "GOEXPERIMENT=")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", c.Package, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// binDir is where a command's binary lives in its image.
const binDir = "usr/local/bin"

// CommandImage makes c's image from its binary: a base layer (users, /tmp; or, with base, that layer) and a
// layer with the binary.
func CommandImage(c Command, binary string, meta Meta, base ...Layer) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", c.Name, err)
	}
	baseLayer := Layer{CreatedBy: "network-operator imagebuild: /etc/passwd, /etc/group, /tmp"}
	if len(base) > 0 {
		baseLayer = base[0]
	} else if baseLayer.Layer, err = FilesLayer(baseFiles(), meta.Created); err != nil {
		return nil, fmt.Errorf("image %s: base layer: %w", c.Name, err)
	}
	app, err := FilesLayer([]File{{Path: binDir + "/" + c.Name, Mode: 0o755, Data: data}}, meta.Created)
	if err != nil {
		return nil, fmt.Errorf("image %s: binary layer: %w", c.Name, err)
	}
	return NewImage(Spec{
		Title:      c.Name,
		Entrypoint: []string{"/" + binDir + "/" + c.Name},
		User:       c.User,
	}, meta,
		baseLayer,
		Layer{Layer: app, CreatedBy: "network-operator imagebuild: go build " + c.Package})
}

// baseFiles are what a static Go binary needs around it: names for root and the non-root user (user lookups,
// tools in a debug container) and a writable /tmp (controller-runtime's default webhook certificate dir).
// No CA certificates: the binaries talk to the API server with the service account's CA.
func baseFiles() []File {
	return []File{
		{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{Path: "home/nonroot", Mode: 0o700, UID: 65532, GID: 65532, Dir: true},
		{Path: "root", Mode: 0o700, Dir: true},
		{Path: "tmp", Mode: 0o1777, Dir: true},
	}
}
