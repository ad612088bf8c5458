package frrdiff

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Entry is one change: a line in the context Keys, or (Line "") the context itself.
type Entry struct {
	Keys []string
	Line string
	// moved marks a deletion frr-reload.py lists among the additions ("no ..." of a prefix-list, access-list,
	// community-list or static route entry, to save vtysh runs): still a deletion, Script runs it with them.
	moved bool
	// exit marks an "exit-vrf" check_for_exit_vrf inserts after a VRF's lines: Script writes its own exits.
	exit bool
}

func (e Entry) same(o Entry) bool { return e.Line == o.Line && slices.Equal(e.Keys, o.Keys) }

// Delta is what frr-reload.py computes: lines to delete, then lines to add, in its order.
type Delta struct {
	Delete, Add []Entry
}

// entries is a Python list of (ctx_keys, line) tuples.
type entries []Entry

// remove deletes the first entry equal to e (list.remove); false when there is none (Python: ValueError).
func (l *entries) remove(e Entry) bool {
	for i, x := range *l {
		if x.same(e) {
			*l = slices.Delete(*l, i, i+1)
			return true
		}
	}
	return false
}

// exist is frr-reload.py's line_exist. With exact false a line only has to start with target; a context entry
// (no line) there would make Python fail, which is an error here too.
func (l entries) exist(keys []string, target string, exact bool) (bool, error) {
	for _, x := range l {
		if !slices.Equal(x.Keys, keys) {
			continue
		}
		if exact {
			if x.Line == target {
				return true, nil
			}
			continue
		}
		if x.Line == "" {
			return false, undecidable(0, "frr-reload.py would fail comparing the context %q with a line", strings.Join(keys, " / "))
		}
		if strings.HasPrefix(x.Line, target) {
			return true, nil
		}
	}
	return false, nil
}

// lineSet answers whether lines has a line: a scan of a few lines, a set for more (made for one comparison; a
// set kept per context cost ~2 MiB per parsed config of 1000 VRFs).
func lineSet(lines []string) func(string) bool {
	if len(lines) <= 16 {
		return func(l string) bool { return slices.Contains(lines, l) }
	}
	set := make(map[string]struct{}, len(lines))
	for _, l := range lines {
		set[l] = struct{}{}
	}
	return func(l string) bool {
		_, ok := set[l]
		return ok
	}
}

func keysWith(keys []string, more ...string) []string {
	return append(append([]string(nil), keys...), more...)
}

func anyContains(keys []string, s string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, s) })
}

