package frrreload

import (
	"bytes"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
)

// vtyshFile prepares a config or delta script for "vtysh -f" so that FRR 8.4 loads large configs in linear time;
// the daemons end up with the same configuration:
//
//   - prefix-lists and route-maps go before the first "router bgp" block when the file deletes none of them.
//     bgpd tells every BGP instance about every route-map change (update_group_policy_update per instance), so
//     route-maps made after 1000 VRF instances cost O(instances) each; made first, they find no instance.
//   - right after them, bgpd processes the route-map changes at once: "bgp route-map delay-timer 0" runs the
//     pending route-map update (what the timer would run 5 s later), then timer restores the config's own delay
//     ("" for bgpd's default). Left to the timer, the update runs once the BGP instances exist, for every changed
//     route-map in every instance: for 1000 VRFs that was 10 s of bgpd's CPU during the load of the instances.
//   - the "exit" of a route-map block followed by another route-map block is dropped. Route maps are
//     northbound (YANG) configuration: the daemon commits its pending transaction at the next command that is
//     not, the block's exit, and every commit diffs the whole candidate tree in libyang (O(config) per block).
//     Without it, vtysh and the daemons leave the route-map node for the next "route-map" line by themselves
//     (a command of the parent node only), and the blocks are committed as one transaction.
//
// Measured on 200 VRFs (5 route-map entries each): 51 s as rendered, 4.1 s with the exits dropped, see
// docs/bench.md (nodescale) for 1000. origin[i] is the script's line number of the prepared file's line i+1 (0
// for a line vtyshFile added), so that what FRR refuses is reported at the script's lines.
func vtyshFile(script []byte, timer string) (prepared []byte, origin []int) {
	blocks := topLevelBlocks(script)
	firstBGP, deletesPolicy := -1, false
	for i, b := range blocks {
		switch {
		case firstBGP < 0 && bytes.HasPrefix(b.head, []byte("router bgp ")):
			firstBGP = i
		case bytes.HasPrefix(b.head, []byte("no ")) && isPolicy(b.head[3:]):
			deletesPolicy = true
		}
	}
	if firstBGP >= 0 && !deletesPolicy {
		var policy, rest []block
		for _, b := range blocks[firstBGP:] {
			if isPolicy(b.head) {
				policy = append(policy, b)
			} else {
				rest = append(rest, b)
			}
		}
		if len(policy) > 0 {
			if timer == "" {
				timer = "no " + routeMapTimerCmd
			}
			flush := block{lines: []line{{text: []byte(routeMapTimerCmd + " 0")}, {text: []byte(timer)}}}
			policy = append(policy, flush)
		}
		blocks = append(append(blocks[:firstBGP:firstBGP], policy...), rest...)
	}
	var out bytes.Buffer
	for i, b := range blocks {
		lines := b.lines
		if bytes.HasPrefix(b.head, []byte("route-map ")) && i+1 < len(blocks) && bytes.HasPrefix(blocks[i+1].head, []byte("route-map ")) {
			lines = dropExit(lines)
		}
		for _, l := range lines {
			out.Write(l.text)
			out.WriteByte('\n')
			origin = append(origin, l.number)
		}
	}
	if !bytes.HasSuffix(script, []byte("\n")) && out.Len() > 0 {
		out.Truncate(out.Len() - 1)
	}
	return out.Bytes(), origin
}

// routeMapTimerCmd is bgpd's command for the delay of route-map updates.
const routeMapTimerCmd = "bgp route-map delay-timer"

// routeMapTimer is the last "bgp route-map delay-timer N" of lines (a config's top-level commands), "" when none.
func routeMapTimer(lines iter.Seq[string]) string {
	timer := ""
	for l := range lines {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, routeMapTimerCmd+" ") {
			timer = l
		}
	}
	return timer
}

// line is one line of a script and its number there (1-based; 0: added).
type line struct {
	text   []byte
	number int
}

// block is a top-level command with the lines up to the next one (its inner lines, its exit, comments).
type block struct {
	head  []byte
	lines []line
}

// topLevelBlocks splits a file at its top-level commands; lines before the first one form a block without head.
func topLevelBlocks(script []byte) []block {
	var blocks []block
	for i, l := range bytes.Split(bytes.TrimSuffix(script, []byte("\n")), []byte("\n")) {
		t := bytes.TrimSpace(l)
		top := len(l) > 0 && l[0] != ' ' && l[0] != '!' && !bytes.HasPrefix(t, []byte("exit"))
		if top || len(blocks) == 0 {
			var head []byte
			if top {
				head = l
			}
			blocks = append(blocks, block{head: head})
		}
		blocks[len(blocks)-1].lines = append(blocks[len(blocks)-1].lines, line{text: l, number: i + 1})
	}
	return blocks
}

// isPolicy reports whether a top-level command makes a prefix-list or route-map.
func isPolicy(head []byte) bool {
	for _, p := range []string{"route-map ", "ip prefix-list ", "ipv6 prefix-list "} {
		if bytes.HasPrefix(head, []byte(p)) {
			return true
		}
	}
	return false
}

// dropExit removes a block's top-level "exit" line.
func dropExit(lines []line) []line {
	out := lines[:0:0]
	for _, l := range lines {
		if string(bytes.TrimRight(l.text, " \r")) != "exit" {
			out = append(out, l)
		}
	}
	return out
}

// preparedFile writes vtyshFile(content of file) next to file (the delay timer file's own) and returns its name, a
// function removing it and the origin of its lines in file; the copy is private (0600, vtysh reads it as root) like
// the candidate.
func preparedFile(file string) (string, func(), []int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	prepared, origin := vtyshFile(data, routeMapTimer(strings.Lines(string(data))))
	if bytes.Equal(prepared, data) {
		return file, func() {}, origin, nil
	}
	f, err := os.CreateTemp(filepath.Dir(file), ".frr-prepared-")
	if err != nil {
		return "", nil, nil, fmt.Errorf("prepare %s for vtysh: %w", file, err)
	}
	name := f.Name()
	_, err = f.Write(prepared)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", nil, nil, fmt.Errorf("prepare %s for vtysh: %w", file, err)
	}
	return name, func() { os.Remove(name) }, origin, nil
}
