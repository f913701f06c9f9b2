{{/*
The bundled etcd (etcd.cluster): whether the release runs it, its names,
and what the release's clients are given to reach it. With an etcd of the
user's own (etcd.endpoints), each helper gives the user's values instead.
*/}}

{{/* "true" when the release runs its own etcd: etcd.deploy true, or auto without etcd.endpoints. */}}
{{- define "globaladdr.etcdBundled" -}}
{{- $e := .Values.etcd -}}
{{- $endpoints := compact (default (list) $e.endpoints) -}}
{{- if eq (toString $e.deploy) "true" -}}
{{- if $endpoints }}{{ fail "etcd.deploy is true, and etcd.endpoints names an etcd of your own: leave one of them out" }}{{ end -}}
true
{{- else if eq (toString $e.deploy) "false" -}}
{{- if not $endpoints }}{{ fail "etcd.deploy is false: set etcd.endpoints, your etcd's client URLs (--set etcd.endpoints='{https://etcd:2379}'), or let the chart run one (etcd.deploy auto)" }}{{ end -}}
{{- else if not $endpoints -}}
true
{{- end -}}
{{- end -}}

{{/* The bundled etcd's name, the prefix of its objects. */}}
{{- define "globaladdr.etcdName" -}}
{{- printf "%s-etcd" (include "globaladdr.fullname" .) | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels that select the bundled etcd's members. */}}
{{- define "globaladdr.etcdSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-etcd
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The labels of the bundled etcd's objects. */}}
{{- define "globaladdr.etcdLabels" -}}
{{ include "globaladdr.etcdSelectorLabels" . }}
app.kubernetes.io/component: etcd
app.kubernetes.io/version: {{ .Values.etcd.cluster.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The DNS name of member I of the bundled etcd, in its headless Service. */}}
{{- define "globaladdr.etcdMember" -}}
{{- $name := include "globaladdr.etcdName" .ctx -}}
{{- printf "%s-%d.%s-peer.%s.svc" $name (int .i) $name .ctx.Release.Namespace -}}
{{- end -}}

{{/* The client URLs the release's clients use, space-separated: every member of the bundled etcd, or etcd.endpoints. */}}
{{- define "globaladdr.etcdEndpoints" -}}
{{- if include "globaladdr.etcdBundled" . -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.cluster.members) -}}
{{- $urls = append $urls (printf "https://%s:2379" (include "globaladdr.etcdMember" (dict "ctx" $ "i" $i))) -}}
{{- end -}}
{{- join " " $urls -}}
{{- else -}}
{{- join " " (compact (default (list) .Values.etcd.endpoints)) -}}
{{- end -}}
{{- end -}}

{{/* The Secret of the clients' certificate (tls.crt, tls.key, ca.crt), or nothing. */}}
{{- define "globaladdr.etcdTLSSecret" -}}
{{- if include "globaladdr.etcdBundled" . -}}
{{- include "globaladdr.etcdName" . }}-client
{{- else -}}
{{- .Values.etcd.tls.secretName -}}
{{- end -}}
{{- end -}}

{{/*
The Secret of the DNS pods' etcd user (username, password), or nothing: in
the bundled etcd the reader, or the writer when the LAN view takes ACME
UPDATEs.
*/}}
{{- define "globaladdr.etcdCredentialsSecret" -}}
{{- if include "globaladdr.etcdBundled" . -}}
{{- include "globaladdr.etcdName" . }}-{{ if and (include "globaladdr.hasLAN" .) .Values.lan.acme.enabled }}writer{{ else }}reader{{ end }}
{{- else -}}
{{- .Values.etcd.credentials.secretName -}}
{{- end -}}
{{- end -}}

{{/* The number of members that make a quorum of the bundled etcd. */}}
{{- define "globaladdr.etcdQuorum" -}}
{{- add (div (int .Values.etcd.cluster.members) 2) 1 -}}
{{- end -}}

{{/*
A Secret's data the release made before (a CA, a password), from the API
server (helm install, upgrade): empty under helm template, which has none.
*/}}
{{- define "globaladdr.keptSecret" -}}
{{- $s := lookup "v1" "Secret" .ctx.Release.Namespace .name -}}
{{- toJson (default (dict) (and $s $s.data)) -}}
{{- end -}}

{{/*
The pod of a Job that runs one of the bundled etcd's scripts (files/etcd-*.sh)
with etcdctl as root: the etcd image's etcdctl, and a shell from
etcd.cluster.shellImage's busybox (the etcd image has none), copied in by an
init container. .script is the script's name; .env more of its variables;
.volumes and .mounts more volumes.
*/}}
{{- define "globaladdr.etcdJobPod" -}}
{{- $ctx := .ctx -}}
{{- $c := $ctx.Values.etcd.cluster -}}
{{- $name := include "globaladdr.etcdName" $ctx -}}
metadata:
  labels:
    {{- include "globaladdr.etcdJobLabels" (dict "ctx" $ctx "job" (trimPrefix "etcd-" (trimSuffix ".sh" .script))) | nindent 4 }}
spec:
  restartPolicy: OnFailure
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  initContainers:
    - name: shell
      image: "{{ $c.shellImage.repository }}:{{ $c.shellImage.tag }}"
      command: [/bin/busybox, sh, -c, "cp /bin/busybox /tools/busybox && /tools/busybox --install -s /tools"]
      securityContext: {{ include "globaladdr.etcdContainerSecurity" . }}
      volumeMounts:
        - name: tools
          mountPath: /tools
  containers:
    - name: {{ trimSuffix ".sh" .script }}
      image: "{{ $c.image.repository }}:{{ $c.image.tag }}"
      imagePullPolicy: {{ $c.image.pullPolicy }}
      command: [/tools/sh, /scripts/{{ .script }}]
      env:
        - name: PATH
          value: /usr/local/bin:/tools
        - name: ETCDCTL_ENDPOINTS
          value: https://{{ $name }}.{{ $ctx.Release.Namespace }}.svc:2379
        - name: ETCDCTL_CACERT
          value: /etc/etcd/tls/ca.crt
        - name: ETCDCTL_CERT
          value: /etc/etcd/tls/tls.crt
        - name: ETCDCTL_KEY
          value: /etc/etcd/tls/tls.key
        - name: ROOT_PASSWORD
          valueFrom:
            secretKeyRef:
              name: {{ $name }}-root
              key: password
        {{- with .env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      securityContext: {{ include "globaladdr.etcdContainerSecurity" . }}
      volumeMounts:
        - name: tools
          mountPath: /tools
          readOnly: true
        - name: scripts
          mountPath: /scripts
          readOnly: true
        - name: tls
          mountPath: /etc/etcd/tls
          readOnly: true
        {{- with .mounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: tools
      emptyDir: {}
    - name: scripts
      configMap:
        name: {{ $name }}-scripts
    - name: tls
      secret:
        secretName: {{ $name }}-client
        defaultMode: 0440
    {{- with .volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* The security context of the bundled etcd's containers, on one line. */}}
{{- define "globaladdr.etcdContainerSecurity" -}}
{allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true}
{{- end -}}

{{/* The labels of the bundled etcd's Jobs' pods (.job: auth, backup, defrag): the release's, for the NetworkPolicy, and not the DNS pods'. */}}
{{- define "globaladdr.etcdJobLabels" -}}
app.kubernetes.io/name: {{ .ctx.Chart.Name }}-etcd-{{ .job }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- end -}}
