// Package frrvty reaches running FRR daemons and reads their state. A Target says where the daemons and their
// files are; Vtysh runs commands through vtysh, Show sends "show bgp ..." straight to bgpd's vty socket (no
// process start: the agent's health check polls it), and Summary, EVPNSummary, Neighbors, VNIs and EVPNRoutes
// decode FRR's "show ... json" output into typed structs for status and metrics. Applying a config is
// pkg/frr/frrreload's job; what a config holds is pkg/frr's.
package frrvty
