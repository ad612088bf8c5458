package report

import (
	"errors"
	"strings"
	"testing"
)

// TestMerge: a run of some sections replaces their rows, notes and run description in the table a full run
// wrote; the other sections' rows and notes stay, byte for byte, and the result is what a full run with the
// same rows would write.
func TestMerge(t *testing.T) {
	row := func(sec, name string, v float64) Row {
		return Row{Section: sec, Name: name, Value: v, Unit: "ms", Detail: "a | b", Target: Target{AtMost, 10}}
	}
	full := Table{Title: "bench", Context: []string{"Measured 2026-01-01 10:00 UTC, full run. Regenerate with `make bench`."},
		Rows:  []Row{row("alpha", "a1", 1), row("beta", "b1", 2), row("beta", "b2", 3), row("gamma", "g1", 4)},
		Notes: []string{"- alpha: how alpha is measured.", "- beta: how beta is measured.", "- gamma: gamma.", "- Targets are goals."}}
	part := Table{Context: []string{"beta rows: measured 2026-01-02, -only beta."},
		Rows:  []Row{row("beta", "b1", 20), row("beta", "b3", 30), {Section: "beta", Name: "b4", Err: errors.New("x | y")}},
		Notes: []string{"- beta: how beta is measured now.", "- Targets are goals."}}
	got, err := Merge(full.Markdown(), part)
	if err != nil {
		t.Fatal(err)
	}
	want := Table{Title: full.Title, Context: append(full.Context, part.Context...),
		Rows:  []Row{full.Rows[0], part.Rows[0], part.Rows[1], part.Rows[2], full.Rows[3]},
		Notes: []string{"- alpha: how alpha is measured.", "- gamma: gamma.", "- beta: how beta is measured now.", "- Targets are goals."}}
	if got != want.Markdown() {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want.Markdown())
	}
	// Again, with a new run of beta and a new section: beta's description is replaced, delta goes to the end.
	again := Table{Context: []string{"beta rows: measured 2026-01-03, -only beta,delta."},
		Rows: []Row{row("beta", "b1", 21), row("delta", "d1", 5)}, Notes: []string{"- delta: delta.", "- beta: beta again."}}
	got, err = Merge(got, again)
	if err != nil {
		t.Fatal(err)
	}
	want = Table{Title: full.Title, Context: append(full.Context, again.Context...),
		Rows:  []Row{full.Rows[0], again.Rows[0], full.Rows[3], again.Rows[1]},
		Notes: []string{"- alpha: how alpha is measured.", "- gamma: gamma.", "- delta: delta.", "- beta: beta again.", "- Targets are goals."}}
	if got != want.Markdown() {
		t.Errorf("merged again:\n%s\nwant:\n%s", got, want.Markdown())
	}
	if _, err := Merge("## bench\n\nno table here\n", part); err == nil || !strings.Contains(err.Error(), "no table") {
		t.Errorf("merge into a file without a table: %v", err)
	}
}