// Compare returns what turns running into cand, as the dialect's frr-reload.py's compare_context_objects does.
// Both must have been parsed for the same dialect.
func Compare(cand, running *Config) (Delta, error) {
	if cand.dialect != running.dialect {
		return Delta{}, fmt.Errorf("frrdiff: the candidate was read as dialect %d, the running config as %d", cand.dialect, running.dialect)
	}
	d := cand.dialect
	var add, del entries
	deleteBGPD := false
	for _, rc := range running.contexts {
		keys := rc.Keys
		if cand.get(keys) != nil {
			continue
		}
		k0 := keys[0]
		switch {
		case strings.Contains(k0, "router bgp") && len(keys) == 1:
			deleteBGPD = true
			del = append(del, Entry{Keys: keys})
		case strings.HasPrefix(k0, "interface") || strings.HasPrefix(k0, "vrf"):
			for _, l := range rc.Lines {
				del = append(del, Entry{Keys: keys, Line: l})
			}
		case strings.Contains(k0, "router bgp") && len(keys) > 1 && deleteBGPD:
			continue
		case strings.Contains(k0, "router bgp") && len(keys) > 2 && strings.HasPrefix(keys[1], "address-family l2vpn evpn") &&
			strings.HasPrefix(keys[2], "vni "):
			del = append(del, Entry{Keys: keys})
		case strings.Contains(k0, "router bgp") && len(keys) > 1 && strings.HasPrefix(keys[1], "address-family"):
			for _, l := range rc.Lines {
				del = append(del, Entry{Keys: keys, Line: l})
			}
		case strings.HasPrefix(k0, "ip route") || strings.HasPrefix(k0, "ipv6 route"):
			add = append(add, Entry{Keys: []string{"no " + k0}, moved: true})
		case strings.HasPrefix(k0, "mpls ldp") || strings.HasPrefix(k0, "l2vpn") || strings.HasPrefix(k0, "segment-routing"):
			// Parse refuses these blocks; a single line starting so would need frr-reload.py's special cases.
			return Delta{}, undecidable(0, "context %q", k0)
		case !anyContains(keys, "address-family"), !anyContains(keys, "vni"):
			del = append(del, Entry{Keys: keys})
		default:
			for _, l := range rc.Lines {
				del = append(del, Entry{Keys: keys, Line: l})
			}
		}
	}
	for _, nc := range cand.contexts {
		rc := running.get(nc.Keys)
		if rc == nil {
			continue
		}
		inRunning, inCand := lineSet(rc.Lines), lineSet(nc.Lines)
		for _, l := range nc.Lines {
			if !inRunning(l) {
				add = append(add, Entry{Keys: nc.Keys, Line: l})
			}
		}
		for _, l := range rc.Lines {
			if !inCand(l) {
				del = append(del, Entry{Keys: nc.Keys, Line: l})
			}
		}
	}
	var missing []*Context
	n := 0
	for _, nc := range cand.contexts {
		if running.get(nc.Keys) == nil {
			missing = append(missing, nc)
			n += 1 + len(nc.Lines)
		}
	}
	add = slices.Grow(add, n) // all of a first apply's config: tens of thousands of entries
	for _, nc := range missing {
		add = append(add, Entry{Keys: nc.Keys})
		for _, l := range nc.Lines {
			add = append(add, Entry{Keys: nc.Keys, Line: l})
		}
	}
	if d == FRR8 {
		add = checkForExitVRF(add) // FRR 10's frr-reload.py dropped it
	}
	if d == FRR10 {
		del = descriptionsBare(del)
	}
	var err error
	if add, del, err = ignoreDeleteReAddLines(add, del); err != nil {
		return Delta{}, err
	}
	if add, del, err = deleteMoveLines(add, del, d); err != nil {
		return Delta{}, err
	}
	del = ignoreUnconfigurableLines(del)
	return Delta{Delete: del, Add: add}, nil
}

// descriptionsBare is the start of FRR 10's ignore_delete_re_add_lines: a deleted description of a route-map
// or an interface loses its text ("no description" takes none).
func descriptionsBare(del entries) entries {
	for i, e := range del {
		if (strings.HasPrefix(e.Keys[0], "route-map") || strings.HasPrefix(e.Keys[0], "interface ")) &&
			strings.HasPrefix(e.Line, "description ") {
			del[i].Line = "description"
		}
	}
	return del
}

// checkForExitVRF inserts "exit-vrf" after the lines added to a VRF when a line of another context follows.
// (Its other half, dropping deleted "exit-vrf" lines, never applies: exit lines are no context's lines.) Python
// inserts into the list it iterates, so the entry before which it inserted is visited twice.
func checkForExitVRF(add entries) entries {
	addExit, prior := false, ""
	for i := 0; i < len(add); i++ {
		e := add[i]
		if addExit && e.Keys[0] != prior {
			add = slices.Insert(add, i, Entry{Keys: []string{prior}, Line: "exit-vrf", exit: true})
			addExit = false
		}
		if strings.HasPrefix(e.Keys[0], "vrf") && e.Line != "" {
			addExit = e.Line != "exit-vrf"
			if addExit {
				prior = e.Keys[0]
			}
		}
	}
	return add
}

