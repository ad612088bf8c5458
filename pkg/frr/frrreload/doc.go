// Package frrreload applies a rendered frr.conf (pkg/frr) to running FRR daemons (a pkg/frr/frrvty Target)
// without resetting established sessions.
//
// A Reloader checks a config before FRR sees it (vtysh's parser, then a scratch zebra+bgpd in a namespace of its
// own, kept running between applies: a candidate is checked as the change from the config it holds - the delta
// the node's daemons get - and by a load into fresh daemons where that is not conclusive, which alone refuses;
// see scratch), installs it as frr.conf (mode 0600: it holds BGP passwords) and reloads. pkg/frr/frrdiff
// computes in Go what frr-reload.py computes, so a reload is one vtysh run of that delta and one show
// running-config to check the result (Path "delta"); where frrdiff cannot read a side, or FRR refuses part of
// the delta, frr-reload.py does it (Result.Path, PathReason). With a systemd reload over D-Bus the unit runs
// frr-reload.py. A Reloader skips configs equal to the last applied one, keeps that one on disk for a cold
// start, rolls back a failed reload and applies again while FRR's running config still differs. Result.Steps
// times each step (make bench shows them).
package frrreload
