{{/*
The Corefile: an example of corefile-examples/ (values.yaml's views says
which) with the values filled in. Secrets stay {$NAME} placeholders, which
CoreDNS expands from the environment the Deployment sets from their Secrets.
The blocks' lines are the examples', in their order; the optional
properties come in only where their values are set.
*/}}
{{- define "globaladdr.corefile" -}}
{{- include "globaladdr.validate" . -}}
{{- $p := .Values.containerPorts -}}
{{- if eq .Values.views "external" -}}
{{ include "globaladdr.externalBlock" (dict "ctx" . "port" $p.dns "alone" true) }}
{{- else if eq .Values.views "hidden-primary" -}}
{{ include "globaladdr.externalBlock" (dict "ctx" . "port" $p.dns "alone" true "primary" true "xot" (include "globaladdr.xotPort" .)) }}
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
    ready :{{ $p.ready }} {
        monitor continuously
    }
    prometheus :{{ $p.metrics }}
{{- if $v.lan.acme.enabled }}
    tsigtime
    tsig {
        secret {{ $v.tsig.name }} {$TSIG_SECRET}
        require_opcode UPDATE
    }
{{- end }}
    cache {{ $v.cache }}
    loop
    reload
    loadbalance
    etcdzone {
{{- if $v.lan.acme.enabled }}
        update {{ $v.tsig.name }}
{{- with $v.lan.acme.lease }}
        update_lease {{ . }}
{{- end }}
{{- end }}
{{- if $v.lan.fallthrough.enabled }}
        {{ printf "fallthrough %s" (join " " $v.lan.fallthrough.zones) | trimSuffix " " }}
{{- end }}
{{- include "globaladdr.etcdConnection" .ctx }}
    }
{{- include "globaladdr.etcd" .ctx }}
    forward . {{ join " " $v.lan.upstream }}
}
{{- end -}}

{{/*
The external view's block (external.Corefile's and hidden-primary.Corefile's,
and the second block of single-process.Corefile and client-split.Corefile):
port is its DNS port; alone says it is the only block, with health and
reload; primary makes it a hidden primary's: TSIG, transfers, no rrl; xot,
a port of transfers over TLS beside it (xot-primary.Corefile's). No
cache: etcdzone has it bypass the zone, so it would only cost CPU. cookie
answers DNS Cookies (RFC 7873); tsig without a key answers a signed query
NOTAUTH/BADKEY (RFC 8945), tsigtime with the server's time.
*/}}
{{- define "globaladdr.externalBlock" -}}
{{- $v := .ctx.Values -}}
{{- $p := $v.containerPorts -}}
{{ $v.domain }}:{{ .port }}{{ with .xot }} tls://{{ $v.domain }}:{{ . }}{{ end }} {
    errors
{{- if .alone }}
    health :{{ $p.health }} {
        lameduck 5s
    }
{{- end }}
    ready :{{ $p.ready }} {
        monitor continuously
    }
    prometheus :{{ $p.metrics }}
    bufsize 1232
    cookie
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
{{- if .xot }}
    tls /etc/globaladdr-xot/tls.crt /etc/globaladdr-xot/tls.key
{{- end }}
    tsigtime
{{- if not .primary }}
    tsig
    loadbalance
{{- else }}
    tsig {
        secret {{ $v.tsig.name }} {$TSIG_SECRET}
        require AXFR IXFR
    }
{{- end }}
{{ include "globaladdr.globaladdr" .ctx }}
    etcdzone {
        ns {{ join " " (compact (default (list) $v.zone.ns)) }}
{{- range $field, $value := $v.zone.soa }}
        {{ $field }} {{ $value }}
{{- end }}
{{- range $name, $addresses := $v.zone.glue }}
        glue {{ $name }} {{ join " " $addresses }}
{{- end }}
{{- if $v.zone.dnssec.secretName }}
        dnssec /etc/globaladdr-dnssec/
{{- end }}
{{- include "globaladdr.etcdConnection" .ctx }}
    }
{{- include "globaladdr.publish" .ctx }}
{{- if .primary }}
    transfer {
        to {{ join " " (compact (default (list) $v.hiddenPrimary.secondaries)) }}
{{- with $v.hiddenPrimary.notifySource }}
        source {{ . }}
{{- end }}
    }
{{- end }}
{{- include "globaladdr.etcd" .ctx }}
}
{{- end -}}

