{{/* The release's name for its objects: the release name, with the chart's unless it holds it. */}}
{{- define "globaladdr.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels that select the release's pods. */}}
{{- define "globaladdr.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The labels of every object of the release. */}}
{{- define "globaladdr.labels" -}}
{{ include "globaladdr.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Whether the release serves the LAN view too. */}}
{{- define "globaladdr.hasLAN" -}}
{{- if has .Values.views (list "ports" "clients") }}true{{ end -}}
{{- end -}}

{{/* The secrets the Corefile names as {$NAME}: each variable's name, Secret and key. */}}
{{- define "globaladdr.secretEnv" -}}
{{- $env := list -}}
{{- with include "globaladdr.etcdCredentialsSecret" . -}}
{{- $env = append $env (dict "name" "ETCD_USERNAME" "secret" . "key" "username") -}}
{{- $env = append $env (dict "name" "ETCD_PASSWORD" "secret" . "key" "password") -}}
{{- end -}}
{{- if or (eq .Values.views "hidden-primary") (and (include "globaladdr.hasLAN" .) .Values.lan.acme.enabled) -}}
{{- with .Values.tsig -}}
{{- $env = append $env (dict "name" "TSIG_SECRET" "secret" (required "tsig.secretName names the Secret of the TSIG key" .secretName) "key" .secretKey) -}}
{{- end -}}
{{- end -}}
{{- toJson $env -}}
{{- end -}}

{{/*
globaladdr.hostNetwork is "true" when the pods run in the node's network:
hostNetwork is set, or a source needs it (an interface of the node, SSDP's
multicast for upnp without url).
*/}}
{{- define "globaladdr.hostNetwork" -}}
{{- $f := .Values.globaladdr.from -}}
{{- $iface := false -}}
{{- range .Values.globaladdr.mapFrom }}{{ if .interface }}{{ $iface = true }}{{ end }}{{ end -}}
{{- if or .Values.hostNetwork $f.interface $iface (and $f.upnp.enabled (not $f.upnp.url)) }}true{{ end -}}
{{- end -}}

{{/*
The pods' service account: the chart's (the release's name unless
serviceAccount.name gives one), or an existing one, the namespace's default
when serviceAccount.name is empty.
*/}}
{{- define "globaladdr.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "globaladdr.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The namespace of publish's objects and Lease: the release's unless publish.namespace gives one. */}}
{{- define "globaladdr.publishNamespace" -}}
{{- default .Release.Namespace .Values.publish.namespace -}}
{{- end -}}

{{/* The port of transfers over TLS (views hidden-primary with hiddenPrimary.xot), or nothing. */}}
{{- define "globaladdr.xotPort" -}}
{{- if and (eq .Values.views "hidden-primary") .Values.hiddenPrimary.xot.enabled }}{{ .Values.hiddenPrimary.xot.port }}{{ end -}}
{{- end -}}
