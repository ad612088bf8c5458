package frrdiff

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
)

// appendConfigLines is frr-reload.py's lines_to_config: it appends the entry as it would appear in frr.conf,
// each context line indented by its depth, a deletion in its "no" form (a "no ..." line deleted by dropping the
// "no").
func appendConfigLines(out []string, e Entry, deletion bool) []string {
	if e.Line != "" {
		for i, k := range e.Keys {
			out = append(out, indent(i)+k)
		}
		return append(out, indent(len(e.Keys))+flip(strings.TrimLeft(e.Line, " \t"), deletion))
	}
	last := len(e.Keys) - 1
	for i, k := range e.Keys[:last] {
		out = append(out, indent(i)+k)
	}
	return append(out, indent(last)+flip(e.Keys[last], deletion))
}

// spaces are the indentations of configs (FRR's blocks nest three deep).
const spaces = "                "

// indent is n spaces, without allocating for the usual depths.
func indent(n int) string {
	if n <= len(spaces) {
		return spaces[:n]
	}
	return strings.Repeat(" ", n)
}

// flip returns a command, or for a deletion its "no" form.
func flip(cmd string, deletion bool) string {
	switch {
	case !deletion:
		return cmd
	case strings.HasPrefix(cmd, "no "):
		return cmd[3:]
	default:
		return "no " + cmd
	}
}

// Listing returns the delta as "frr-reload.py --test" prints it under "Lines To Delete" and "Lines To Add",
// one line per element, trailing blanks removed.
func (d Delta) Listing() (del, add []string) {
	list := func(es []Entry, deletion bool) []string {
		n := 0
		for _, e := range es {
			switch e.Line {
			case "!":
			case "":
				n += len(e.Keys)
			default:
				n += len(e.Keys) + 1
			}
		}
		out := make([]string, 0, n)
		for _, e := range es {
			if e.Line == "!" {
				continue
			}
			first := len(out)
			out = appendConfigLines(out, e, deletion)
			for i := first; i < len(out); i++ {
				out[i] = strings.TrimRight(out[i], " ")
			}
		}
		return out
	}
	return list(d.Delete, true), list(d.Add, false)
}

// step is one command of a script: run cmd inside the contexts path; opens says cmd opens a block (path plus
// cmd is where vtysh is afterwards).
type step struct {
	path  []string
	cmd   string
	opens bool
}

// Script returns the vtysh command file (for "vtysh -f") that applies d in one run. Every deletion runs before
// any addition: first the lines deleted from blocks, then whole blocks in frr-reload.py's order (the default BGP
// instance after the VRF instances; a VRF instance only after the "import vrf" lines that keep it), then the
// entries frr-reload.py deletes by "no" additions (a prefix-list entry is deleted by its sequence number, so the
// old entry must go before the new one with the same number arrives). Additions follow in frr-reload.py's order,
// except that VRF blocks come first: zebra must know a VRF's VNI before BGP uses it (frr-reload.py's own file
// loses that order, which pkg/frr worked around by adding new VRF blocks beforehand). Each command is written
// inside its blocks, and every block is left with the exit line FRR writes for it, so vtysh never has to guess
// from a command which block it belongs to.
func (d Delta) Script() []byte {
	steps := make([]step, 0, len(d.Delete)+len(d.Add))
	lineDels := slices.DeleteFunc(slices.Clone(d.Delete), func(e Entry) bool { return e.Line == "" })
	groups := peerGroups(lineDels)
	slices.SortStableFunc(lineDels, func(a, b Entry) int { return neighborRank(a, groups) - neighborRank(b, groups) })
	for _, e := range lineDels {
		steps = append(steps, step{path: e.Keys, cmd: flip(strings.TrimLeft(e.Line, " \t"), true)})
	}
	for _, e := range d.Delete {
		if e.Line == "" {
			steps = append(steps, step{path: e.Keys[:len(e.Keys)-1], cmd: flip(e.Keys[len(e.Keys)-1], true)})
		}
	}
	addStep := func(e Entry) step {
		if e.Line != "" {
			return step{path: e.Keys, cmd: strings.TrimLeft(e.Line, " \t")}
		}
		last := len(e.Keys) - 1
		return step{path: e.Keys[:last], cmd: e.Keys[last], opens: blockKeyword(e.Keys) != nil}
	}
	isVRF := func(e Entry) bool { return strings.HasPrefix(e.Keys[0], "vrf ") }
	for _, pass := range []func(Entry) bool{
		func(e Entry) bool { return e.moved },
		func(e Entry) bool { return !e.moved && !e.exit && isVRF(e) },
		func(e Entry) bool { return !e.moved && !e.exit && !isVRF(e) },
	} {
		for _, e := range d.Add {
			if pass(e) && e.Line != "!" {
				steps = append(steps, addStep(e))
			}
		}
	}
	// Twice: to size the buffer (a script can be a megabyte), then to write it.
	size := 0
	writeSteps(steps, func(depth int, text string) { size += depth + len(text) + 1 })
	b := bytes.NewBuffer(make([]byte, 0, size))
	writeSteps(steps, func(depth int, text string) {
		b.WriteString(indent(depth))
		b.WriteString(text)
		b.WriteByte('\n')
	})
	return b.Bytes()
}

