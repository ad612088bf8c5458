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
	add, del, err := deletedContexts(cand, running)
	if err != nil {
		return Delta{}, err
	}
	add, del = changedLines(cand, running, add, del)
	add = addedContexts(cand, running, add)
	if d == FRR8 {
		add = checkForExitVRF(add) // FRR 10's frr-reload.py dropped it
	}
	if d == FRR10 {
		del = descriptionsBare(del)
	}
	if add, del, err = ignoreDeleteReAddLines(add, del); err != nil {
		return Delta{}, err
	}
	if add, del, err = deleteMoveLines(add, del, d); err != nil {
		return Delta{}, err
	}
	del = ignoreUnconfigurableLines(del)
	return Delta{Delete: del, Add: add}, nil
}

// deletedContexts is the first part of compare_context_objects: what deleting the running contexts missing from
// cand takes (the context, its lines, or for a static route a "no" addition), in the running config's order.
func deletedContexts(cand, running *Config) (add, del entries, err error) {
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
			return nil, nil, undecidable(0, "context %q", k0)
		case !anyContains(keys, "address-family"), !anyContains(keys, "vni"):
			del = append(del, Entry{Keys: keys})
		default:
			for _, l := range rc.Lines {
				del = append(del, Entry{Keys: keys, Line: l})
			}
		}
	}
	return add, del, nil
}

// changedLines appends, for each context in both configs (in cand's order), its lines only cand has to add and
// those only running has to del.
func changedLines(cand, running *Config, add, del entries) (entries, entries) {
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
	return add, del
}

