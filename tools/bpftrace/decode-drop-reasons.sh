#!/usr/bin/env bash
# decode-drop-reasons.sh - filter for drops.bt output: replaces the numeric drop reason in `@drops[dev, N, loc]`
# lines with its name from this kernel's tracefs (the enum changes between kernel versions, so it is read, not
# hard-coded).  Usage: bpftrace tools/bpftrace/drops.bt | tools/bpftrace/decode-drop-reasons.sh
set -euo pipefail
format=/sys/kernel/tracing/events/skb/kfree_skb/format
[[ -r $format ]] || format=/sys/kernel/debug/tracing/events/skb/kfree_skb/format
if [[ ! -r $format ]]; then
  echo "decode-drop-reasons: $format not readable (mount tracefs: mount -t tracefs tracefs /sys/kernel/tracing)" >&2
  exec cat
fi
# The print fmt line holds __print_symbolic(REC->reason, { 2, "NOT_SPECIFIED" }, ...).
table=$(grep -o '{ [0-9]*, "[A-Z0-9_]*" }' "$format" | tr -d '{}",' | awk '{print $1 "=" $2}' | paste -sd' ')
exec awk -v table="$table" '
  BEGIN { n = split(table, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); name[p[1]] = p[2] } }
  /^@drops\[/ {
    if (match($0, /, [0-9]+, /)) {
      num = substr($0, RSTART + 2, RLENGTH - 4)
      if (num in name) { $0 = substr($0, 1, RSTART + 1) name[num] substr($0, RSTART + RLENGTH - 2) }
    }
  }
  { print; fflush() }'
