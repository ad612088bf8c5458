// Package frr renders FRR 8.4 configuration for a BGP-EVPN node from its
// desired state, validates it, reloads it into the running daemons without
// resetting established sessions, and reads BGP session state back.
//
// Rendering: a NodeConfig (pkg/frr's own model; the node agent translates its
// API objects into it in agent/frrconfig) is validated, with errors
// naming field and value, and rendered by Render into a complete frr.conf,
// or by RenderBrownfield into a host's own base config at its hint comments
// ("#++{{.VRFs}}" and friends), leaving every other byte as it was. One
// embedded text/template per concern (templates/): the underlay BGP
// instance, L2VNIs, VRF to L3VNI mapping, per-VRF BGP instances, workload
// peerings and their address-family lines, prefix-lists, route-maps. Output
// is sorted and deterministic; testdata/golden holds one file per case
// (refresh: go test ./pkg/frr -run 'TestGolden$' -update).
//
// Applying: a Reloader checks a config before FRR sees it (vtysh's parser,
// then a scratch zebra+bgpd in a namespace of its own, kept running between
// applies: a candidate is checked as the change from the config it holds -
// the delta the node's daemons get - and by a load into fresh daemons where
// that is not conclusive, which alone refuses; see scratch), installs it as
// frr.conf (mode 0600: it holds BGP passwords) and reloads. Package frrdiff
// computes in Go what frr-reload.py computes (the lines to delete and add
// against "show running-config"), so a reload is one vtysh run of that delta
// and one show running-config to check the result (Path "delta"); where
// frrdiff cannot read a side, or FRR refuses part of the delta, frr-reload.py
// does it (Result.Path, PathReason). With a systemd reload over D-Bus the unit
// runs frr-reload.py. A Reloader skips configs equal to the last applied one,
// keeps that one on disk for a cold start, rolls back a failed reload and
// applies again while FRR's running config still differs. Result.Steps times
// each step (make bench shows them).
//
// Reading: Target.Summary, EVPNSummary, Neighbors, VNIs and EVPNRoutes decode
// FRR's "show ... json" output into typed structs for status and metrics.
//
// Secrets: passwords are Secret values that print as "<redacted>"; FRR
// output passed back in errors goes through Redact.
package frr