// addedContexts appends the contexts only cand has, each followed by its lines.
func addedContexts(cand, running *Config, add entries) entries {
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
	return add
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
	p := &reAddPass{add: add, del: del}
	for _, d := range del {
		if err := p.check(d.Keys, d.Line); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range p.delToDel {
		p.del.remove(e)
	}
	for _, e := range p.addToDel {
		p.add.remove(e)
	}
	return p.add, p.del, nil
}

// reAddPass is the state of one ignore_delete_re_add_lines run: the lists, which its checks read and (add
// only) extend, and the entries to drop from them at its end.
type reAddPass struct {
	add, del           entries
	addToDel, delToDel entries
	// rmMatch is Python's rm_match: a function-wide variable, set only for added lines, read for every added
	// entry of a router bgp context, also in later deletions' loops.
	rmMatch []string
	rmBound bool
}

// check runs ignore_delete_re_add_lines' checks for one deletion, in its order.
func (p *reAddPass) check(keys []string, line string) error {
	if line != "" && strings.Contains(line, "segment-routing global-block") {
		p.segmentRoutingGlobalBlock(keys, line)
		return nil
	}
	deleted := false
	if strings.HasPrefix(keys[0], "router bgp") && line != "" {
		var err error
		if deleted, err = p.bgpLine(keys, line); err != nil {
			return err
		}
	}
	p.importTable(keys)
	if m := aclPlistRe.FindStringSubmatch(keys[0]); m != nil {
		p.add, p.delToDel, p.addToDel = noSeqOrNoForm(p.add, p.delToDel, p.addToDel, keys, m[1]+m[2]+m[3]+m[5]+m[6])
	}
	if m := bgpListsRe.FindStringSubmatch(keys[0]); m != nil {
		p.add, p.delToDel, p.addToDel = noSeqOrNoForm(p.add, p.delToDel, p.addToDel, keys, m[1]+m[2]+m[3]+m[4]+m[6]+m[7])
	}
	if len(keys) == 3 && strings.HasPrefix(keys[0], "router bgp") && keys[1] == "address-family l2vpn evpn" && strings.HasPrefix(keys[2], "vni") && line != "" {
		p.evpnRouteTarget(keys, line)
	}
	if strings.HasPrefix(keys[0], "vrf ") && line != "" && (strings.HasPrefix(line, "ip route") || strings.HasPrefix(line, "ipv6 route")) {
		p.add = append(p.add, Entry{Keys: keys, Line: "no " + line, moved: true})
		p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
	}
	if !deleted {
		p.reAdded(keys, line)
	}
	return nil
}

// segmentRoutingGlobalBlock drops a deleted "segment-routing global-block" line when its context adds one.
func (p *reAddPass) segmentRoutingGlobalBlock(keys []string, line string) {
	for _, a := range p.add {
		if keys[0] == a.Keys[0] && a.Line != "" && strings.Contains(a.Line, "segment-routing global-block") {
			p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
			break
		}
	}
}

// bgpLine runs the checks for a deleted line of a router bgp context; deleted reports whether one of them
// cancelled the deletion against other additions (then the plain re-add check is skipped).
func (p *reAddPass) bgpLine(keys []string, line string) (deleted bool, err error) {
	if strings.HasPrefix(line, "neighbor ") {
		if deleted, err = p.neighborLine(keys, line); err != nil {
			return false, err
		}
	}
	if strings.Contains(line, "multipath-relax") {
		old := "bgp bestpath as-path multipath-relax no-as-set"
		if found, _ := p.add.exist(keys, old, true); asRelaxNewRe.MatchString(line) && found {
			deleted = true
			p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
			p.addToDel = append(p.addToDel, Entry{Keys: keys, Line: old})
		}
	}
	if strings.HasPrefix(line, "table-map") {
		found, err := p.add.exist(keys, "table-map", false)
		if err != nil {
			return false, err
		}
		if found {
			p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
		}
	}
	return deleted, nil
}

// neighborLine runs the checks for a deleted "neighbor ..." line of a router bgp context; deleted as for bgpLine.
func (p *reAddPass) neighborLine(keys []string, line string) (deleted bool, err error) {
	deleted = p.ifacePeerGroup(keys, line)
	if nbrBFDTimersRe.MatchString(line) {
		// frr-reload.py rebinds the deletion's context to the last addition here and fails on added
		// contexts: not worth copying.
		return false, undecidable(0, "deleting the BFD timers %q", line)
	}
	if m := nbrRouteMapRe.FindStringSubmatch(line); m != nil {
		if err := p.routeMap(keys, line, m); err != nil {
			return false, err
		}
	}
	if p.ifaceRemoteAS(keys, line) {
		deleted = true
	}
	return deleted, nil
}

// ifaceNeighbor matches line against the "interface" form re and then the "interface v6only" form v6re of a
// neighbor statement: the neighbor, the form's argument and the matching "neighbor N interface [v6only]" line.
func ifaceNeighbor(line string, re, v6re *regexp.Regexp) (nbr, arg, iface string, ok bool) {
	m1, m2 := re.FindStringSubmatch(line), v6re.FindStringSubmatch(line)
	switch {
	case m1 != nil:
		return m1[1], m1[2], "neighbor " + m1[1] + " interface", true
	case m2 != nil:
		return m2[1], m2[2], "neighbor " + m2[1] + " interface v6only", true
	}
	return "", "", "", false
}

// ifacePeerGroup cancels a deleted "neighbor N interface [v6only] peer-group G" against the added interface and
// peer-group lines it splits into (the latter also in an IPv4 or IPv6 unicast address family); true if it did.
func (p *reAddPass) ifacePeerGroup(keys []string, line string) bool {
	swpx, pg, iface, ok := ifaceNeighbor(line, swpxIntPGRe, swpxIntV6PGRe)
	if !ok {
		return false
	}
	pgLine := "neighbor " + swpx + " peer-group " + pg
	foundIface, _ := p.add.exist(keys, iface, true)
	foundPG, _ := p.add.exist(keys, pgLine, true)
	tmp := keys
	if !foundPG {
		tmp = keysWith(keys, "address-family ipv4 unicast")
		if foundPG, _ = p.add.exist(tmp, pgLine, true); !foundPG {
			tmp = keysWith(keys, "address-family ipv6 unicast")
			foundPG, _ = p.add.exist(tmp, pgLine, true)
		}
	}
	if !foundIface || !foundPG {
		return false
	}
	p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
	p.addToDel = append(p.addToDel, Entry{Keys: keys, Line: iface}, Entry{Keys: tmp, Line: pgLine})
	return true
}

// routeMap is the check for a deleted "neighbor ... route-map ... in|out" line (m its match) against the added
// route-maps of the same neighbor and direction.
func (p *reAddPass) routeMap(keys []string, line string, m []string) error {
	adjust, saveLine := false, "EMPTY"
	search, err := regexp.Compile("neighbor" + m[1] + "route-map(.*)" + m[3])
	if err != nil {
		return undecidable(0, "route-map line %q: %v", line, err)
	}
	for _, a := range p.add {
		if !strings.HasPrefix(a.Keys[0], "router bgp") {
			continue
		}
		if a.Line != "" {
			p.rmMatch, p.rmBound = search.FindStringSubmatch(a.Line), true
		}
		if !p.rmBound {
			return undecidable(0, "frr-reload.py would fail on the added context %q while deleting %q", strings.Join(a.Keys, " / "), line)
		}
		if p.rmMatch == nil || p.rmMatch[1] == m[2] {
			continue
		}
		if len(a.Keys) == 1 {
			saveLine, adjust = line, true
		} else if len(keys) > 1 && len(a.Keys) > 1 && keys[1] == a.Keys[1] {
			p.delToDel = append(p.delToDel, Entry{Keys: a.Keys, Line: line})
		}
	}
	if adjust {
		for _, dl := range p.del {
			if strings.HasPrefix(dl.Keys[0], "router bgp") && len(dl.Keys) > 1 && dl.Keys[1] == "address-family ipv4 unicast" && saveLine == dl.Line {
				p.delToDel = append(p.delToDel, Entry{Keys: dl.Keys, Line: saveLine})
			}
		}
	}
	return nil
}

// ifaceRemoteAS cancels a deleted "neighbor N interface [v6only] remote-as AS" against the added interface and
// remote-as lines it splits into; true if it did.
func (p *reAddPass) ifaceRemoteAS(keys []string, line string) bool {
	swpx, ras, iface, ok := ifaceNeighbor(line, swpxIntRemoteASRe, swpxIntV6RASRe)
	if !ok {
		return false
	}
	rasLine := "neighbor " + swpx + " remote-as " + ras
	foundIface, _ := p.add.exist(keys, iface, true)
	foundRAS, _ := p.add.exist(keys, rasLine, true)
	if !foundIface || !foundRAS {
		return false
	}
	p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
	p.addToDel = append(p.addToDel, Entry{Keys: keys, Line: iface}, Entry{Keys: keys, Line: rasLine})
	return true
}

// importTable cancels a deleted "ip import-table N" context against each added "ip import-table N distance ...".
func (p *reAddPass) importTable(keys []string) {
	m := importTableRe.FindStringSubmatch(keys[0])
	if m == nil {
		return
	}
	for _, a := range p.add {
		if strings.HasPrefix(a.Keys[0], "ip import-table "+m[1]+" distance") {
			p.delToDel = append(p.delToDel, Entry{Keys: []string{"ip import-table " + m[1]}})
			p.addToDel = append(p.addToDel, Entry{Keys: a.Keys})
		}
	}
}

// evpnRouteTarget cancels a deleted "route-target import RT" of an EVPN VNI, with its deleted "export" twin,
// against an added "route-target both RT".
func (p *reAddPass) evpnRouteTarget(keys []string, line string) {
	m := rtImportRe.FindStringSubmatch(line)
	if m == nil {
		return
	}
	rt := strings.TrimSpace(m[1])
	export, both := "route-target export "+rt, "route-target both "+rt
	foundExport, _ := p.del.exist(keys, export, true)
	foundBoth, _ := p.add.exist(keys, both, true)
	if foundExport && foundBoth {
		p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line}, Entry{Keys: keys, Line: export})
		p.addToDel = append(p.addToDel, Entry{Keys: keys, Line: both})
	}
}

