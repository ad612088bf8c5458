package images

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// AptSources returns the machine's apt entries for suite and its pockets (suite-updates, suite-security, ...)
// from the apt configuration below root ("/" on a real machine), as one-line sources.list entries for
// mmdebstrap. A machine that reaches Debian through its own mirror or proxy builds from it; repositories of
// other suites (third-party ones) stay out of the image.
func AptSources(root, suite string) ([]string, error) {
	files := []string{filepath.Join(root, "etc/apt/sources.list")}
	for _, pattern := range []string{"*.list", "*.sources"} {
		m, err := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d", pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("apt sources: %w", err)
		}
		var lines []string
		if strings.HasSuffix(f, ".sources") {
			lines, err = deb822Sources(data, suite)
		} else {
			lines, err = oneLineSources(data, suite)
		}
		if err != nil {
			return nil, fmt.Errorf("apt sources %s: %w", f, err)
		}
		for _, l := range lines {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no apt source for suite %q in %s", suite, filepath.Join(root, "etc/apt"))
	}
	return out, nil
}

// AptSourcesFor returns apt entries for suite from the machine's apt configuration below root: its own entries
// for suite when it has them, else the entries of the machine's own release (VERSION_CODENAME in
// etc/os-release) pointed at suite, pockets included (bookworm-security becomes trixie-security). So the FRR
// image's newer Debian release comes from the mirror this machine already reaches, and never enters its
// own apt configuration.
func AptSourcesFor(root, suite string) ([]string, error) {
	if own, err := AptSources(root, suite); err == nil {
		return own, nil
	}
	host, err := codename(root)
	if err != nil {
		return nil, err
	}
	lines, err := AptSources(root, host)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		fields := strings.Fields(l)
		// deb [options] URI SUITE COMPONENT...: the suite follows the URI, after any bracketed options.
		i := 1
		if strings.HasPrefix(fields[i], "[") {
			for !strings.HasSuffix(fields[i], "]") {
				i++
			}
			i++
		}
		fields[i+1] = suite + strings.TrimPrefix(fields[i+1], host)
		out = append(out, strings.Join(fields, " "))
	}
	return out, nil
}

// codename is VERSION_CODENAME from root's etc/os-release.
func codename(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "etc/os-release"))
	if err != nil {
		return "", fmt.Errorf("apt sources: the machine's release: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION_CODENAME="); ok && strings.Trim(v, `"`) != "" {
			return strings.Trim(v, `"`), nil
		}
	}
	return "", fmt.Errorf("apt sources: no VERSION_CODENAME in %s", filepath.Join(root, "etc/os-release"))
}

func suiteMatches(s, suite string) bool {
	return s == suite || strings.HasPrefix(s, suite+"-") || strings.HasPrefix(s, suite+"/")
}

// oneLineSources parses the classic "deb [options] URI SUITE COMPONENT..." format.
func oneLineSources(data []byte, suite string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "deb" {
			continue // deb-src and blank lines
		}
		rest := fields[1:]
		var opts []string
		if len(rest) > 0 && strings.HasPrefix(rest[0], "[") {
			end := slices.IndexFunc(rest, func(f string) bool { return strings.HasSuffix(f, "]") })
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated [options]", n)
			}
			opts, rest = rest[:end+1], rest[end+1:]
		}
		if len(rest) < 2 {
			return nil, fmt.Errorf("line %d: want URI and suite", n)
		}
		if suiteMatches(rest[1], suite) {
			out = append(out, strings.Join(append(append([]string{"deb"}, opts...), rest...), " "))
		}
	}
	return out, sc.Err()
}

// deb822Option maps deb822 field names to one-line option names where they differ; the others are lowered.
func deb822Option(field string) string {
	switch strings.ToLower(field) {
	case "architectures":
		return "arch"
	case "languages":
		return "lang"
	case "targets":
		return "target"
	default:
		return strings.ToLower(field)
	}
}

// deb822Sources parses the deb822 ".sources" format: one stanza per blank-line separated paragraph.
func deb822Sources(data []byte, suite string) ([]string, error) {
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n\n") {
		fields, err := deb822Fields(para)
		if err != nil {
			return nil, err
		}
		if len(fields) == 0 || !slices.Contains(strings.Fields(fields["types"]), "deb") ||
			strings.EqualFold(strings.TrimSpace(fields["enabled"]), "no") {
			continue
		}
		var opts []string
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			switch k {
			case "types", "uris", "suites", "components", "enabled":
				continue
			}
			v := fields[k]
			if strings.Contains(v, "\n") {
				return nil, fmt.Errorf("field %s: an embedded key or multi-line value is not supported; use a file", k)
			}
			opts = append(opts, deb822Option(k)+"="+strings.Join(strings.Fields(v), ","))
		}
		optStr := ""
		if len(opts) > 0 {
			optStr = "[" + strings.Join(opts, " ") + "] "
		}
		comps := strings.Fields(fields["components"])
		for _, uri := range strings.Fields(fields["uris"]) {
			for _, s := range strings.Fields(fields["suites"]) {
				if suiteMatches(s, suite) {
					out = append(out, strings.TrimSpace("deb "+optStr+uri+" "+s+" "+strings.Join(comps, " ")))
				}
			}
		}
	}
	return out, nil
}

// deb822Fields reads one paragraph into lower-cased field names; continuation lines join with a newline.
func deb822Fields(para string) (map[string]string, error) {
	fields := map[string]string{}
	last := ""
	for _, line := range strings.Split(para, "\n") {
		switch {
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		case line[0] == ' ' || line[0] == '\t':
			if last == "" {
				return nil, fmt.Errorf("continuation line without a field: %q", line)
			}
			fields[last] += "\n" + strings.TrimSpace(line)
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("not a field: %q", line)
			}
			last = strings.ToLower(strings.TrimSpace(k))
			fields[last] = strings.TrimSpace(v)
		}
	}
	return fields, nil
}
