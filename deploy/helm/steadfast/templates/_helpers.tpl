{{/* The name every object of the release starts with: the release name, "steadfast" by default. */}}
{{- define "steadfast.fullname" -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "steadfast.labels" -}}
app.kubernetes.io/name: steadfast
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "steadfast.selector" -}}
app.kubernetes.io/name: steadfast
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "steadfast.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The ADS Service's DNS name: the server certificate names it, the Envoys' bootstrap dials it. */}}
{{- define "steadfast.xdsHost" -}}
{{ include "steadfast.fullname" . }}-xds.{{ .Release.Namespace }}.svc
{{- end -}}

{{/* envoy.upstreamIdleTimeout as `serve --upstream-idle-timeout` takes it (values.schema.json checks its shape); refused here outside 1ms to a day, as serve would refuse it at start. */}}
{{- define "steadfast.upstreamIdleTimeout" -}}
{{- $v := toString .Values.envoy.upstreamIdleTimeout -}}
{{- if ne $v "off" -}}
{{- $n := regexReplaceAll "(ms|s)$" $v "" | float64 -}}
{{- $ms := ternary $n (mulf $n 1000) (hasSuffix "ms" $v) -}}
{{- if or (lt $ms 1.0) (gt $ms 86400000.0) -}}
{{- fail (printf "envoy.upstreamIdleTimeout: %s is not between 1ms and a day (86400s)" $v) -}}
{{- end -}}
{{- end -}}
{{- $v -}}
{{- end -}}

{{/* What no container needs: root, privilege escalation, capabilities, a writable root filesystem. */}}
{{- define "steadfast.containerSecurity" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{- define "steadfast.podSecurity" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Replicas spread over nodes where the scheduler can: one node lost takes one replica. */}}
{{- define "steadfast.antiAffinity" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "steadfast.selector" .root | nindent 12 }}
            app.kubernetes.io/component: {{ .component }}
{{- end -}}
