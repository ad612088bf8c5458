package maps

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// ErrIncompatible is returned when a map does not have the layout this
// package was built for (e.g. pinned by an older program version).
var ErrIncompatible = errors.New("incompatible map")

// ErrStaleCleanup is wrapped in the error Apply returns when the new generation
// is live but deleting the old slot's entries failed. The next Apply removes
// them; forwarding is not affected.
var ErrStaleCleanup = errors.New("old generation not fully deleted")

// Set is the router's maps. It does not serialise Apply calls of different
// processes: one writer (the agent) owns the tables.
type Set struct {
	maps  bpf.RouterMaps
	owned bool // Close closes the maps (OpenPinned)
	ncpu  int
	grace *graceWaiter

	mu      sync.Mutex // serialises Apply within the process
	applied *applied   // guarded by mu
}

// applied remembers the generation this process last made live, so the next
// Apply need not read both slots back (the largest cost at 10k entries). It is
// trusted only while `version` still shows that generation and slot; anything
// else (another writer, a restart) forces a full read.
type applied struct {
	generation uint64
	slot       uint32
	live       *slotEntries
	tables     Tables // normalised
}

// New wraps maps that are already loaded (e.g. &objs.RouterMaps after
// bpf.LoadRouterObjects). The caller keeps ownership: Close does not close them.
// A generation that is already live in the maps is adopted, not reset.
// m.IfaceCache may be nil (maps of a router without it): the Set then writes
// no cache and the program finds every interface in the hash tables.
func New(m *bpf.RouterMaps) (*Set, error) {
	s := &Set{maps: *m}
	if err := s.init(); err != nil {
		return nil, err
	}
	return s, nil
}

// FromCollection wraps the router maps of a loaded collection (pkg/loader's
// Rebuild callback, before the collection is pinned). The collection keeps
// ownership.
func FromCollection(coll *ebpf.Collection) (*Set, error) {
	m := bpf.RouterMaps{
		IfaceTable:    coll.Maps[MapIfaceTable],
		VrfTable:      coll.Maps[MapVRFTable],
		RedirectTable: coll.Maps[MapRedirectTable],
		SbrTable:      coll.Maps[MapSBRTable],
		VrfCounters:   coll.Maps[MapVRFCounters],
		Version:       coll.Maps[MapVersion],
		IfaceCache:    coll.Maps[MapIfaceCache],
	}
	return New(&m)
}

// OpenPinned opens the maps pinned by name in dir (pkg/loader pins them
// there). The Set owns them: Close closes them. A generation that is already
// live is adopted: the next Apply continues from it.
func OpenPinned(dir string) (*Set, error) {
	s := &Set{owned: true}
	ptrs := map[string]**ebpf.Map{
		MapIfaceTable:    &s.maps.IfaceTable,
		MapVRFTable:      &s.maps.VrfTable,
		MapRedirectTable: &s.maps.RedirectTable,
		MapSBRTable:      &s.maps.SbrTable,
		MapVRFCounters:   &s.maps.VrfCounters,
		MapVersion:       &s.maps.Version,
	}
	for _, name := range MapNames {
		m, err := ebpf.LoadPinnedMap(filepath.Join(dir, name), nil)
		if err != nil {
			s.maps.Close()
			return nil, fmt.Errorf("open pinned map %s in %s: %w", name, dir, err)
		}
		*ptrs[name] = m
	}
	// Optional (see MapIfaceCache): pins of a router without it still work, through the hash tables.
	cache, err := ebpf.LoadPinnedMap(filepath.Join(dir, MapIfaceCache), nil)
	switch {
	case err == nil:
		s.maps.IfaceCache = cache
	case !errors.Is(err, os.ErrNotExist):
		s.maps.Close()
		return nil, fmt.Errorf("open pinned map %s in %s: %w", MapIfaceCache, dir, err)
	}
	if err := s.init(); err != nil {
		s.maps.Close()
		return nil, err
	}
	return s, nil
}