var (
	swpxIntPGRe       = regexp.MustCompile(`neighbor (\S+) interface peer-group (\S+)`)
	swpxIntV6PGRe     = regexp.MustCompile(`neighbor (\S+) interface v6only peer-group (\S+)`)
	nbrBFDTimersRe    = regexp.MustCompile(`neighbor (\S+) bfd (\S+) (\S+) (\S+)`)
	nbrRouteMapRe     = regexp.MustCompile(`neighbor(.*)route-map(.*)(in|out)$`)
	swpxIntRemoteASRe = regexp.MustCompile(`neighbor (\S+) interface remote-as (\S+)`)
	swpxIntV6RASRe    = regexp.MustCompile(`neighbor (\S+) interface v6only remote-as (\S+)`)
	asRelaxNewRe      = regexp.MustCompile(`^bgp\s+bestpath\s+as-path\s+multipath-relax$`)
	importTableRe     = regexp.MustCompile(`^ip\s+import-table\s+(\d+)$`)
	aclPlistRe        = regexp.MustCompile(`^(ip |ipv6 |)(prefix-list|access-list)(\s+\S+\s+)(seq \d+\s+)(permit|deny)(.*)$`)
	bgpListsRe        = regexp.MustCompile(`^(bgp )(community-list|large-community-list|extcommunity-list)(\s+\S+\s+)(\S+\s+)(seq \d+\s+)(permit|deny)(.*)$`)
	rtImportRe        = regexp.MustCompile(`^route-target import (.*)$`)
)

