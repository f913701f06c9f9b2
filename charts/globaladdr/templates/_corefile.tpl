{{/*
The Corefile: an example of corefile-examples/ (values.yaml's views says
which) with the values filled in. Secrets stay {$NAME} placeholders, which
CoreDNS expands from the environment the Deployment sets from their Secrets.
The blocks' lines are the examples', in their order; the optional
properties come in only where their values are set.
*/}}
{{- define "globaladdr.corefile" -}}
{{- $p := .Values.containerPorts -}}
{{- if eq .Values.views "external" -}}
{{ include "globaladdr.externalBlock" (dict "ctx" . "port" $p.dns "alone" true) }}
{{- else if eq .Values.views "hidden-primary" -}}
{{ include "globaladdr.externalBlock" (dict "ctx" . "port" $p.dns "alone" true "primary" true) }}
{{- else if eq .Values.views "ports" -}}
{{ include "globaladdr.lanBlock" (dict "ctx" . "key" (printf ".:%v" $p.dns)) }}

{{ include "globaladdr.externalBlock" (dict "ctx" . "port" $p.external) }}
{{- else if eq .Values.views "clients" -}}
{{ include "globaladdr.lanBlock" (dict "ctx" . "key" (printf ".:%v %s:%v" $p.dns .Values.domain $p.dns) "view" true) }}

{{ include "globaladdr.externalBlock" (dict "ctx" . "port" $p.dns) }}
{{- else -}}
{{- fail (printf "views is external, ports, clients or hidden-primary, not %q" .Values.views) -}}
{{- end }}
{{ end -}}

{{/*
The LAN view's block (internal.Corefile's, and the first block of
single-process.Corefile and client-split.Corefile): key is its server block
key, view says whether it claims lan.networks' clients only.
*/}}
{{- define "globaladdr.lanBlock" -}}
{{- $v := .ctx.Values -}}
{{- $p := $v.containerPorts -}}
{{ .key }} {
{{- if .view }}
    view lan {
        expr "any(split('{{ join " " $v.lan.networks }}', ' '), # != '' && incidr(client_ip(), #))"
    }
{{- end }}
    errors
    health :{{ $p.health }} {
        lameduck 5s
    }
    ready :{{ $p.ready }}
    prometheus :{{ $p.metrics }}
{{- if $v.lan.acme.enabled }}
    tsig {
        secret {{ $v.tsig.name }} {$TSIG_SECRET}
        require_opcode UPDATE
    }
{{- end }}
    cache {{ $v.cache }}
    loop
    reload
    loadbalance
{{- if $v.lan.acme.enabled }}
    etcdzone {
        update {{ $v.tsig.name }}
{{- with $v.lan.acme.lease }}
        update_lease {{ . }}
{{- end }}
    }
{{- else }}
    etcdzone
{{- end }}
{{- include "globaladdr.etcd" .ctx }}
    forward . {{ join " " $v.lan.upstream }}
}
{{- end -}}

{{/*
The external view's block (external.Corefile's and hidden-primary.Corefile's,
and the second block of single-process.Corefile and client-split.Corefile):
port is its DNS port; alone says it is the only block, with health and
reload; primary makes it a hidden primary's: TSIG, transfers, no rrl. No
cache: etcdzone has it bypass the zone, so it would only cost CPU.
*/}}
{{- define "globaladdr.externalBlock" -}}
{{- $v := .ctx.Values -}}
{{- $p := $v.containerPorts -}}
{{ $v.domain }}:{{ .port }} {
    errors
{{- if .alone }}
    health :{{ $p.health }} {
        lameduck 5s
    }
{{- end }}
    ready :{{ $p.ready }}
    prometheus :{{ $p.metrics }}
    bufsize 1232
{{- if not .primary }}
    rrl {
{{- range $property, $value := $v.rrl }}
{{- if not (and (kindIs "bool" $value) (not $value)) }}
        {{ $property }}{{ if kindIs "slice" $value }} {{ join " " $value }}{{ else if not (kindIs "bool" $value) }} {{ $value }}{{ end }}
{{- end }}
{{- end }}
    }
{{- end }}
{{- if .alone }}
    reload
{{- end }}
{{- if not .primary }}
    loadbalance
{{- else }}
    tsig {
        secret {{ $v.tsig.name }} {$TSIG_SECRET}
        require AXFR IXFR
    }
{{- end }}
{{ include "globaladdr.globaladdr" .ctx }}
    etcdzone {
        ns {{ join " " (required "zone.ns lists the zone's name servers" $v.zone.ns) }}
{{- range $field, $value := $v.zone.soa }}
        {{ $field }} {{ $value }}
{{- end }}
{{- range $name, $addresses := $v.zone.glue }}
        glue {{ $name }} {{ join " " $addresses }}
{{- end }}
    }
{{- if .primary }}
    transfer {
        to {{ join " " (required "hiddenPrimary.secondaries lists the secondaries" $v.hiddenPrimary.secondaries) }}
    }
{{- end }}
{{- include "globaladdr.etcd" .ctx }}
}
{{- end -}}

{{/* The globaladdr directive of the external view. */}}
{{- define "globaladdr.globaladdr" -}}
{{- with .Values.globaladdr -}}
{{- if and (not .addresses) (not .from.file.configMap) (not .from.etcdKey) (not .map) -}}
{{- fail "globaladdr needs addresses, a from source (from.file.configMap, from.etcdKey) or map" -}}
{{- end -}}
{{- if and .addresses (or .from.file.configMap .from.etcdKey) -}}
{{- fail "globaladdr takes addresses or from sources, not both" -}}
{{- end -}}
{{- $props := list -}}
{{- with .from.file.configMap }}{{ $props = append $props (printf "from file /etc/globaladdr/%s" $.Values.globaladdr.from.file.key) }}{{ end -}}
{{- with .from.etcdKey }}{{ $props = append $props (printf "from etcd %s" .) }}{{ end -}}
{{- if not (kindIs "invalid" .ttl) }}{{ $props = append $props (printf "ttl %v" .ttl) }}{{ end -}}
{{- with .internal }}{{ $props = append $props (printf "internal %s" (join " " .)) }}{{ end -}}
{{- range .map }}{{ $props = append $props (printf "map %s %s" .from .to) }}{{ end -}}
{{- with .hide }}{{ $props = append $props (printf "hide %s" (join " " .)) }}{{ end -}}
{{ printf "    globaladdr %s" (join " " .addresses) | trimSuffix " " }}
{{- if $props }} {
{{- range $props }}
        {{ . }}
{{- end }}
    }
{{- end }}
{{- end }}
{{- end -}}

{{/* The etcd block, with its connection's TLS and credentials, on a line of its own. */}}
{{- define "globaladdr.etcd" -}}
{{- with .Values.etcd }}
    etcd {{ $.Values.domain }} {
        path {{ .path }}
        endpoint {{ join " " .endpoints }}
{{- if .credentials.secretName }}
        credentials {$ETCD_USERNAME} {$ETCD_PASSWORD}
{{- end }}
{{- if .tls.secretName }}
        tls /etc/etcd-tls/tls.crt /etc/etcd-tls/tls.key /etc/etcd-tls/ca.crt
{{- end }}
    }
{{- end }}
{{- end -}}
