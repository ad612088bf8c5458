// Package golden compares a test's output with a file under testdata/, and rewrites the file instead when the
// test runs with -update (go test ./pkg/x -run TestY -update). One flag and one message for the whole project.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that imports this package.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")

// Updating reports whether this run rewrites golden files (-update).
func Updating() bool { return *update }

// Assert fails tb when got differs from the file at path, showing the lines that differ; with -update it writes
// got to path instead (creating the directory).
func Assert(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(got) != string(want) {
		tb.Errorf("output differs from %s (check it, then run the test with -update):\n%s", path, LineDiff(string(want), string(got)))
	}
}

// LineDiff lists the lines that differ, by number, up to about 2000 bytes.
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
			if b.Len() > 2000 {
				b.WriteString("...\n")
				break
			}
		}
	}
	return b.String()
}