// ignoreDeleteReAddLines is frr-reload.py's ignore_delete_re_add_lines: it drops deletions that the additions
// redo (or that FRR shows in another form) and turns deleted prefix-list, access-list, community-list and VRF
// route entries into "no" additions.
func ignoreDeleteReAddLines(add, del entries) (entries, entries, error) {
	var addToDel, delToDel entries
	// rmMatch is Python's rm_match: a function-wide variable, set only for added lines, read for every added
	// entry of a router bgp context, also in later deletions' loops.
	var rmMatch []string
	rmBound := false
	for _, d := range del {
		keys, line := d.Keys, d.Line
		deleted := false
		if line != "" && strings.Contains(line, "segment-routing global-block") {
			for _, a := range add {
				if keys[0] == a.Keys[0] && a.Line != "" && strings.Contains(a.Line, "segment-routing global-block") {
					delToDel = append(delToDel, Entry{Keys: keys, Line: line})
					break
				}
			}
			continue
		}
		if strings.HasPrefix(keys[0], "router bgp") && line != "" {
			if strings.HasPrefix(line, "neighbor ") {
				if m1, m2 := swpxIntPGRe.FindStringSubmatch(line), swpxIntV6PGRe.FindStringSubmatch(line); m1 != nil || m2 != nil {
					var swpx, pg, iface string
					if m1 != nil {
						swpx, pg, iface = m1[1], m1[2], "neighbor "+m1[1]+" interface"
					} else {
						swpx, pg, iface = m2[1], m2[2], "neighbor "+m2[1]+" interface v6only"
					}
					pgLine := "neighbor " + swpx + " peer-group " + pg
					foundIface, _ := add.exist(keys, iface, true)
					foundPG, _ := add.exist(keys, pgLine, true)
					tmp := keys
					if !foundPG {
						tmp = keysWith(keys, "address-family ipv4 unicast")
						if foundPG, _ = add.exist(tmp, pgLine, true); !foundPG {
							tmp = keysWith(keys, "address-family ipv6 unicast")
							foundPG, _ = add.exist(tmp, pgLine, true)
						}
					}
					if foundIface && foundPG {
						deleted = true
						delToDel = append(delToDel, Entry{Keys: keys, Line: line})
						addToDel = append(addToDel, Entry{Keys: keys, Line: iface}, Entry{Keys: tmp, Line: pgLine})
					}
				}
				if nbrBFDTimersRe.MatchString(line) {
					// frr-reload.py rebinds the deletion's context to the last addition here and fails on added
					// contexts: not worth copying.
					return nil, nil, undecidable(0, "deleting the BFD timers %q", line)
				}
				if m := nbrRouteMapRe.FindStringSubmatch(line); m != nil {
					adjust, saveLine := false, "EMPTY"
					search, err := regexp.Compile("neighbor" + m[1] + "route-map(.*)" + m[3])
					if err != nil {
						return nil, nil, undecidable(0, "route-map line %q: %v", line, err)
					}
					for _, a := range add {
						if !strings.HasPrefix(a.Keys[0], "router bgp") {
							continue
						}
						if a.Line != "" {
							rmMatch, rmBound = search.FindStringSubmatch(a.Line), true
						}
						if !rmBound {
							return nil, nil, undecidable(0, "frr-reload.py would fail on the added context %q while deleting %q", strings.Join(a.Keys, " / "), line)
						}
						if rmMatch == nil || rmMatch[1] == m[2] {
							continue
						}
						if len(a.Keys) == 1 {
							saveLine, adjust = line, true
						} else if len(keys) > 1 && len(a.Keys) > 1 && keys[1] == a.Keys[1] {
							delToDel = append(delToDel, Entry{Keys: a.Keys, Line: line})
						}
					}
					if adjust {
						for _, dl := range del {
							if strings.HasPrefix(dl.Keys[0], "router bgp") && len(dl.Keys) > 1 && dl.Keys[1] == "address-family ipv4 unicast" && saveLine == dl.Line {
								delToDel = append(delToDel, Entry{Keys: dl.Keys, Line: saveLine})
							}
						}
					}
				}
				if m1, m2 := swpxIntRemoteASRe.FindStringSubmatch(line), swpxIntV6RASRe.FindStringSubmatch(line); m1 != nil || m2 != nil {
					var swpx, ras, iface string
					if m1 != nil {
						swpx, ras, iface = m1[1], m1[2], "neighbor "+m1[1]+" interface"
					} else {
						swpx, ras, iface = m2[1], m2[2], "neighbor "+m2[1]+" interface v6only"
					}
					rasLine := "neighbor " + swpx + " remote-as " + ras
					foundIface, _ := add.exist(keys, iface, true)
					foundRAS, _ := add.exist(keys, rasLine, true)
					if foundIface && foundRAS {
						deleted = true
						delToDel = append(delToDel, Entry{Keys: keys, Line: line})
						addToDel = append(addToDel, Entry{Keys: keys, Line: iface}, Entry{Keys: keys, Line: rasLine})
					}
				}
			}
			if strings.Contains(line, "multipath-relax") {
				old := "bgp bestpath as-path multipath-relax no-as-set"
				if found, _ := add.exist(keys, old, true); asRelaxNewRe.MatchString(line) && found {
					deleted = true
					delToDel = append(delToDel, Entry{Keys: keys, Line: line})
					addToDel = append(addToDel, Entry{Keys: keys, Line: old})
				}
			}
			if strings.HasPrefix(line, "table-map") {
				found, err := add.exist(keys, "table-map", false)
				if err != nil {
					return nil, nil, err
				}
				if found {
					delToDel = append(delToDel, Entry{Keys: keys, Line: line})
				}
			}
		}
		if m := importTableRe.FindStringSubmatch(keys[0]); m != nil {
			for _, a := range add {
				if strings.HasPrefix(a.Keys[0], "ip import-table "+m[1]+" distance") {
					delToDel = append(delToDel, Entry{Keys: []string{"ip import-table " + m[1]}})
					addToDel = append(addToDel, Entry{Keys: a.Keys})
				}
			}
		}
		if m := aclPlistRe.FindStringSubmatch(keys[0]); m != nil {
			add, delToDel, addToDel = noSeqOrNoForm(add, delToDel, addToDel, keys, m[1]+m[2]+m[3]+m[5]+m[6])
		}
		if m := bgpListsRe.FindStringSubmatch(keys[0]); m != nil {
			add, delToDel, addToDel = noSeqOrNoForm(add, delToDel, addToDel, keys, m[1]+m[2]+m[3]+m[4]+m[6]+m[7])
		}
		if len(keys) == 3 && strings.HasPrefix(keys[0], "router bgp") && keys[1] == "address-family l2vpn evpn" && strings.HasPrefix(keys[2], "vni") && line != "" {
			if m := rtImportRe.FindStringSubmatch(line); m != nil {
				rt := strings.TrimSpace(m[1])
				export, both := "route-target export "+rt, "route-target both "+rt
				foundExport, _ := del.exist(keys, export, true)
				foundBoth, _ := add.exist(keys, both, true)
				if foundExport && foundBoth {
					delToDel = append(delToDel, Entry{Keys: keys, Line: line}, Entry{Keys: keys, Line: export})
					addToDel = append(addToDel, Entry{Keys: keys, Line: both})
				}
			}
		}
		if strings.HasPrefix(keys[0], "vrf ") && line != "" && (strings.HasPrefix(line, "ip route") || strings.HasPrefix(line, "ipv6 route")) {
			add = append(add, Entry{Keys: keys, Line: "no " + line, moved: true})
			delToDel = append(delToDel, Entry{Keys: keys, Line: line})
		}
		if !deleted {
			if found, _ := add.exist(keys, line, true); found {
				delToDel = append(delToDel, Entry{Keys: keys, Line: line})
				addToDel = append(addToDel, Entry{Keys: keys, Line: line})
			} else if strings.HasPrefix(keys[0], "router bgp") && len(keys) > 1 && keys[1] == "address-family ipv4 unicast" {
				tmp := keys[:len(keys)-1]
				if found, _ := add.exist(tmp, line, true); found {
					delToDel = append(delToDel, Entry{Keys: keys, Line: line})
					addToDel = append(addToDel, Entry{Keys: tmp, Line: line})
				}
			}
		}
	}
	for _, e := range delToDel {
		del.remove(e)
	}
	for _, e := range addToDel {
		add.remove(e)
	}
	return add, del, nil
}

