/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
)

// mapVersionFormat names the canonical encoding below; change it whenever the encoding changes.
const mapVersionFormat = "mapversion/v1"

// MapVersion is the version of the BPF map content this spec produces: the sha256 (64 hex characters) over a
// canonical text encoding of exactly the data-plane-relevant fields:
//
//	strict mode,
//	every VRF's name, id, table id and VNI (sorted by id, then name), and its source-based-routing prefixes
//	(the router's sbr_table; only written when a VRF has some, so a spec without them keeps its version),
//	every interface's name, VLAN, VRF, mode and redirect target (sorted by name, then VLAN).
//
// Everything else (BGP, communities, MTU, the attach hook, the revision) leaves it unchanged, so an FRR-only change
// does not look like a data-plane change. An empty mode counts as "route", the API default. The operator stores it
// in spec.expectedMapVersion; the agent writes it into the BPF version map and reports what it reads back. It is a
// pure function of the spec: the same content always gives the same version.
func (s *NodeNetworkConfigSpec) MapVersion() string {
	h := sha256.New()
	writeMapVersion(h, s)
	return hex.EncodeToString(h.Sum(nil))
}

func writeMapVersion(w io.Writer, s *NodeNetworkConfigSpec) {
	fmt.Fprintf(w, "%s\nstrict %t\n", mapVersionFormat, s.DataPlane.Strict)

	vrfs := slices.Clone(s.VRFs)
	slices.SortFunc(vrfs, func(a, b NodeVRF) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Name, b.Name))
	})
	for _, v := range vrfs {
		fmt.Fprintf(w, "vrf %q id=%d table=%d vni=%d\n", v.Name, v.ID, v.TableID, v.VNI)
		if len(v.SBRPrefixes) > 0 {
			sbr := slices.Clone(v.SBRPrefixes)
			slices.Sort(sbr)
			fmt.Fprintf(w, "sbr %q\n", sbr)
		}
	}

	ifaces := slices.Clone(s.DataPlane.Interfaces)
	slices.SortFunc(ifaces, func(a, b DataPlaneInterface) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.VLAN, b.VLAN))
	})
	for _, i := range ifaces {
		mode := i.Mode
		if mode == "" {
			mode = ModeRoute
		}
		fmt.Fprintf(w, "iface %q vlan=%d vrf=%q mode=%s redirect=%q\n", i.Name, i.VLAN, i.VRF, mode, i.RedirectTarget)
	}
}
