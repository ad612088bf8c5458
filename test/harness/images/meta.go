package images

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ReadMeta reads the version, commit and creation time of the images from the git checkout at dir. The
// creation time is sourceDateEpoch (the SOURCE_DATE_EPOCH convention: seconds since 1970) when set, else the
// commit time, never the clock: the same commit gives the same images.
func ReadMeta(ctx context.Context, dir, sourceDateEpoch string) (Meta, error) {
	var m Meta
	var err error
	if m.Revision, err = git(ctx, dir, "rev-parse", "HEAD"); err != nil {
		return Meta{}, err
	}
	if m.Version, err = git(ctx, dir, "describe", "--tags", "--always", "--dirty", "--abbrev=12"); err != nil {
		return Meta{}, err
	}
	epoch := sourceDateEpoch
	if epoch == "" {
		if epoch, err = git(ctx, dir, "log", "-1", "--format=%ct", "HEAD"); err != nil {
			return Meta{}, err
		}
	}
	if m.Created, err = ParseEpoch(epoch); err != nil {
		return Meta{}, err
	}
	return m, nil
}

// ParseEpoch parses a SOURCE_DATE_EPOCH value.
func ParseEpoch(s string) (time.Time, error) {
	sec, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(stdout.String()), nil
}