// noSeqOrNoForm is the prefix-list/access-list and community-list part of ignore_delete_re_add_lines for the
// deleted single-line context keys: the same entry added without "seq N" (the running config always shows
// one) cancels both; otherwise the deletion becomes a "no" addition.
func noSeqOrNoForm(add, delToDel, addToDel entries, keys []string, noSeq string) (entries, entries, entries) {
	found := false
	for _, a := range add {
		if a.Keys[0] == noSeq {
			delToDel = append(delToDel, Entry{Keys: keys})
			addToDel = append(addToDel, Entry{Keys: []string{noSeq}})
			found = true
		}
	}
	if !found {
		add = append(add, Entry{Keys: []string{"no " + keys[0]}, moved: true})
		delToDel = append(delToDel, Entry{Keys: keys})
	}
	return add, delToDel, addToDel
}

var (
	nbrRemoteASRe   = regexp.MustCompile(`neighbor (\S+) .*remote-as (\S+)`)
	nbrAnyPGRe      = regexp.MustCompile(`neighbor (\S+) .*peer-group (\S+)`)
	pgDefRe         = regexp.MustCompile(`^neighbor (\S+) peer-group$`)
	nbrRemoteASAnyR = regexp.MustCompile(`neighbor (\S+) remote-as.*`)
)

// orderedSet keeps names in first-seen order (Python dict keys / list with "not in" checks).
type orderedSet []string

func (s *orderedSet) add(v string) bool {
	if slices.Contains(*s, v) {
		return false
	}
	*s = append(*s, v)
	return true
}

// isBGPNeighbor is the test frr-reload.py repeats: a neighbor line of a router bgp context.
func isBGPNeighbor(e Entry) bool {
	return strings.HasPrefix(e.Keys[0], "router bgp") && e.Line != "" && strings.HasPrefix(e.Line, "neighbor ")
}

// compileQuoted builds a regular expression the way frr-reload.py does, with a name pasted in unquoted.
func compileQuoted(format, name string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(strings.Replace(format, "%s", name, 1))
	if err != nil {
		return nil, undecidable(0, "neighbor or peer-group name %q in a regular expression: %v", name, err)
	}
	return re, nil
}