func (s *Set) init() error {
	if err := checkMaps(&s.maps); err != nil {
		return err
	}
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return fmt.Errorf("possible CPUs: %w", err)
	}
	s.ncpu = n
	s.grace = &graceWaiter{}
	return nil
}

// checkMaps compares type, key and value size of every map with the embedded
// program's spec. max_entries of the tables may differ (tests shrink them).
func checkMaps(m *bpf.RouterMaps) error {
	spec, err := bpf.LoadRouter() // the layout only: no kernel probe
	if err != nil {
		return err
	}
	have := map[string]*ebpf.Map{
		MapIfaceTable: m.IfaceTable, MapVRFTable: m.VrfTable, MapRedirectTable: m.RedirectTable,
		MapSBRTable: m.SbrTable, MapVRFCounters: m.VrfCounters, MapVersion: m.Version,
	}
	names := MapNames[:]
	if m.IfaceCache != nil {
		have[MapIfaceCache] = m.IfaceCache
		names = append(names, MapIfaceCache)
	}
	for _, name := range names {
		got, want := have[name], spec.Maps[name]
		if got == nil {
			return fmt.Errorf("map %s: missing", name)
		}
		info, err := got.Info()
		if err != nil {
			return fmt.Errorf("map %s: info: %w", name, err)
		}
		if got.Type() != want.Type || got.KeySize() != want.KeySize || got.ValueSize() != want.ValueSize {
			return fmt.Errorf("map %s: %s key %d value %d, want %s key %d value %d: %w", name,
				got.Type(), got.KeySize(), got.ValueSize(), want.Type, want.KeySize, want.ValueSize, ErrIncompatible)
		}
		if (name == MapVRFCounters || name == MapVersion || name == MapIfaceCache) && info.MaxEntries != want.MaxEntries {
			return fmt.Errorf("map %s: max_entries %d, want %d: %w", name, info.MaxEntries, want.MaxEntries, ErrIncompatible)
		}
	}
	return nil
}

// Maps returns the underlying maps (owned by the Set or by the caller of New).
func (s *Set) Maps() *bpf.RouterMaps { return &s.maps }

// Close releases the maps when the Set opened them, and the grace-period map.
func (s *Set) Close() error {
	errs := []error{s.grace.close()}
	if s.owned {
		errs = append(errs, s.maps.Close())
	}
	return errors.Join(errs...)
}

// Version is the decoded content of the version map.
type Version struct {
	Generation uint64   `json:"generation"` // 0: nothing applied yet
	Slot       uint32   `json:"slot"`
	Revision   string   `json:"revision"`
	TablesHash [32]byte `json:"tablesHash"`
}

func (s *Set) readVersion() (VersionInfo, error) {
	var v VersionInfo
	if err := s.maps.Version.Lookup(uint32(0), &v); err != nil {
		return v, fmt.Errorf("read %s: %w", MapVersion, err)
	}
	if v.Slot > 1 {
		return v, fmt.Errorf("read %s: slot %d is not 0 or 1: %w", MapVersion, v.Slot, ErrIncompatible)
	}
	return v, nil
}

func decodeVersion(v VersionInfo) Version {
	return Version{Generation: v.Generation, Slot: v.Slot, Revision: v.RevisionString(), TablesHash: v.TablesHash}
}

// Version returns the live generation.
func (s *Set) Version() (Version, error) {
	v, err := s.readVersion()
	if err != nil {
		return Version{}, err
	}
	return decodeVersion(v), nil
}

// slotEntries are the raw entries of one slot.
type slotEntries struct {
	ifaceKeys    []IfaceKey
	ifaceVals    []IfaceValue
	vrfKeys      []VRFKey
	vrfVals      []VRFValue
	redirectKeys []RedirectKey
	redirectVals []RedirectValue
	sbrKeys      []SBRKey
	sbrVals      []SBRValue
}

