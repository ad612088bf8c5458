// Package frr is the desired FRR configuration of a BGP-EVPN node and its rendering. It does no I/O: it neither
// runs FRR nor reads it. The packages below it do one job each:
//
//   - frr (this package): a NodeConfig (pkg/frr's own model; the node agent translates its API objects into it in
//     agent/frrmodel) is validated, with errors naming field and value, and rendered by Render into a complete
//     frr.conf, or by RenderBrownfield into a host's own base config at its hint comments ("#++{{.VRFs}}" and
//     friends), leaving every other byte as it was. One embedded text/template per concern (templates/): the
//     underlay BGP instance, L2VNIs, VRF to L3VNI mapping, per-VRF BGP instances, workload peerings and their
//     address-family lines, prefix-lists, route-maps. Output is sorted and deterministic; testdata/golden holds
//     one file per case (refresh: go test ./pkg/frr -run 'TestGolden$' -update). Version is the FRR release a
//     config is rendered for.
//   - frrreload: apply a rendered file to running daemons: check it (vtysh's parser, a scratch FRR), install it
//     as frr.conf and reload without resetting established sessions (a Go delta, frr-reload.py, or systemd).
//   - frrvty: reach running daemons (Target: vtysh and their vty sockets) and read their state back ("show ...
//     json" decoded into typed structs for status and metrics).
//   - frrdiff: what frr-reload.py computes, in Go (the lines to delete and add against "show running-config").
//   - frrproc: start FRR's daemons in a network namespace of their own (scratch instances, tests).
//
// Secrets: passwords are Secret values that print as "<redacted>"; FRR text passed back in errors goes through
// Redact.
package frr
