{{/* Labels of every object: the ones manifests/scheduler/ carries, nothing Helm-specific. */}}
{{- define "kubeview-extender.labels" -}}
app.kubernetes.io/name: {{ .Values.name }}
app.kubernetes.io/part-of: kubeview
{{- end }}

{{- define "kubeview-extender.tokenSecret" -}}
{{ .Values.token.existingSecret | default (printf "%s-token" .Values.name) }}
{{- end }}

{{- define "kubeview-extender.tlsSecret" -}}
{{ .Values.tls.secretName | default (printf "%s-tls" .Values.name) }}
{{- end }}

{{- define "kubeview-extender.port" -}}
{{ if .Values.tls.enabled }}https{{ else }}http{{ end }}
{{- end }}