{{/* The globaladdr directive of the external view. */}}
{{- define "globaladdr.globaladdr" -}}
{{- with .Values.globaladdr -}}
{{- $f := .from -}}
{{- $learned := or $f.upnp.enabled $f.natpmp.enabled $f.pcp.enabled $f.stun $f.https $f.interface -}}
{{- if and (compact (default (list) .addresses)) (or $f.file.configMap $f.etcdKey $learned) -}}
{{- fail "globaladdr takes addresses or from sources, not both: leave globaladdr.addresses empty ([], its default) with a from source" -}}
{{- end -}}
{{- $props := list -}}
{{- with $f.file.configMap }}{{ $props = append $props (printf "from file /etc/globaladdr/%s" $f.file.key) }}{{ end -}}
{{- with $f.etcdKey }}{{ $props = append $props (printf "from etcd %s" .) }}
{{- $props = append $props (printf "endpoint %s" (include "globaladdr.etcdEndpoints" $)) }}
{{- if include "globaladdr.etcdCredentialsSecret" $ }}{{ $props = append $props "credentials {$ETCD_USERNAME} {$ETCD_PASSWORD}" }}{{ end }}
{{- if include "globaladdr.etcdTLSSecret" $ }}{{ $props = append $props "tls /etc/etcd-tls/tls.crt /etc/etcd-tls/tls.key /etc/etcd-tls/ca.crt" }}{{ end }}
{{- end -}}
{{- if $f.upnp.enabled }}{{ $props = append $props (printf "from upnp %s" $f.upnp.url | trimSuffix " ") }}{{ end -}}
{{- if $f.natpmp.enabled }}{{ $props = append $props (printf "from natpmp %s" $f.natpmp.gateway | trimSuffix " ") }}{{ end -}}
{{- if $f.pcp.enabled }}{{ $props = append $props (printf "from pcp %s" $f.pcp.server | trimSuffix " ") }}{{ end -}}
{{- with $f.stun }}{{ $props = append $props (printf "from stun %s" (join " " .)) }}{{ end -}}
{{- with $f.https }}{{ $props = append $props (printf "from https %s" (join " " .)) }}{{ end -}}
{{- with $f.interface }}{{ $props = append $props (printf "from interface %s" .) }}{{ end -}}
{{- if and $f.https $f.httpsCA.configMap }}{{ $props = append $props (printf "https_ca /etc/globaladdr-https-ca/%s" $f.httpsCA.key) }}{{ end -}}
{{- with $f.every }}{{ $props = append $props (printf "every %s" .) }}{{ end -}}
{{- with .tunnel }}{{ $props = append $props (printf "tunnel %s%s" . (ternary " marked" "" $.Values.globaladdr.tunnelMarked)) }}{{ end -}}
{{- if not (kindIs "invalid" .ttl) }}{{ $props = append $props (printf "ttl %v" .ttl) }}{{ end -}}
{{- with .internal }}{{ $props = append $props (printf "internal %s" (join " " .)) }}{{ end -}}
{{- range .map }}{{ $props = append $props (printf "map %s %s" .from .to) }}{{ end -}}
{{- range .mapFrom }}{{ $props = append $props (printf "map %s from %s" .from (ternary (printf "interface %s" .interface) (printf "etcd %s" .etcdKey) (not (empty .interface)))) }}{{ end -}}
{{- with .hide }}{{ $props = append $props (printf "hide %s" (join " " .)) }}{{ end -}}
{{- with .expose }}{{ $props = append $props (printf "expose %s" .) }}{{ end -}}
{{ printf "    globaladdr %s" (join " " (compact (default (list) .addresses))) | trimSuffix " " }}
{{- if $props }} {
{{- range $props }}
        {{ . }}
{{- end }}
    }
{{- end }}
{{- end }}
{{- end -}}

{{/*
The publish block of the external view (publish.Corefile's), on lines of
their own: no kubeconfig, so the in-cluster configuration with the pods'
service account, which the Role of publish-rbac.yaml lets write in the
namespace; the Lease, the labels and the endpoints' properties where they
are set.
*/}}
{{- define "globaladdr.publish" -}}
{{- with .Values.publish }}
{{- if .enabled }}
    publish {
        namespace {{ include "globaladdr.publishNamespace" $ }}
{{- if or .lease.name .lease.duration }}
        lease {{ required "publish.lease.name: a Lease duration needs the Lease's name" .lease.name }}{{ with .lease.duration }} {{ . }}{{ end }}
{{- end }}
{{- with .labels }}
        labels{{ range $key, $value := . }} {{ $key }}={{ $value }}{{ end }}
{{- end }}
{{- range .properties }}
        property {{ .name }} {{ .value }}{{ if .tunnelled }} tunnelled{{ end }}
{{- end }}
    }
{{- end }}
{{- end }}
{{- end -}}

{{/* The etcd block, on a line of its own: the zone and the path. */}}
{{- define "globaladdr.etcd" -}}
{{- with .Values.etcd }}
    etcd {{ $.Values.domain }} {
        path {{ .path }}
    }
{{- end }}
{{- end -}}

