// Package cdefine reads the integer #defines of a C header, so that Go can take the router's limits from
// bpf/router.h instead of repeating them.
package cdefine

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// defineRe matches `#define NAME VALUE` with an optional trailing /* comment */; function-like macros and
// defines without a value do not match.
var defineRe = regexp.MustCompile(`^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)\s+([^\s/(][^\s/]*)\s*(?:/\*.*\*/)?\s*$`)

// Parse returns the defines of src whose value is an integer literal (decimal, hex or octal, with an optional
// U/L suffix). Other defines are skipped: they are not limits Go could use.
func Parse(src []byte) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		m := defineRe.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimRight(m[2], "uUlL"), 0, 64)
		if err != nil {
			continue
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("line %d: %s defined twice", line, m[1])
		}
		out[m[1]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	return out, nil
}
