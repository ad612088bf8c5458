// Package report renders the benchmark's single side-by-side table: figures next to their targets. Targets are
// shown, never asserted: a missed target is a finding for the reader, not a failure of the run.
package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Cmp says which side of a target's bound is good.
type Cmp int

const (
	// NoTarget marks a figure shown for reference (a floor, a limit, an input to a ratio).
	NoTarget Cmp = iota
	// AtMost is met when the value is <= the bound (costs, latencies).
	AtMost
	// AtLeast is met when the value is >= the bound (throughput ratios).
	AtLeast
)

// Target is the goal a figure is compared with.
type Target struct {
	Cmp   Cmp
	Bound float64
}

// Row is one measured figure. Err set means the figure could not be measured; the reason is shown instead.
type Row struct {
	Section string
	Name    string
	Value   float64
	Unit    string
	Detail  string
	Target  Target
	Err     error
}

// Status is the target column's verdict.
func (r Row) Status() string {
	switch {
	case r.Target.Cmp == NoTarget:
		return ""
	case r.Err != nil || math.IsNaN(r.Value):
		return "not measured"
	case r.Target.Cmp == AtMost && r.Value <= r.Target.Bound,
		r.Target.Cmp == AtLeast && r.Value >= r.Target.Bound:
		return "met"
	default:
		return "MISSED"
	}
}

func (r Row) result() string {
	if r.Err != nil {
		return "n/a: " + oneLine(r.Err.Error())
	}
	if math.IsNaN(r.Value) {
		return "n/a"
	}
	return formatValue(r.Value, r.Unit)
}

func (r Row) target() string {
	switch r.Target.Cmp {
	case AtMost:
		return "<= " + formatBound(r.Target.Bound, r.Unit)
	case AtLeast:
		return ">= " + formatBound(r.Target.Bound, r.Unit)
	}
	return ""
}

// formatValue keeps three significant digits, enough for figures that vary by a few percent between runs.
func formatValue(v float64, unit string) string {
	var s string
	switch a := math.Abs(v); {
	case a >= 100:
		s = fmt.Sprintf("%.0f", v)
	case a >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	switch unit {
	case "":
		return s
	case "x":
		return s + "x"
	}
	return s + " " + unit
}

// formatBound prints a target as written in the brief (60 ns, 1.5x), without padding zeros.
func formatBound(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	switch unit {
	case "":
		return s
	case "x":
		return s + "x"
	}
	return s + " " + unit
}

// Table is the whole benchmark result: a few context lines (machine, date, method) and the rows.
type Table struct {
	Title   string
	Context []string // lines above the table
	Rows    []Row
	Notes   []string // lines below the table (method, caveats)
}

// header is the table's first row.
var header = []string{"Area", "Measurement", "Result", "Target", "Status", "Notes"}

// cells are the table's rows as rendered cells (escaped), without the header.
func (t Table) cells() [][]string {
	var out [][]string
	for _, r := range t.Rows {
		out = append(out, []string{
			escape(r.Section), escape(r.Name), escape(r.result()), escape(r.target()), r.Status(), escape(r.Detail),
		})
	}
	return out
}

// Markdown renders the table with aligned columns so it reads well in a terminal too.
func (t Table) Markdown() string {
	return markdown(t.Title, t.Context, t.cells(), t.Notes)
}

func markdown(title string, context []string, rows [][]string, notes []string) string {
	cells := append([][]string{header}, rows...)
	widths := make([]int, len(header))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	if title != "" {
		fmt.Fprintf(&b, "## %s\n\n", title)
	}
	for _, c := range context {
		fmt.Fprintf(&b, "%s\n", c)
	}
	if len(context) > 0 {
		b.WriteString("\n")
	}
	writeRow(&b, cells[0], widths)
	sep := make([]string, len(widths))
	for i, w := range widths {
		sep[i] = strings.Repeat("-", max(w, 3))
	}
	writeRow(&b, sep, widths)
	for _, row := range cells[1:] {
		writeRow(&b, row, widths)
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "%s\n", n)
		}
	}
	return b.String()
}

func writeRow(b *strings.Builder, cells []string, widths []int) {
	b.WriteString("|")
	for i, c := range cells {
		fmt.Fprintf(b, " %s%s |", c, strings.Repeat(" ", max(widths[i], 3)-len([]rune(c))))
	}
	b.WriteString("\n")
}

func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}