{{/*
The etcd connection, on lines of their own inside etcdzone's block (and
globaladdr's, for from etcd): its endpoints, and its TLS and credentials,
which need https:// endpoints (the password would go out in clear, the
client certificate not at all).
*/}}
{{- define "globaladdr.etcdConnection" -}}
{{- $secure := or (include "globaladdr.etcdTLSSecret" .) (include "globaladdr.etcdCredentialsSecret" .) -}}
{{- $endpoints := include "globaladdr.etcdEndpoints" . -}}
{{- if $secure }}
{{- range splitList " " $endpoints }}
{{- if not (hasPrefix "https://" .) }}
{{- fail (printf "etcd.endpoints: %s is not https://: etcd.tls and etcd.credentials need https:// endpoints (the password would go out in clear)" .) }}
{{- end }}
{{- end }}
{{- end }}
        endpoint {{ $endpoints }}
{{- if include "globaladdr.etcdCredentialsSecret" . }}
        credentials {$ETCD_USERNAME} {$ETCD_PASSWORD}
{{- end }}
{{- if include "globaladdr.etcdTLSSecret" . }}
        tls /etc/etcd-tls/tls.crt /etc/etcd-tls/tls.key /etc/etcd-tls/ca.crt
{{- end }}
{{- end -}}

{{/*
What CoreDNS would refuse at start, refused at render time: the global
address missing, with what it is. values.schema.json requires the other
values without a default (domain, etcd.endpoints, zone.ns, the
secondaries of a hidden primary), so that helm lint refuses them too.
*/}}
{{- define "globaladdr.validate" -}}
{{- $v := .Values -}}
{{- with $v.globaladdr }}
{{- $f := .from -}}
{{- $learned := or $f.upnp.enabled $f.natpmp.enabled $f.pcp.enabled $f.stun $f.https $f.interface -}}
{{- if and (not (compact (default (list) .addresses))) (not $f.file.configMap) (not $f.etcdKey) (not $learned) (not .map) (not .mapFrom) (not .tunnel) }}
{{- fail "set globaladdr.addresses: the global address (--set globaladdr.addresses='{203.0.113.10}'), or a source: globaladdr.from.etcdKey, globaladdr.from.file.configMap, globaladdr.from.upnp, natpmp, pcp, stun, https or interface (or globaladdr.map for every address, or globaladdr.tunnel behind carrier-grade NAT)" }}
{{- end }}
{{- with .tunnel }}
{{- $t := lower (trimSuffix "." .) }}{{ $d := lower (trimSuffix "." $v.domain) }}
{{- if or (eq $t $d) (hasSuffix (printf ".%s" $d) $t) }}
{{- fail (printf "globaladdr.tunnel: %s lies inside domain %s: give the tunnel's or relay's host name outside it (a CNAME to a name of the view itself would be internal, or a loop)" . $v.domain) }}
{{- end }}
{{- end }}
{{- end }}
{{- include "globaladdr.validateGlue" $v -}}
{{- end -}}

{{/*
A name server inside the zone needs its address in the zone: without
zone.glue, the NS answers carry none, and resolvers may not reach it.
*/}}
{{- define "globaladdr.validateGlue" -}}
{{- $domain := lower (trimSuffix "." .domain) -}}
{{- $glued := list -}}
{{- range $name, $_ := .zone.glue }}{{ $glued = append $glued (lower (trimSuffix "." $name)) }}{{ end -}}
{{- range (compact (default (list) .zone.ns)) }}
{{- $ns := lower (trimSuffix "." .) -}}
{{- if and (or (eq $ns $domain) (hasSuffix (printf ".%s" $domain) $ns)) (not (has $ns $glued)) }}
{{- fail (printf "zone.ns: %s lies inside %s, and zone.glue gives no address of it: the NS answers would carry none (--set 'zone.glue.%s={203.0.113.10}')" . $domain (replace "." "\\." $ns)) }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
The Corefile of external-dns's webhook sidecar (webhook.Corefile's): the
webhook provider's API on loopback, writing into the release's etcd and
path, /healthz and /readyz for the sidecar's probes. The block answers no DNS question.
*/}}
{{- define "globaladdr.webhookCorefile" -}}
{{- $v := .Values -}}
{{ $v.domain }}:0 {
    bind 127.0.0.1
    errors
    webhook 127.0.0.1:{{ $v.webhook.port }} {
        path {{ $v.etcd.path }}
{{- include "globaladdr.etcdConnection" . }}
        health :{{ $v.webhook.healthPort }}
    }
}
{{ end -}}
