package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Merge puts t's rows into a table Markdown rendered before (e.g. docs/bench.md), for a run of some sections
// only: the rows of t's sections replace that section's rows where they were (a new section goes to the end),
// every other row stays as it was, t's notes replace the notes of the same section ("- <section>: ..."), and t's
// context lines replace earlier context lines that start like them (the measuring run's description, which
// differs from the full run's) or are added after the existing ones.
func Merge(existing string, t Table) (string, error) {
	old, err := parse(existing)
	if err != nil {
		return "", err
	}
	sections := map[string]bool{}
	var order []string
	fresh := map[string][][]string{}
	for _, c := range t.cells() {
		if !sections[c[0]] {
			sections[c[0]] = true
			order = append(order, c[0])
		}
		fresh[c[0]] = append(fresh[c[0]], c)
	}
	var rows [][]string
	placed := map[string]bool{}
	for _, row := range old.rows {
		sec := row[0]
		switch {
		case !sections[sec]:
			rows = append(rows, row)
		case !placed[sec]:
			rows = append(rows, fresh[sec]...)
			placed[sec] = true
		}
	}
	for _, sec := range order {
		if !placed[sec] {
			rows = append(rows, fresh[sec]...)
		}
	}
	context := slices.Clone(old.context)
	for _, c := range t.Context {
		key := contextKey(c)
		if i := slices.IndexFunc(context, func(o string) bool { return contextKey(o) == key }); i > 0 {
			context[i] = c // never the first line: it describes the full run
		} else {
			context = append(context, c)
		}
	}
	var notes []string
	for _, n := range old.notes {
		if sec, ok := noteSection(n); ok && sections[sec] {
			continue
		}
		notes = append(notes, n)
	}
	// The section notes before the general ones ("- Targets ..."), as a full run writes them.
	at := len(notes)
	for at > 0 {
		if _, ok := noteSection(notes[at-1]); ok {
			break
		}
		at--
	}
	var added []string
	for _, n := range t.Notes {
		if _, ok := noteSection(n); ok {
			added = append(added, n)
		}
	}
	notes = slices.Insert(notes, at, added...)
	return markdown(old.title, context, rows, notes), nil
}

// contextKey is what identifies a context line: its words up to the first colon.
func contextKey(line string) string {
	k, _, _ := strings.Cut(line, ":")
	return k
}

// noteSection returns the section a note describes ("- <section>: ...").
func noteSection(n string) (string, bool) {
	rest, ok := strings.CutPrefix(n, "- ")
	if !ok {
		return "", false
	}
	sec, _, ok := strings.Cut(rest, ": ")
	if !ok || strings.Contains(sec, ".") {
		return "", false
	}
	return sec, true
}

type parsed struct {
	title   string
	context []string
	rows    [][]string
	notes   []string
}

// parse reads what markdown wrote.
func parse(md string) (parsed, error) {
	var p parsed
	lines := strings.Split(strings.TrimRight(md, "\n"), "\n")
	i := 0
	if i < len(lines) && strings.HasPrefix(lines[i], "## ") {
		p.title = strings.TrimPrefix(lines[i], "## ")
		i++
	}
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "|"); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			p.context = append(p.context, lines[i])
		}
	}
	if i+1 >= len(lines) {
		return p, errors.New("merge: no table in the existing file")
	}
	if got := splitRow(lines[i]); !slices.Equal(got, header) {
		return p, fmt.Errorf("merge: table header %q, want %q", got, header)
	}
	for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		row := splitRow(lines[i])
		if len(row) != len(header) {
			return p, fmt.Errorf("merge: row %q has %d cells, want %d", lines[i], len(row), len(header))
		}
		p.rows = append(p.rows, row)
	}
	for ; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			p.notes = append(p.notes, lines[i])
		}
	}
	return p, nil
}

// splitRow splits "| a | b \| c |" into its trimmed cells, keeping escaped bars.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}