// reAdded cancels a deletion that is added again as it is, or for the IPv4 unicast address family of a router
// bgp context, added to the enclosing context.
func (p *reAddPass) reAdded(keys []string, line string) {
	if found, _ := p.add.exist(keys, line, true); found {
		p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
		p.addToDel = append(p.addToDel, Entry{Keys: keys, Line: line})
	} else if strings.HasPrefix(keys[0], "router bgp") && len(keys) > 1 && keys[1] == "address-family ipv4 unicast" {
		tmp := keys[:len(keys)-1]
		if found, _ := p.add.exist(tmp, line, true); found {
			p.delToDel = append(p.delToDel, Entry{Keys: keys, Line: line})
			p.addToDel = append(p.addToDel, Entry{Keys: tmp, Line: line})
		}
	}
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
	s := scanNeighborDeletions(del)
	if dialect == FRR10 {
		del = moveToEnd(del, s.toApp) // FRR 10 moves them also when no peer group is deleted
	}
	if !s.foundPGDel {
		del = bgpDeleteInstMoveLine(del)
		if len(s.delNbrCtx) > 0 {
			if del, err = bgpRemoveNeighborCfg(del, s.delNbr); err != nil {
				return nil, nil, err
			}
		}
		return add, del, nil
	}
	if dialect == FRR8 {
		del = moveToEnd(del, s.toApp)
	}
	if err := collectPGMembers(del, s.delDict); err != nil {
		return nil, nil, err
	}
	toDel, toApp, err := pgMemberDeletions(del, s.delDict)
	if err != nil {
		return nil, nil, err
	}
	if del, err = dropAndMoveLast(del, toDel, toApp); err != nil {
		return nil, nil, err
	}
	return add, bgpDeleteInstMoveLine(del), nil
}

