// Package frr renders FRR 8.4 configuration for a BGP-EVPN node from its
// desired state, validates it, reloads it into the running daemons without
// resetting established sessions, and reads BGP session state back.
//
// Rendering: a NodeConfig (pkg/frr's own model; the node agent translates its
// API objects into it in internal/agent/frrconfig) is validated, with errors
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
// then a load into a scratch zebra+bgpd in a throw-away namespace, then
// frr-reload.py --test against the running daemons), installs it as frr.conf
// (mode 0600: it holds BGP passwords) and reloads with frr-reload.py or a
// systemd reload over D-Bus. It skips configs equal to the last applied one,
// keeps that one on disk for a cold start, rolls back a failed reload and
// re-runs frr-reload.py while FRR's running config still differs.
//
// Reading: Target.Summary, EVPNSummary, Neighbors, VNIs and EVPNRoutes decode
// FRR's "show ... json" output into typed structs for status and metrics.
//
// Secrets: passwords are Secret values that print as "<redacted>"; FRR
// output passed back in errors goes through Redact.
package frr
