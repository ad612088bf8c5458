package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n  want: b\n  got:  c\n"},
		{"a\n", "a\nb\n", "line 2:\n  want: \n  got:  b\n"},
	} {
		if d := LineDiff(tc.want, tc.got); d != tc.diff {
			t.Errorf("LineDiff(%q, %q) = %q, want %q", tc.want, tc.got, d, tc.diff)
		}
	}
	if d := LineDiff(strings.Repeat("x\n", 500), strings.Repeat("y\n", 500)); !strings.HasSuffix(d, "...\n") || len(d) > 2200 {
		t.Errorf("a long diff is not cut: %d bytes", len(d))
	}
}

func TestAssertMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Assert(t, path, []byte("same\n"))
}
