// Package dpctl is the data-plane command line of the node agent (`network-agent dataplane ...`): attach the
// eBPF router to interfaces, apply routing tables (VRFs, interfaces, redirects, source-based routing prefixes)
// from a YAML file that names interfaces (resolved to ifindexes on the node) and VRFs, dump the live tables,
// version and per-VRF counters, detach and uninstall. It drives pkg/loader (programs, pins, attachments) and
// pkg/maps (tables and counters); it holds no data-plane logic of its own.
package dpctl
