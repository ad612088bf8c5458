package frr

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// vtyshFile prepares a config or delta script for "vtysh -f" so that FRR 8.4 loads large configs in linear time;
// the daemons end up with the same configuration:
//
//   - prefix-lists and route-maps go before the first "router bgp" block when the file deletes none of them.
//     bgpd tells every BGP instance about every route-map change (update_group_policy_update per instance), so
//     route-maps made after 1000 VRF instances cost O(instances) each; made first, they find no instance.
//   - the "exit" of a route-map block followed by another route-map block is dropped. Route maps are
//     northbound (YANG) configuration: the daemon commits its pending transaction at the next command that is
//     not, the block's exit, and every commit diffs the whole candidate tree in libyang (O(config) per block).
//     Without it, vtysh and the daemons leave the route-map node for the next "route-map" line by themselves
//     (a command of the parent node only), and the blocks are committed as one transaction.
//
// Measured on 200 VRFs (5 route-map entries each): 51 s as rendered, 4.1 s with the exits dropped, see
// docs/bench.md (nodescale) for 1000. A refusal inside a batch lists the batch's lines (FRR's "grouped into the
// same transaction") and line numbers are those of the prepared file.
func vtyshFile(script []byte) []byte {
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
		blocks = append(append(blocks[:firstBGP:firstBGP], policy...), rest...)
	}
	var out bytes.Buffer
	for i, b := range blocks {
		lines := b.lines
		if bytes.HasPrefix(b.head, []byte("route-map ")) && i+1 < len(blocks) && bytes.HasPrefix(blocks[i+1].head, []byte("route-map ")) {
			lines = dropExit(lines)
		}
		for _, l := range lines {
			out.Write(l)
			out.WriteByte('\n')
		}
	}
	if !bytes.HasSuffix(script, []byte("\n")) && out.Len() > 0 {
		out.Truncate(out.Len() - 1)
	}
	return out.Bytes()
}

// block is a top-level command with the lines up to the next one (its inner lines, its exit, comments).
type block struct {
	head  []byte
	lines [][]byte
}

// topLevelBlocks splits a file at its top-level commands; lines before the first one form a block without head.
func topLevelBlocks(script []byte) []block {
	var blocks []block
	for _, l := range bytes.Split(bytes.TrimSuffix(script, []byte("\n")), []byte("\n")) {
		t := bytes.TrimSpace(l)
		top := len(l) > 0 && l[0] != ' ' && l[0] != '!' && !bytes.HasPrefix(t, []byte("exit"))
		if top || len(blocks) == 0 {
			var head []byte
			if top {
				head = l
			}
			blocks = append(blocks, block{head: head})
		}
		blocks[len(blocks)-1].lines = append(blocks[len(blocks)-1].lines, l)
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
func dropExit(lines [][]byte) [][]byte {
	out := lines[:0:0]
	for _, l := range lines {
		if string(bytes.TrimRight(l, " \r")) != "exit" {
			out = append(out, l)
		}
	}
	return out
}

// preparedFile writes vtyshFile(content of file) next to file and returns its name and a function removing it;
// the copy is private (0600, vtysh reads it as root) like the candidate.
func preparedFile(file string) (string, func(), error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", file, err)
	}
	prepared := vtyshFile(data)
	if bytes.Equal(prepared, data) {
		return file, func() {}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(file), ".frr-prepared-")
	if err != nil {
		return "", nil, fmt.Errorf("prepare %s for vtysh: %w", file, err)
	}
	name := f.Name()
	_, err = f.Write(prepared)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", nil, fmt.Errorf("prepare %s for vtysh: %w", file, err)
	}
	return name, func() { os.Remove(name) }, nil
}
