package frr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/network-operator/network-operator/pkg/frr/frrdiff"
)

// Version is an FRR release (major.minor): the FRR a config is rendered for and diffed like.
type Version struct{ Major, Minor int }

// Shipped is the FRR of the project's FRR image (test/harness/images' recipe): Debian 13's 10.3. A zero Version
// means it.
func Shipped() Version { return Version{Major: 10, Minor: 3} }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// OrShipped is v, or Shipped for the zero Version.
func (v Version) OrShipped() Version {
	if v == (Version{}) {
		return Shipped()
	}
	return v
}

// ErrUnsupportedVersion: an FRR release this package was not built for. Supported and tested: FRR 8 (8.4,
// Debian 12: a host's own FRR) and FRR 10 (10.3, Debian 13: the FRR that ships).
var ErrUnsupportedVersion = errors.New("FRR release not supported")

// Check refuses a release this package neither renders for nor diffs like.
func (v Version) Check() error {
	if _, ok := v.OrShipped().Dialect(); !ok {
		return fmt.Errorf("%w: %s (supported: 8.x, 10.x)", ErrUnsupportedVersion, v)
	}
	return nil
}

// Dialect is the frr-reload.py the release ships, which frrdiff follows.
func (v Version) Dialect() (frrdiff.Dialect, bool) {
	switch v.OrShipped().Major {
	case 8:
		return frrdiff.FRR8, true
	case 10:
		return frrdiff.FRR10, true
	}
	return 0, false
}

// internetByName reports whether the release knows RFC 1997's community 0:0 by its name "internet": FRR 8
// takes and shows the name, FRR 10 refuses it and shows 0:0.
func (v Version) internetByName() bool { return v.OrShipped().Major < 10 }

var versionRe = regexp.MustCompile(`(?:^|FRRouting )(\d+)\.(\d+)`)

// ParseVersion reads a release: "10.3", "8.4.4", or vtysh's "show version" ("FRRouting 10.3 (node) on Linux").
func ParseVersion(s string) (Version, error) {
	m := versionRe.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("no FRR release in %q", headLine(s))
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err := errors.Join(err1, err2); err != nil {
		return Version{}, fmt.Errorf("FRR release in %q: %w", headLine(s), err)
	}
	return Version{Major: major, Minor: minor}, nil
}

func headLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
