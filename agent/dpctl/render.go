package dpctl

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/network-operator/network-operator/pkg/maps"
)

// Dump is what `dataplane dump` prints: the live tables (VRFs, interfaces, redirects, source-based routing) with
// interface names, the version and the per-VRF counters summed over CPUs. Its JSON form is stable for scripts (jq) and tests.
type Dump struct {
	PinDir     string          `json:"pinDir"`
	Version    DumpVersion     `json:"version"`
	VRFs       []DumpVRF       `json:"vrfs"`
	Interfaces []DumpInterface `json:"interfaces"`
	Redirects  []DumpRedirect  `json:"redirects"`
	SBR        []DumpSBR       `json:"sbr"`
	Counters   []DumpCounters  `json:"counters"`
}

// DumpVersion is the live generation.
type DumpVersion struct {
	Generation uint64 `json:"generation"` // 0: nothing applied yet
	Slot       uint32 `json:"slot"`
	Revision   string `json:"revision"`
	TablesHash string `json:"tablesHash"` // hex sha256 of the tables
}

// DumpVRF is one vrf_table entry.
type DumpVRF struct {
	ID              uint32 `json:"id"`
	Name            string `json:"name,omitempty"` // from the tables file, when dump got one
	Table           uint32 `json:"table"`
	VNI             uint32 `json:"vni,omitempty"`
	LookupInterface string `json:"lookupInterface,omitempty"`
	LookupIfindex   uint32 `json:"lookupIfindex,omitempty"`
}

// DumpInterface is one iface_table entry.
type DumpInterface struct {
	Name    string `json:"name"`
	Ifindex uint32 `json:"ifindex"`
	VLAN    uint16 `json:"vlan,omitempty"`
	Mode    string `json:"mode"`
	VRF     uint32 `json:"vrf,omitempty"`
	VRFName string `json:"vrfName,omitempty"`
	Strict  bool   `json:"strict,omitempty"`
	// Peer: what the tc router routes out of this interface goes to its peer directly (bpf_redirect_peer).
	Peer bool `json:"peer,omitempty"`
}

// DumpRedirect is one redirect_table entry.
type DumpRedirect struct {
	From          string `json:"from"`
	FromIfindex   uint32 `json:"fromIfindex"`
	To            string `json:"to"`
	ToIfindex     uint32 `json:"toIfindex"`
	Peer          bool   `json:"peer,omitempty"`
	SrcMAC        string `json:"srcMAC,omitempty"`
	DstMAC        string `json:"dstMAC,omitempty"`
	RewritesMACs  bool   `json:"rewritesMACs,omitempty"`
	EgressMissing bool   `json:"egressMissing,omitempty"` // the egress ifindex names no interface here
}

// DumpSBR is one sbr_table entry: traffic from Prefix is routed by the table of VRF.
type DumpSBR struct {
	Prefix  string `json:"prefix"`
	VRF     uint32 `json:"vrf"`
	VRFName string `json:"vrfName,omitempty"`
	Table   uint32 `json:"table,omitempty"` // the VRF's routing table; 0: the VRF is not in vrfs
}

// DumpCounters are one VRF's counters; VRF 0 counts packets of interfaces not in the tables.
type DumpCounters struct {
	VRF      uint32                  `json:"vrf"`
	VRFName  string                  `json:"vrfName,omitempty"`
	ByReason map[string]maps.Counter `json:"byReason"`
	Total    maps.Counter            `json:"total"`
	// Forwarded, Passed and Dropped sum the reasons by what happened to the packets (their class in
	// bpf/router.h); counter slots this build has no reason for are in Total only.
	Forwarded maps.Counter `json:"forwarded"`
	Passed    maps.Counter `json:"passed"`
	Dropped   maps.Counter `json:"dropped"`
}

// NameFunc names an ifindex on this node; ok false when no interface has it.
type NameFunc func(ifindex uint32) (name string, ok bool)

// NewDump decorates a snapshot with interface and VRF names. vrfNames may be nil.
func NewDump(pinDir string, s maps.Snapshot, names NameFunc, vrfNames map[uint32]string) Dump {
	name := func(idx uint32) string {
		if n, ok := names(idx); ok {
			return n
		}
		return "#" + strconv.FormatUint(uint64(idx), 10)
	}
	t := s.Tables.Normalize()
	d := Dump{
		PinDir: pinDir,
		Version: DumpVersion{Generation: s.Version.Generation, Slot: s.Version.Slot, Revision: s.Version.Revision,
			TablesHash: hex.EncodeToString(s.Version.TablesHash[:])},
		VRFs:       []DumpVRF{},
		Interfaces: []DumpInterface{},
		Redirects:  []DumpRedirect{},
		SBR:        []DumpSBR{},
		Counters:   []DumpCounters{},
	}
	tableOf := make(map[uint32]uint32, len(t.VRFs))
	for _, v := range t.VRFs {
		dv := DumpVRF{ID: v.ID, Name: vrfNames[v.ID], Table: v.TableID, VNI: v.VNI, LookupIfindex: v.LookupIfindex}
		if v.LookupIfindex != 0 {
			dv.LookupInterface = name(v.LookupIfindex)
		}
		d.VRFs = append(d.VRFs, dv)
		tableOf[v.ID] = v.TableID
	}
	for _, in := range t.Interfaces {
		d.Interfaces = append(d.Interfaces, DumpInterface{Name: name(in.Ifindex), Ifindex: in.Ifindex, VLAN: in.VLAN,
			Mode: in.Mode.String(), VRF: in.VRF, VRFName: vrfNames[in.VRF], Strict: in.Strict,
			Peer: in.Peer})
	}
	for _, r := range t.Redirects {
		dr := DumpRedirect{From: name(r.Ifindex), FromIfindex: r.Ifindex, To: name(r.EgressIfindex),
			ToIfindex: r.EgressIfindex, Peer: r.Peer}
		if _, ok := names(r.EgressIfindex); !ok && !r.Peer {
			dr.EgressMissing = true
		}
		if !r.DstMAC.IsZero() {
			dr.RewritesMACs, dr.SrcMAC, dr.DstMAC = true, r.SrcMAC.String(), r.DstMAC.String()
		}
		d.Redirects = append(d.Redirects, dr)
	}
	for _, e := range t.SBR {
		d.SBR = append(d.SBR, DumpSBR{Prefix: e.Prefix.String(), VRF: e.VRF, VRFName: vrfNames[e.VRF], Table: tableOf[e.VRF]})
	}
	for _, c := range s.Counters {
		dc := DumpCounters{VRF: c.VRF, VRFName: vrfNames[c.VRF], ByReason: map[string]maps.Counter{}}
		for r, n := range c.ByReason {
			dc.ByReason[r.String()] = n
			dc.Total = dc.Total.Add(n)
			// A slot this build has no reason for (ActionUnknown) counts in Total only.
			switch r.Action() {
			case maps.ActionForwarded:
				dc.Forwarded = dc.Forwarded.Add(n)
			case maps.ActionPassed:
				dc.Passed = dc.Passed.Add(n)
			case maps.ActionDropped:
				dc.Dropped = dc.Dropped.Add(n)
			}
		}
		d.Counters = append(d.Counters, dc)
	}
	slices.SortFunc(d.Counters, func(a, b DumpCounters) int { return int(a.VRF) - int(b.VRF) })
	return d
}

