{{/* Labels of every object of the release. */}}
{{- define "netop.labels" -}}
app.kubernetes.io/part-of: network-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{/* image NAME TAG: repository/name:tag, the tag defaulting to image.tag and then appVersion. */}}
{{- define "netop.image" -}}
{{- $root := index . 0 }}{{ $name := index . 1 }}{{ $tag := index . 2 }}
{{- printf "%s/%s:%s" $root.Values.image.repository $name (default (default $root.Chart.AppVersion $root.Values.image.tag) $tag) }}
{{- end }}

{{- define "netop.bgpPasswordNamespace" -}}
{{- default .Release.Namespace .Values.bgpPasswordNamespace }}
{{- end }}

{{/* Cross-field rules the schema cannot say; each failure names the value. */}}
{{- define "netop.validate" -}}
{{- range $cap := list "NET_ADMIN" "BPF" }}
{{- if not (has $cap $.Values.agent.capabilities) }}
{{- fail (printf "agent.capabilities: %v lacks %s, which the agent needs (netlink and tc/XDP need NET_ADMIN, the eBPF router BPF)" $.Values.agent.capabilities $cap) }}
{{- end }}
{{- end }}
{{- if and (ne .Values.frr.mode "host") (not (has "NET_BIND_SERVICE" .Values.frr.capabilities)) }}
{{- fail (printf "frr.capabilities: %v lacks NET_BIND_SERVICE, which bgpd needs for port 179" .Values.frr.capabilities) }}
{{- end }}
{{- end }}

{{/* The FRR container (zebra, bgpd, staticd, bfdd): in the agent's pod (frr.mode=pod) or in its own DaemonSet
(frr.mode=daemonset). */}}
{{- define "netop.frrContainer" -}}
- name: frr
  image: {{ include "netop.image" (list . "frr" .Values.frr.image.tag) }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  # zebra, bgpd, staticd and bfdd (BFD for the sessions that enable it) on FRR's default sockets in
  # /var/run/frr, config /etc/frr (both shared with the agent, which renders and reloads the config); the
  # container ends when a daemon dies.
  command:
    - sh
    - -c
    - |
      set -e
      mkdir -p /var/tmp/frr
      # Root writes here only as the directory's owner (no DAC_OVERRIDE): a host directory kept from the last
      # start belongs to frr, so it is taken back for the writes and handed to frr after them.
      chown root /etc/frr
      for f in frr.conf vtysh.conf; do [ ! -e /etc/frr/$f ] || chown root /etc/frr/$f; done
      [ -s /etc/frr/frr.conf ] || echo 'frr defaults datacenter' > /etc/frr/frr.conf
      grep -qs '^service integrated-vtysh-config' /etc/frr/vtysh.conf || echo 'service integrated-vtysh-config' >> /etc/frr/vtysh.conf
      : > /var/tmp/frr/empty.conf
      chown frr:frr /etc/frr /var/run/frr /var/tmp/frr /var/tmp/frr/empty.conf /etc/frr/frr.conf /etc/frr/vtysh.conf
      pids=
      # FRR 10's mgmtd goes right after zebra (staticd and zebra take part of their config through it); an FRR
      # without it (8.x) starts the others alone. mgmtd and staticd read no config file (-f).
      for d in zebra mgmtd bgpd staticd bfdd; do
        [ -x /usr/lib/frr/$d ] || continue
        cfg="-f /var/tmp/frr/empty.conf"
        /usr/lib/frr/$d --help 2>&1 | grep -q -- --config_file || cfg=
        extra=
        {{- if .Values.frr.gracefulRestart.enabled }}
        # zebra keeps the routes a crashed zebra left in the kernel for restartTime at start (not -r: a
        # clean stop, e.g. an uninstall, flushes them).
        [ $d = zebra ] && extra="-K {{ .Values.frr.gracefulRestart.restartTime }}"
        {{- end }}
        # Each daemon starts empty; the integrated frr.conf is loaded through vtysh below, as FRR's own init
        # does: a daemon reading it itself misreads other daemons' lines (zebra takes bgpd's "vni N" of an L2VNI
        # for an L3VNI), which broke a node's layer-2 networks after an FRR restart.
        /usr/lib/frr/$d -d -F datacenter $cfg -A 127.0.0.1 -u frr -g frr -i /var/run/frr/$d.pid $extra
        pids="$pids $(cat /var/run/frr/$d.pid)"
      done
      setpriv --reuid=frr --regid=frr --init-groups vtysh -b || echo 'vtysh -b: frr.conf loaded with errors (the agent reloads it)' >&2
      # The pids are kept here, not read back from the pid files at the stop: an uninstall removes the files
      # first. A stop waits for every daemon to end.
      stop() {
        {{- if and (eq .Values.frr.mode "daemonset") .Values.frr.gracefulRestart.enabled }}
        # A stop of the DaemonSet's pod is an FRR upgrade or restart, unless the uninstall's cleanup removed FRR's
        # directory first: then zebra stops cleanly and removes its routes. Otherwise zebra and bgpd end as in a
        # crash, which graceful restart is for: the kernel keeps the node's routes (the next zebra keeps them
        # with -K until bgpd has them again) and the peers keep the node's routes as stale instead of
        # withdrawing them on a NOTIFICATION.
        [ ! -e /etc/frr/frr.conf ] || kill -KILL $(cat /var/run/frr/zebra.pid /var/run/frr/bgpd.pid) 2>/dev/null || true
        {{- end }}
        kill $pids 2>/dev/null || true
        for p in $pids; do while kill -0 $p 2>/dev/null; do sleep 0.2; done; done
        exit 0
      }
      trap stop TERM INT
      while kill -0 $pids 2>/dev/null; do
        sleep 2 & wait $!
      done
      echo 'an FRR daemon exited' >&2
      exit 1
  securityContext:
    privileged: false
    capabilities: {drop: [ALL], add: {{ toJson .Values.frr.capabilities }}}
  resources: {{- toYaml .Values.frr.resources | nindent 4 }}
  volumeMounts:
    - {name: frr-conf, mountPath: /etc/frr}
    - {name: frr-run, mountPath: /var/run/frr}
{{- end }}

{{/* The host directories FRR's DaemonSet shares with the agent (frr.mode=daemonset): its config and its vty sockets.
In the directory of the agent's state file, as frr-daemon (cleanup.FRRDaemonDir), so an uninstall removes them. */}}
{{- define "netop.frrVolumes" -}}
- {name: frr-conf, hostPath: {path: /var/lib/network-operator/frr-daemon/etc, type: DirectoryOrCreate}}
- {name: frr-run, hostPath: {path: /var/lib/network-operator/frr-daemon/run, type: DirectoryOrCreate}}
{{- end }}