// pgNbrs is a peer group whose definition is deleted, with its members among the deleted neighbor lines.
type pgNbrs struct {
	pg   string
	nbrs orderedSet
}

// nbrDeletions is what delete_move_lines gathers in its first pass over the deleted neighbor lines.
type nbrDeletions struct {
	toApp      entries                // deleted remote-as lines, to move to the end
	delDict    map[string][]*pgNbrs   // deleted peer-group definitions by router bgp context
	delNbrCtx  orderedSet             // contexts with a deleted peer-group membership, in first-seen order
	delNbr     map[string]*orderedSet // neighbors with a deleted peer-group membership by context
	foundPGDel bool                   // whether any peer-group definition is deleted
}

// scanNeighborDeletions is delete_move_lines' first pass over the deleted neighbor lines of router bgp contexts.
func scanNeighborDeletions(del entries) nbrDeletions {
	s := nbrDeletions{delDict: map[string][]*pgNbrs{}, delNbr: map[string]*orderedSet{}}
	var ctxOrder orderedSet
	for _, d := range del {
		if !isBGPNeighbor(d) {
			continue
		}
		k0 := d.Keys[0]
		if nbrRemoteASRe.MatchString(d.Line) {
			s.toApp = append(s.toApp, d)
		}
		if m := nbrAnyPGRe.FindStringSubmatch(d.Line); m != nil {
			if s.delNbrCtx.add(k0) {
				s.delNbr[k0] = &orderedSet{}
			}
			s.delNbr[k0].add(m[1])
		}
		if ctxOrder.add(k0) {
			s.delDict[k0] = nil
		}
		if m := pgDefRe.FindStringSubmatch(d.Line); m != nil && !slices.ContainsFunc(s.delDict[k0], func(p *pgNbrs) bool { return p.pg == m[1] }) {
			s.delDict[k0] = append(s.delDict[k0], &pgNbrs{pg: m[1]})
			s.foundPGDel = true
		}
	}
	return s
}

// moveToEnd moves each of the entries toApp (when still in del) to the end of del; one missing is skipped.
func moveToEnd(del, toApp entries) entries {
	for _, e := range toApp {
		del.remove(e)
		del = append(del, e)
	}
	return del
}

// collectPGMembers records in delDict the neighbors whose deleted lines put them in a peer group being deleted.
func collectPGMembers(del entries, delDict map[string][]*pgNbrs) error {
	for _, d := range del {
		if !isBGPNeighbor(d) {
			continue
		}
		for _, p := range delDict[d.Keys[0]] {
			re, err := compileQuoted(`neighbor (\S+) .*peer-group %s$`, p.pg)
			if err != nil {
				return err
			}
			if m := re.FindStringSubmatch(d.Line); m != nil {
				p.nbrs.add(m[1])
			}
		}
	}
	return nil
}

// pgMemberDeletions lists the deleted lines of the deleted peer groups' members (toDel, once per matching member)
// and the deleted peer-group definitions (toApp, to move after them).
func pgMemberDeletions(del entries, delDict map[string][]*pgNbrs) (toDel, toApp entries, err error) {
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
	return toDel, toApp, nil
}

// dropAndMoveLast removes toDel from del and moves toApp to its end; an entry no longer there is an error, as
// Python's list.remove would fail.
func dropAndMoveLast(del, toDel, toApp entries) (entries, error) {
	for _, e := range toDel {
		if !del.remove(e) {
			return nil, undecidable(0, "frr-reload.py would fail removing %q twice", e.Line)
		}
	}
	for _, e := range toApp {
		if !del.remove(e) {
			return nil, undecidable(0, "frr-reload.py would fail moving %q", e.Line)
		}
		del = append(del, e)
	}
	return del, nil
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