// WriteJSON writes the dump as indented JSON.
func (d Dump) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// WriteTable writes the dump as aligned text sections for people.
func (d Dump) WriteTable(w io.Writer) error {
	var b strings.Builder
	if d.Version.Generation == 0 {
		fmt.Fprintf(&b, "Version    nothing applied yet (pins in %s)\n", d.PinDir)
	} else {
		fmt.Fprintf(&b, "Version    generation %d, slot %d, revision %q, tables %s (pins in %s)\n",
			d.Version.Generation, d.Version.Slot, d.Version.Revision, d.Version.TablesHash[:16], d.PinDir)
	}

	b.WriteString("\nVRFs\n")
	tw := table(&b, "ID", "NAME", "TABLE", "VNI", "LOOKUP INTERFACE")
	for _, v := range d.VRFs {
		row(tw, v.ID, dash(v.Name), v.Table, dashNum(v.VNI), dash(v.LookupInterface))
	}
	done(tw, len(d.VRFs))

	b.WriteString("\nInterfaces\n")
	tw = table(&b, "NAME", "IFINDEX", "VLAN", "MODE", "VRF", "STRICT", "PEER")
	for _, in := range d.Interfaces {
		row(tw, in.Name, in.Ifindex, dashNum(uint32(in.VLAN)), in.Mode, vrfLabel(in.VRF, in.VRFName, in.Mode), yesNo(in.Strict),
			yesNo(in.Peer))
	}
	done(tw, len(d.Interfaces))

	b.WriteString("\nRedirects\n")
	tw = table(&b, "FROM", "TO", "PEER", "SRC MAC", "DST MAC")
	for _, r := range d.Redirects {
		to := r.To
		if r.EgressMissing {
			to += " (missing)"
		}
		row(tw, r.From, to, yesNo(r.Peer), dash(r.SrcMAC), dash(r.DstMAC))
	}
	done(tw, len(d.Redirects))

	b.WriteString("\nSource-based routing\n")
	tw = table(&b, "PREFIX", "VRF", "TABLE")
	for _, e := range d.SBR {
		row(tw, e.Prefix, vrfLabel(e.VRF, e.VRFName, ""), dashNum(e.Table))
	}
	done(tw, len(d.SBR))

	b.WriteString("\nTraffic per VRF (packets, summed over CPUs)\n")
	tw = table(&b, "VRF", "FORWARDED", "PASSED", "DROPPED", "BYTES")
	for _, c := range d.Counters {
		row(tw, vrfLabel(c.VRF, c.VRFName, ""), c.Forwarded.Packets, c.Passed.Packets, c.Dropped.Packets, c.Total.Bytes)
	}
	done(tw, len(d.Counters))

	b.WriteString("\nBy reason\n")
	tw = table(&b, "VRF", "REASON", "ACTION", "PACKETS", "BYTES")
	for _, c := range d.Counters {
		label := vrfLabel(c.VRF, c.VRFName, "")
		for s := range maps.ReasonSlots { // every slot: also those this build has no reason for
			r := maps.Reason(s)
			if n, ok := c.ByReason[r.String()]; ok {
				row(tw, label, r, r.Action(), n.Packets, n.Bytes)
				label = ""
			}
		}
	}
	done(tw, len(d.Counters))
	_, err := io.WriteString(w, b.String())
	return err
}

func table(w io.Writer, header ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\n", strings.Join(header, "\t"))
	return tw
}

func row(tw *tabwriter.Writer, cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = fmt.Sprint(c)
	}
	fmt.Fprintf(tw, "  %s\n", strings.Join(s, "\t"))
}

func done(tw *tabwriter.Writer, n int) {
	if n == 0 {
		fmt.Fprintln(tw, "  (none)")
	}
	_ = tw.Flush()
}

func vrfLabel(id uint32, name, mode string) string {
	switch {
	case id == 0 && mode != "":
		return "-"
	case id == 0:
		return "0 (no VRF)"
	case name != "":
		return fmt.Sprintf("%d %s", id, name)
	}
	return strconv.FormatUint(uint64(id), 10)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func dashNum(n uint32) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatUint(uint64(n), 10)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