// deleteMoveLines is frr-reload.py's delete_move_lines: peer-group deletions after their members' lines,
// member lines dropped that deleting the group removes anyway, and the default BGP instance deleted last.
func deleteMoveLines(add, del entries, dialect Dialect) (entries, entries, error) {
	add, err := bgpDeleteNbrRemoteASLine(add)
	if err != nil {
		return nil, nil, err
	}
	type pgNbrs struct {
		pg   string
		nbrs orderedSet
	}
	var ctxOrder orderedSet
	delDict := map[string][]*pgNbrs{}
	var delNbrCtx orderedSet
	delNbr := map[string]*orderedSet{}
	var toApp entries
	foundPGDel := false
	for _, d := range del {
		if !isBGPNeighbor(d) {
			continue
		}
		k0 := d.Keys[0]
		if nbrRemoteASRe.MatchString(d.Line) {
			toApp = append(toApp, d)
		}
		if m := nbrAnyPGRe.FindStringSubmatch(d.Line); m != nil {
			if delNbrCtx.add(k0) {
				delNbr[k0] = &orderedSet{}
			}
			delNbr[k0].add(m[1])
		}
		if ctxOrder.add(k0) {
			delDict[k0] = nil
		}
		if m := pgDefRe.FindStringSubmatch(d.Line); m != nil && !slices.ContainsFunc(delDict[k0], func(p *pgNbrs) bool { return p.pg == m[1] }) {
			delDict[k0] = append(delDict[k0], &pgNbrs{pg: m[1]})
			foundPGDel = true
		}
	}
	moveRemoteAS := func() {
		for _, e := range toApp {
			del.remove(e)
			del = append(del, e)
		}
	}
	if dialect == FRR10 {
		moveRemoteAS() // FRR 10 moves them also when no peer group is deleted
	}
	if !foundPGDel {
		del = bgpDeleteInstMoveLine(del)
		if len(delNbrCtx) > 0 {
			if del, err = bgpRemoveNeighborCfg(del, delNbr); err != nil {
				return nil, nil, err
			}
		}
		return add, del, nil
	}
	if dialect == FRR8 {
		moveRemoteAS()
	}
	for _, d := range del {
		if !isBGPNeighbor(d) {
			continue
		}
		for _, p := range delDict[d.Keys[0]] {
			re, err := compileQuoted(`neighbor (\S+) .*peer-group %s$`, p.pg)
			if err != nil {
				return nil, nil, err
			}
			if m := re.FindStringSubmatch(d.Line); m != nil {
				p.nbrs.add(m[1])
			}
		}
	}
	var toDel entries
	toApp = nil
	for _, d := range del {
		if !isBGPNeighbor(d) {
			continue
		}
		for _, p := range delDict[d.Keys[0]] {
			for _, nbr := range p.nbrs {
				re, err := compileQuoted(`neighbor %s .*`, nbr)
				if err != nil {
					return nil, nil, err
				}
				if re.MatchString(d.Line) {
					toDel = append(toDel, d)
				}
			}
			re, err := compileQuoted(`^neighbor %s peer-group$`, p.pg)
			if err != nil {
				return nil, nil, err
			}
			if re.MatchString(d.Line) {
				toApp = append(toApp, d)
			}
		}
	}
	for _, e := range toDel {
		if !del.remove(e) {
			return nil, nil, undecidable(0, "frr-reload.py would fail removing %q twice", e.Line)
		}
	}
	for _, e := range toApp {
		if !del.remove(e) {
			return nil, nil, undecidable(0, "frr-reload.py would fail moving %q", e.Line)
		}
		del = append(del, e)
	}
	return add, bgpDeleteInstMoveLine(del), nil
}