func (e *slotEntries) tables() Tables {
	var t Tables
	for i, k := range e.ifaceKeys {
		t.Interfaces = append(t.Interfaces, interfaceFrom(k, e.ifaceVals[i]))
	}
	for i, k := range e.vrfKeys {
		t.VRFs = append(t.VRFs, vrfFrom(k, e.vrfVals[i]))
	}
	for i, k := range e.redirectKeys {
		t.Redirects = append(t.Redirects, redirectFrom(k, e.redirectVals[i]))
	}
	for i, k := range e.sbrKeys {
		t.SBR = append(t.SBR, sbrFrom(k, e.sbrVals[i]))
	}
	return t.Normalize()
}

func entriesOf(t Tables, slot uint32) *slotEntries {
	e := &slotEntries{}
	for _, in := range t.Interfaces {
		k, v := in.entry(slot)
		e.ifaceKeys, e.ifaceVals = append(e.ifaceKeys, k), append(e.ifaceVals, v)
	}
	tables := make(map[uint32]uint32, len(t.VRFs))
	derived := t.vrfDerived()
	for _, vrf := range t.VRFs {
		k, v := vrf.entry(slot, derived)
		e.vrfKeys, e.vrfVals = append(e.vrfKeys, k), append(e.vrfVals, v)
		tables[vrf.ID] = vrf.TableID
	}
	for _, sbr := range t.SBR {
		k, v := sbr.entry(slot, tables[sbr.VRF])
		e.sbrKeys, e.sbrVals = append(e.sbrKeys, k), append(e.sbrVals, v)
	}
	for _, r := range t.Redirects {
		k, v := r.entry(slot)
		e.redirectKeys, e.redirectVals = append(e.redirectKeys, k), append(e.redirectVals, v)
	}
	return e
}

// readSlots reads all four tables and splits them by slot.
func (s *Set) readSlots() ([2]*slotEntries, error) {
	out := [2]*slotEntries{{}, {}}
	ik, iv, err := readAll[IfaceKey, IfaceValue](s.maps.IfaceTable)
	if err != nil {
		return out, fmt.Errorf("read %s: %w", MapIfaceTable, err)
	}
	for i, k := range ik {
		if k.Slot > 1 {
			continue // not ours; never read by the program
		}
		e := out[k.Slot]
		e.ifaceKeys, e.ifaceVals = append(e.ifaceKeys, k), append(e.ifaceVals, iv[i])
	}
	vk, vv, err := readAll[VRFKey, VRFValue](s.maps.VrfTable)
	if err != nil {
		return out, fmt.Errorf("read %s: %w", MapVRFTable, err)
	}
	for i, k := range vk {
		if k.Slot > 1 {
			continue
		}
		e := out[k.Slot]
		e.vrfKeys, e.vrfVals = append(e.vrfKeys, k), append(e.vrfVals, vv[i])
	}
	rk, rv, err := readAll[RedirectKey, RedirectValue](s.maps.RedirectTable)
	if err != nil {
		return out, fmt.Errorf("read %s: %w", MapRedirectTable, err)
	}
	for i, k := range rk {
		if k.Slot > 1 {
			continue
		}
		e := out[k.Slot]
		e.redirectKeys, e.redirectVals = append(e.redirectKeys, k), append(e.redirectVals, rv[i])
	}
	sk, sv, err := readAll[SBRKey, SBRValue](s.maps.SbrTable)
	if err != nil {
		return out, fmt.Errorf("read %s: %w", MapSBRTable, err)
	}
	for i, k := range sk {
		if k.Slot > 1 {
			continue
		}
		e := out[k.Slot]
		e.sbrKeys, e.sbrVals = append(e.sbrKeys, k), append(e.sbrVals, sv[i])
	}
	return out, nil
}

func (s *Set) writeEntries(e *slotEntries) error {
	if err := writeAll(s.maps.IfaceTable, e.ifaceKeys, e.ifaceVals); err != nil {
		return fmt.Errorf("write %s: %w", MapIfaceTable, err)
	}
	if err := writeAll(s.maps.VrfTable, e.vrfKeys, e.vrfVals); err != nil {
		return fmt.Errorf("write %s: %w", MapVRFTable, err)
	}
	if err := writeAll(s.maps.RedirectTable, e.redirectKeys, e.redirectVals); err != nil {
		return fmt.Errorf("write %s: %w", MapRedirectTable, err)
	}
	if err := writeAll(s.maps.SbrTable, e.sbrKeys, e.sbrVals); err != nil {
		return fmt.Errorf("write %s: %w", MapSBRTable, err)
	}
	return nil
}

