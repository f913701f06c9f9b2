{{/*
A Service of the release's pods: name, spec (service or lanService of
values.yaml), target, the pod's DNS port names (target and target-tcp), and
xot, the port of transfers over TLS, if the Service has one.
*/}}
{{- define "globaladdr.service" -}}
{{- $s := .spec -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ .name }}
  labels:
    {{- include "globaladdr.labels" .ctx | nindent 4 }}
  {{- with $s.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $s.type }}
  {{- if has $s.type (list "LoadBalancer" "NodePort") }}
  externalTrafficPolicy: {{ $s.externalTrafficPolicy }}
  {{- end }}
  {{- with $s.ipFamilyPolicy }}
  ipFamilyPolicy: {{ . }}
  {{- end }}
  {{- with $s.ipFamilies }}
  ipFamilies:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if eq $s.type "LoadBalancer" }}
  {{- with $s.loadBalancerClass }}
  loadBalancerClass: {{ . }}
  {{- end }}
  {{- with $s.loadBalancerSourceRanges }}
  loadBalancerSourceRanges:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- end }}
  selector:
    {{- include "globaladdr.selectorLabels" .ctx | nindent 4 }}
  ports:
    - name: dns
      port: {{ $s.port }}
      targetPort: {{ .target }}
      protocol: UDP
    - name: dns-tcp
      port: {{ $s.port }}
      targetPort: {{ .target }}-tcp
      protocol: TCP
    {{- with .xot }}
    - name: xot
      port: {{ . }}
      targetPort: xot
      protocol: TCP
    {{- end }}
{{- end -}}