// bgpDeleteNbrRemoteASLine drops added "neighbor N remote-as" lines of neighbors added to a peer group that has
// a remote-as among the additions (FRR refuses them).
func bgpDeleteNbrRemoteASLine(add entries) (entries, error) {
	type pgInfo struct {
		pg       string
		nbrs     []string
		remoteAS bool
	}
	var ctxOrder orderedSet
	pgs := map[string][]*pgInfo{}
	found := false
	for _, a := range add {
		if !isBGPNeighbor(a) {
			continue
		}
		k0 := a.Keys[0]
		if ctxOrder.add(k0) {
			pgs[k0] = nil
		}
		if m := pgDefRe.FindStringSubmatch(a.Line); m != nil && !slices.ContainsFunc(pgs[k0], func(p *pgInfo) bool { return p.pg == m[1] }) {
			pgs[k0] = append(pgs[k0], &pgInfo{pg: m[1]})
			found = true
		}
	}
	if !found {
		return add, nil
	}
	for _, a := range add {
		if !isBGPNeighbor(a) {
			continue
		}
		for _, p := range pgs[a.Keys[0]] {
			ras, err := compileQuoted(`neighbor %s remote-as (\S+)`, p.pg)
			if err != nil {
				return nil, err
			}
			if ras.MatchString(a.Line) {
				p.remoteAS = true
			}
			member, err := compileQuoted(`neighbor (\S+) peer-group %s$`, p.pg)
			if err != nil {
				return nil, err
			}
			// Python checks the name against the group's dict keys ("nbr", "remoteas"), not its list.
			if m := member.FindStringSubmatch(a.Line); m != nil && m[1] != "nbr" && m[1] != "remoteas" {
				p.nbrs = append(p.nbrs, m[1])
			}
		}
	}
	var drop entries
	for _, a := range add {
		if !isBGPNeighbor(a) {
			continue
		}
		m := nbrRemoteASAnyR.FindStringSubmatch(a.Line)
		if m == nil {
			continue
		}
		for _, p := range pgs[a.Keys[0]] {
			if !p.remoteAS {
				continue
			}
			for _, n := range p.nbrs {
				if m[1] == n {
					drop = append(drop, a)
				}
			}
		}
	}
	for _, e := range drop {
		if !add.remove(e) {
			return nil, undecidable(0, "frr-reload.py would fail removing %q twice", e.Line)
		}
	}
	return add, nil
}

// bgpRemoveNeighborCfg drops deleted lines of neighbors whose peer-group line is deleted too (deleting that
// deletes the neighbor).
func bgpRemoveNeighborCfg(del entries, nbrs map[string]*orderedSet) (entries, error) {
	var toDel entries
	for _, d := range del {
		if !isBGPNeighbor(d) {
			continue
		}
		set, ok := nbrs[d.Keys[0]]
		if !ok {
			continue
		}
		for _, n := range *set {
			if nbrAnyPGRe.MatchString(d.Line) {
				continue
			}
			re, err := compileQuoted(`neighbor %s .*`, n)
			if err != nil {
				return nil, err
			}
			if re.MatchString(d.Line) {
				toDel = append(toDel, d)
			}
		}
	}
	for _, e := range toDel {
		if !del.remove(e) {
			return nil, undecidable(0, "frr-reload.py would fail removing %q twice", e.Line)
		}
	}
	return del, nil
}

// bgpDeleteInstMoveLine moves the deletion of the default BGP instance after those of VRF instances. Python
// removes and appends while iterating, which skips the entry after a moved one.
func bgpDeleteInstMoveLine(del entries) entries {
	isDefault := func(e Entry) bool {
		return strings.HasPrefix(e.Keys[0], "router bgp") && e.Line == "" && !strings.Contains(e.Keys[0], "vrf")
	}
	isVRF := func(e Entry) bool {
		return strings.HasPrefix(e.Keys[0], "router bgp") && e.Line == "" && strings.Contains(e.Keys[0], "vrf")
	}
	if !slices.ContainsFunc(del, isDefault) || !slices.ContainsFunc(del, isVRF) {
		return del
	}
	for i := 0; i < len(del); i++ {
		if e := del[i]; isDefault(e) {
			del.remove(e)
			del = append(del, e)
		}
	}
	return del
}

// unremovable are contexts frr-reload.py never deletes.
var unremovable = []string{"agentx", "frr version", "frr defaults", "username", "password", "line vty",
	"service integrated-vtysh-config"}

func ignoreUnconfigurableLines(del entries) entries {
	return slices.DeleteFunc(del, func(e Entry) bool {
		return slices.ContainsFunc(unremovable, func(p string) bool { return strings.HasPrefix(e.Keys[0], p) })
	})
}
