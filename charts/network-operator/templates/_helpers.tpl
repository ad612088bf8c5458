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
{{- if and (eq .Values.frr.mode "pod") (not (has "NET_BIND_SERVICE" .Values.frr.capabilities)) }}
{{- fail (printf "frr.capabilities: %v lacks NET_BIND_SERVICE, which bgpd needs for port 179" .Values.frr.capabilities) }}
{{- end }}
{{- end }}