// writeSteps passes the lines of the script of steps to line, each with its depth.
func writeSteps(steps []step, line func(depth int, text string)) {
	var cur []string
	leave := func(depth int) {
		for i := len(cur) - 1; i >= depth; i-- {
			line(i, exitOf(cur[:i+1]))
		}
		cur = cur[:depth]
	}
	for _, s := range steps {
		common := 0
		for common < len(cur) && common < len(s.path) && cur[common] == s.path[common] {
			common++
		}
		leave(common)
		for _, k := range s.path[common:] {
			line(len(cur), k)
			cur = append(cur, k)
		}
		line(len(cur), s.cmd)
		if s.opens {
			cur = append(cur, s.cmd)
		}
	}
	leave(0)
}

var (
	groupDefRe    = regexp.MustCompile(`^neighbor (\S+) peer-group$`)
	memberRe      = regexp.MustCompile(`^neighbor (\S+) .*peer-group (\S+)$`)
	nbrRemoteAsRe = regexp.MustCompile(`^neighbor (\S+) (?:interface (?:v6only )?)?remote-as \S+$`)
)

// peerGroups returns the peer-group names the deleted lines show, per BGP instance.
func peerGroups(dels []Entry) map[string]bool {
	groups := map[string]bool{}
	for _, e := range dels {
		if !strings.HasPrefix(e.Keys[0], "router bgp") {
			continue
		}
		if m := groupDefRe.FindStringSubmatch(e.Line); m != nil {
			groups[e.Keys[0]+"\x00"+m[1]] = true
		} else if m := memberRe.FindStringSubmatch(e.Line); m != nil {
			groups[e.Keys[0]+"\x00"+m[2]] = true
		}
	}
	return groups
}

// neighborRank orders the deleted lines of a BGP instance so that none of them refers to a neighbor an
// earlier one removed: a neighbor's settings (rank 0, with every other line), then what removes a neighbor (its
// remote-as, its peer-group membership: 1), then a peer group's remote-as (which removes its members: 2), then
// the peer group (3). frr-reload.py does this only when a peer group goes; it deletes "neighbor N remote-as"
// before N's address-family lines and then fails on them.
func neighborRank(e Entry, groups map[string]bool) int {
	if !strings.HasPrefix(e.Keys[0], "router bgp") || !strings.HasPrefix(e.Line, "neighbor ") {
		return 0
	}
	switch {
	case groupDefRe.MatchString(e.Line):
		return 3
	case memberRe.MatchString(e.Line):
		return 1
	}
	if m := nbrRemoteAsRe.FindStringSubmatch(e.Line); m != nil {
		if groups[e.Keys[0]+"\x00"+m[1]] {
			return 2
		}
		return 1
	}
	return 0
}

// blockKeyword returns the keyword of the block whose key path is keys (nil: a single-line context or a line).
func blockKeyword(keys []string) *keyword {
	level := keywords
	var kw *keyword
	for _, k := range keys {
		i := slices.IndexFunc(level, func(c keyword) bool { return strings.HasPrefix(k, c.prefix) })
		if i < 0 {
			return nil
		}
		kw = &level[i]
		level = kw.children
	}
	return kw
}

// exitOf is the exit line of the innermost block of path.
func exitOf(path []string) string {
	if kw := blockKeyword(path); kw != nil && kw.exit != "" {
		return kw.exit
	}
	return "exit"
}