func (s *Set) deleteEntries(e *slotEntries) error {
	return errors.Join(
		wrapIf(deleteAll(s.maps.IfaceTable, e.ifaceKeys), "delete from "+MapIfaceTable),
		wrapIf(deleteAll(s.maps.VrfTable, e.vrfKeys), "delete from "+MapVRFTable),
		wrapIf(deleteAll(s.maps.RedirectTable, e.redirectKeys), "delete from "+MapRedirectTable),
		wrapIf(deleteAll(s.maps.SbrTable, e.sbrKeys), "delete from "+MapSBRTable),
	)
}

func wrapIf(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Report describes what an Apply did.
type Report struct {
	NoOp       bool          `json:"noOp"` // desired tables and revision were already live
	Generation uint64        `json:"generation"`
	Slot       uint32        `json:"slot"`
	Revision   string        `json:"revision"`
	Changes    Diff          `json:"changes"`
	Duration   time.Duration `json:"duration"`
	Phases     Phases        `json:"phases"`
}

// Phases are the durations of Apply's steps.
type Phases struct {
	Read    time.Duration `json:"read"`    // validate, read live tables, diff
	Write   time.Duration `json:"write"`   // write the inactive slot
	Flip    time.Duration `json:"flip"`    // update version
	Grace   time.Duration `json:"grace"`   // RCU grace period
	Cleanup time.Duration `json:"cleanup"` // delete the old slot
}

func (r Report) String() string {
	if r.NoOp {
		return fmt.Sprintf("generation %d (%q) unchanged, %v", r.Generation, r.Revision, r.Duration)
	}
	return fmt.Sprintf("generation %d (%q) slot %d: interfaces %s vrfs %s redirects %s sbr %s in %v "+
		"(read %v write %v flip %v grace %v cleanup %v)", r.Generation, r.Revision, r.Slot,
		r.Changes.Interfaces, r.Changes.VRFs, r.Changes.Redirects, r.Changes.SBR, r.Duration,
		r.Phases.Read, r.Phases.Write, r.Phases.Flip, r.Phases.Grace, r.Phases.Cleanup)
}

// ErrRevisionTooLong is returned for revisions longer than MaxRevisionLen.
var ErrRevisionTooLong = errors.New("revision too long")

// MaxRevisionLen is the longest revision the version map holds (REVISION_LEN in bpf/router.h); a revision of
// exactly this length is stored without NUL terminator.
const MaxRevisionLen = limits.RevisionLen

// Apply makes desired the live generation. It validates first (nothing is
// written for invalid tables), does nothing when desired and revision are
// already live, and otherwise writes the inactive slot, flips version in one
// update, waits for an RCU grace period and deletes the old slot. When writing
// fails, what was written is removed and the old generation stays live. The
// revision is at most 64 bytes without NUL (e.g. a SHA-256 in hex).
func (s *Set) Apply(ctx context.Context, desired Tables, revision string) (Report, error) {
	start := time.Now()
	var rep Report
	if err := desired.Validate(); err != nil {
		return rep, err
	}
	rev, err := encodeRevision(revision)
	if err != nil {
		return rep, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return rep, err
	}

	// Phase read: what is live, and the difference.
	cur, err := s.current()
	if err != nil {
		return rep, err
	}
	want := desired.Normalize()
	hash := want.Hash()
	rep.Changes = DiffTables(cur.tables, want)
	rep.Revision = revision
	cached, err := s.cacheCurrent(cur.version)
	if err != nil {
		return rep, err
	}
	if rep.Changes.Zero() && cur.version.RevisionString() == revision && cur.version.TablesHash == hash &&
		cur.version.Reasons == bpf.RouterReasonREASON_MAX && cached {
		s.keepNoOp(cur)
		rep.NoOp, rep.Generation, rep.Slot = true, cur.version.Generation, cur.version.Slot
		rep.Phases.Read = time.Since(start)
		rep.Duration = rep.Phases.Read
		return rep, nil
	}
	rep.Phases.Read = time.Since(start)
	s.applied = nil // whatever happens below, the maps no longer match the cache

	// Phase write: the new generation under the inactive slot.
	t := time.Now()
	next := otherSlot(cur.version.Slot)
	written, err := s.writeGeneration(ctx, cur, want, hash, next)
	if err != nil {
		return rep, err
	}
	rep.Phases.Write = time.Since(t)

	// Phase flip: one update of version makes it live.
	t = time.Now()
	ver := VersionInfo{Generation: cur.version.Generation + 1, Slot: next, Reasons: bpf.RouterReasonREASON_MAX,
		TablesHash: hash, Revision: rev}
	if err := s.maps.Version.Update(uint32(0), ver, ebpf.UpdateAny); err != nil {
		return rep, s.rollback(written, fmt.Errorf("flip %s to generation %d: %w", MapVersion, ver.Generation, err))
	}
	rep.Phases.Flip = time.Since(t)
	rep.Generation, rep.Slot = ver.Generation, ver.Slot

	// Phases grace and cleanup: the new generation is live; finish even if ctx ends.
	err = s.retire(&rep, cur, ver)
	rep.Duration = time.Since(start)
	if err != nil {
		return rep, err
	}
	s.applied = &applied{generation: ver.Generation, slot: next, live: written, tables: want}
	return rep, nil
}

// encodeRevision is the revision as the version map stores it.
func encodeRevision(revision string) ([MaxRevisionLen]int8, error) {
	var rev [MaxRevisionLen]int8
	if len(revision) > len(rev) {
		return rev, fmt.Errorf("revision %q: %d bytes, max %d: %w", revision, len(revision), len(rev), ErrRevisionTooLong)
	}
	if strings.IndexByte(revision, 0) >= 0 {
		return rev, fielderr.Join(field.ErrorList{field.Invalid(field.NewPath("revision"), revision, "contains a NUL byte")})
	}
	for i := range len(revision) {
		rev[i] = int8(revision[i])
	}
	return rev, nil
}

// liveState is what Apply starts from: the version, the entries of both slots and the live tables.
type liveState struct {
	version VersionInfo
	slots   [2]*slotEntries
	tables  Tables // normalised
}

// current reads the live state, from the cache of the last Apply when version still shows that generation.
// Called with s.mu held.
func (s *Set) current() (liveState, error) {
	live, err := s.readVersion()
	if err != nil {
		return liveState{}, err
	}
	cur := liveState{version: live}
	if c := s.applied; c != nil && c.generation == live.Generation && c.slot == live.Slot {
		cur.slots[live.Slot], cur.slots[otherSlot(live.Slot)] = c.live, &slotEntries{}
		cur.tables = c.tables
		return cur, nil
	}
	s.applied = nil
	if cur.slots, err = s.readSlots(); err != nil {
		return liveState{}, err
	}
	cur.tables = cur.slots[live.Slot].tables()
	return cur, nil
}

// keepNoOp caches a live generation an Apply found already in place, when nothing else is in the maps.
func (s *Set) keepNoOp(cur liveState) {
	if cur.slots[otherSlot(cur.version.Slot)].empty() {
		s.applied = &applied{generation: cur.version.Generation, slot: cur.version.Slot,
			live: cur.slots[cur.version.Slot], tables: cur.tables}
	}
}

// writeGeneration clears the inactive slot (leftovers of an interrupted Apply) and writes want into it. On
// failure nothing of want stays in the maps.
func (s *Set) writeGeneration(ctx context.Context, cur liveState, want Tables, hash [32]byte, next uint32) (*slotEntries, error) {
	if err := s.deleteEntries(cur.slots[next]); err != nil {
		return nil, fmt.Errorf("clear inactive slot %d: %w", next, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	written := entriesOf(want, next)
	if err := s.writeEntries(written); err != nil {
		return nil, s.rollback(written, fmt.Errorf("write generation %d to slot %d: %w", cur.version.Generation+1, next, err))
	}
	// The inactive slot's cache is not read before the flip; a failure leaves it for the next Apply to rewrite.
	if err := s.writeCache(want, hash, next); err != nil {
		return nil, s.rollback(written, fmt.Errorf("write generation %d to slot %d: %w", cur.version.Generation+1, next, err))
	}
	if err := ctx.Err(); err != nil {
		return nil, s.rollback(written, err)
	}
	return written, nil
}

// writeCache writes every bucket of slot's part of iface_cache for want (normalised) whose Hash is hash.
func (s *Set) writeCache(want Tables, hash [32]byte, slot uint32) error {
	if s.maps.IfaceCache == nil {
		return nil
	}
	vals := ifaceCache(want, hash)
	keys := make([]uint32, len(vals))
	for i := range keys {
		keys[i] = slot*limits.IfaceCacheBuckets + uint32(i)
	}
	if err := writeAll(s.maps.IfaceCache, keys, vals); err != nil {
		return fmt.Errorf("write %s: %w", MapIfaceCache, err)
	}
	return nil
}

// cacheCurrent reports whether the live slot's iface_cache was written for the live tables (always true
// without the map). It is false after an upgrade from a router without the cache or after a writer that does
// not know it: Apply then writes the same tables again, cache included, instead of finding nothing to do.
func (s *Set) cacheCurrent(live VersionInfo) (bool, error) {
	if s.maps.IfaceCache == nil || live.Generation == 0 {
		return true, nil
	}
	var first IfaceCacheValue
	if err := s.maps.IfaceCache.Lookup(live.Slot*limits.IfaceCacheBuckets, &first); err != nil {
		return false, fmt.Errorf("read %s: %w", MapIfaceCache, err)
	}
	return first.Stamp == cacheStamp(live.TablesHash), nil
}

// retire waits until no packet can still use the old slot, then deletes its entries; it fills in the two
// phases of rep.
func (s *Set) retire(rep *Report, cur liveState, ver VersionInfo) error {
	t := time.Now()
	if err := s.grace.wait(); err != nil {
		return fmt.Errorf("generation %d is live, but waiting for the RCU grace period failed, old slot %d kept: %w: %w",
			ver.Generation, cur.version.Slot, err, ErrStaleCleanup)
	}
	rep.Phases.Grace = time.Since(t)
	t = time.Now()
	err := s.deleteEntries(cur.slots[cur.version.Slot])
	rep.Phases.Cleanup = time.Since(t)
	if err != nil {
		return fmt.Errorf("generation %d is live: %w: %w", ver.Generation, err, ErrStaleCleanup)
	}
	return nil
}

// otherSlot is the other slot of the A/B pair.
func otherSlot(slot uint32) uint32 { return 1 - slot }

func (e *slotEntries) empty() bool {
	return len(e.ifaceKeys) == 0 && len(e.vrfKeys) == 0 && len(e.redirectKeys) == 0 && len(e.sbrKeys) == 0
}

func (s *Set) rollback(written *slotEntries, cause error) error {
	if err := s.deleteEntries(written); err != nil {
		return fmt.Errorf("%w (and removing the partial generation failed: %v)", cause, err)
	}
	return cause
}

// VRFCounters are the counters of one VRF, summed over CPUs. Reasons with zero
// packets are left out.
type VRFCounters struct {
	VRF      uint32             `json:"vrf"`
	ByReason map[Reason]Counter `json:"byReason"`
}

// Total sums all reasons.
func (c VRFCounters) Total() Counter {
	var t Counter
	for _, v := range c.ByReason {
		t = t.Add(v)
	}
	return t
}

// Snapshot is the live state of the maps.
type Snapshot struct {
	Version  Version       `json:"version"`
	Tables   Tables        `json:"tables"`
	Counters []VRFCounters `json:"counters"` // VRFs with any packet, by VRF id
}

// Dump reads the live generation and the counters.
func (s *Set) Dump(ctx context.Context) (Snapshot, error) {
	snap, err := s.DumpTables(ctx)
	if err != nil {
		return snap, err
	}
	if err := ctx.Err(); err != nil {
		return snap, err
	}
	snap.Counters, err = s.Counters()
	return snap, err
}

// DumpTables reads the live generation without the counters (the agent's plan compares tables only; the
// per-CPU counters of every VRF were most of what a resync read).
func (s *Set) DumpTables(ctx context.Context) (Snapshot, error) {
	var snap Snapshot
	if err := ctx.Err(); err != nil {
		return snap, err
	}
	s.mu.Lock()
	v, slots, err := s.readLiveRetry()
	s.mu.Unlock()
	if err != nil {
		return snap, err
	}
	snap.Version = decodeVersion(v)
	snap.Tables = slots[v.Slot].tables()
	return snap, nil
}

// ErrTornRead is returned when the tables read do not belong to one generation: another writer applied while
// they were read (the version changed), or the live slot does not hold what the version says. The caller decides:
// read again (a bounded number of times) or fail; it never gets a mixed snapshot.
var ErrTornRead = errors.New("live tables changed while they were read")

// liveReadAttempts bounds how often Dump reads again after ErrTornRead.
const liveReadAttempts = 3

// readLiveRetry is readLive, read again up to liveReadAttempts times while another writer moves the generation on.
func (s *Set) readLiveRetry() (VersionInfo, [2]*slotEntries, error) {
	var err error
	for range liveReadAttempts {
		var (
			v     VersionInfo
			slots [2]*slotEntries
		)
		v, slots, err = s.readLive(s.readSlots)
		if !errors.Is(err, ErrTornRead) {
			return v, slots, err
		}
	}
	return VersionInfo{}, [2]*slotEntries{}, fmt.Errorf("%d attempts: %w", liveReadAttempts, err)
}

// readLive reads version, then the tables with readSlots, then version again. It returns ErrTornRead when the
// version changed in between or the live slot's tables do not hash to the version's TablesHash (generation 0,
// nothing applied yet, has no hash).
func (s *Set) readLive(readSlots func() ([2]*slotEntries, error)) (VersionInfo, [2]*slotEntries, error) {
	v, err := s.readVersion()
	if err != nil {
		return VersionInfo{}, [2]*slotEntries{}, err
	}
	slots, err := readSlots()
	if err != nil {
		return VersionInfo{}, [2]*slotEntries{}, err
	}
	again, err := s.readVersion()
	if err != nil {
		return VersionInfo{}, [2]*slotEntries{}, err
	}
	if again != v {
		return VersionInfo{}, [2]*slotEntries{}, fmt.Errorf("generation %d became %d: %w", v.Generation, again.Generation, ErrTornRead)
	}
	if v.Generation != 0 && slots[v.Slot].tables().Hash() != v.TablesHash {
		return VersionInfo{}, [2]*slotEntries{}, fmt.Errorf("slot %d does not hold generation %d (tables hash differs): %w",
			v.Slot, v.Generation, ErrTornRead)
	}
	return v, slots, nil
}

// Counters returns the counters of every VRF with traffic, summed over CPUs.
func (s *Set) Counters() ([]VRFCounters, error) {
	keys, vals, err := readPerCPU[VRFStats](s.maps.VrfCounters, s.ncpu)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", MapVRFCounters, err)
	}
	var out []VRFCounters
	for i, k := range keys {
		var c VRFCounters
		for _, percpu := range vals[i] {
			for r, rc := range percpu.Reasons {
				if rc.Packets == 0 && rc.Bytes == 0 {
					continue
				}
				if c.ByReason == nil {
					c.ByReason = make(map[Reason]Counter)
				}
				c.ByReason[Reason(r)] = c.ByReason[Reason(r)].Add(Counter{rc.Packets, rc.Bytes})
			}
		}
		if c.ByReason != nil {
			c.VRF = k
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b VRFCounters) int { return cmp.Compare(a.VRF, b.VRF) })
	return out, nil
}
