{{/* Names and labels. */}}
{{- define "watchdogd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "watchdogd.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "watchdogd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "watchdogd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "watchdogd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "watchdogd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "watchdogd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "watchdogd.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "watchdogd.secretName" -}}
{{- default (include "watchdogd.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/*
Whether the Secret holds a key with a value: the chart's own Secret holds
the tokens given and always both URLs; an existing one the keys
secrets.existingSecretKeys says it holds. Renders "true" or nothing.
*/}}
{{- define "watchdogd.hasSecret" -}}
{{- $s := .root.Values.secrets -}}
{{- if $s.existingSecret -}}
{{- if get (default dict $s.existingSecretKeys) .key }}true{{ end -}}
{{- else if eq .key "kandevToken" -}}
{{- if $s.kandevToken }}true{{ end -}}
{{- else if eq .key "slackToken" -}}
{{- if $s.slackToken }}true{{ end -}}
{{- else if eq .key "alertmanagerPassword" -}}
{{- if $s.alertmanagerPassword }}true{{ end -}}
{{- else if eq .key "alertmanagerCredentials" -}}
{{- if $s.alertmanagerCredentials }}true{{ end -}}
{{- else if eq .key "slackAppToken" -}}
{{- if $s.slackAppToken }}true{{ end -}}
{{- else if eq .key "slackSigningSecret" -}}
{{- if $s.slackSigningSecret }}true{{ end -}}
{{- else -}}
true
{{- end -}}
{{- end -}}

{{/* Whether the Secret holds webhook .name's secret: "true" or nothing. */}}
{{- define "watchdogd.hasWebhookSecret" -}}
{{- $s := .root.Values.secrets -}}
{{- if $s.existingSecret -}}
{{- if has .name (default list (get (default dict $s.existingSecretKeys) "webhooks")) }}true{{ end -}}
{{- else if hasKey (default dict $s.webhookSecrets) .name -}}
true
{{- end -}}
{{- end -}}

{{- define "watchdogd.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
The config file: the user's config with the keys the chart owns set, so
that secrets come from mounted files and never sit in the ConfigMap.
*/}}
{{- define "watchdogd.config" -}}
{{- $c := deepCopy (default dict .Values.config) -}}
{{- $secrets := "/etc/watchdogd/secrets" -}}
{{- $db := default dict (get $c "database") -}}
{{- $state := default dict (get $c "state") -}}
{{- with include "watchdogd.dataPath" . -}}
{{- $_ := set $db "url" (printf "sqlite://%s/data/kandev.db" .) -}}
{{- $_ := set $state "url" (printf "sqlite://%s/watchdogd/state.db" .) -}}
{{- else -}}
{{- if include "watchdogd.hasSecret" (dict "root" . "key" "databaseUrl") -}}
{{- $_ := set $db "url_file" (printf "%s/database-url" $secrets) -}}
{{- end -}}
{{- if eq .Values.ledger.type "postgres" -}}
{{- if include "watchdogd.hasSecret" (dict "root" . "key" "stateUrl") -}}
{{- $_ := set $state "url_file" (printf "%s/state-url" $secrets) -}}
{{- end -}}
{{- else -}}
{{- $_ := set $state "url" "sqlite:///var/lib/watchdogd/state.db" -}}
{{- end -}}
{{- end -}}
{{- $_ := set $c "database" $db -}}
{{- $_ := set $c "state" $state -}}
{{- if include "watchdogd.hasSecret" (dict "root" . "key" "kandevToken") -}}
{{- $k := default dict (get $c "kandev") -}}
{{- $_ := set $k "token_file" (printf "%s/kandev-token" $secrets) -}}
{{- $_ := set $c "kandev" $k -}}
{{- end -}}
{{- if and (hasKey $c "slack") (include "watchdogd.hasSecret" (dict "root" . "key" "slackToken")) -}}
{{- $s := default dict (get $c "slack") -}}
{{- $_ := set $s "token_file" (printf "%s/slack-token" $secrets) -}}
{{- $_ := set $c "slack" $s -}}
{{- end -}}
{{- if hasKey $c "alertmanager" -}}
{{- $am := default dict (get $c "alertmanager") -}}
{{- $hc := default dict (get $am "http_config") -}}
{{- if include "watchdogd.hasSecret" (dict "root" . "key" "alertmanagerPassword") -}}
{{- $ba := default dict (get $hc "basic_auth") -}}
{{- $_ := set $ba "password_file" (printf "%s/alertmanager-password" $secrets) -}}
{{- $_ := set $hc "basic_auth" $ba -}}
{{- end -}}
{{- if include "watchdogd.hasSecret" (dict "root" . "key" "alertmanagerCredentials") -}}
{{- $au := default dict (get $hc "authorization") -}}
{{- $_ := set $au "credentials_file" (printf "%s/alertmanager-credentials" $secrets) -}}
{{- $_ := set $hc "authorization" $au -}}
{{- end -}}
{{- if $hc -}}
{{- $_ := set $am "http_config" $hc -}}
{{- end -}}
{{- $_ := set $c "alertmanager" $am -}}
{{- end -}}
{{- if hasKey $c "webhooks" -}}
{{- $hooks := list -}}
{{- range $w := (get $c "webhooks") -}}
{{- if and (not (hasKey $w "secret_file")) (include "watchdogd.hasWebhookSecret" (dict "root" $ "name" $w.name)) -}}
{{- $_ := set $w "secret_file" (printf "%s/webhook-%s" $secrets $w.name) -}}
{{- end -}}
{{- $hooks = append $hooks $w -}}
{{- end -}}
{{- $_ := set $c "webhooks" $hooks -}}
{{- end -}}
{{- $in := get (default dict (get $c "slack")) "interactivity" -}}
{{- if $in -}}
{{- if include "watchdogd.hasSecret" (dict "root" . "key" "slackAppToken") -}}
{{- $_ := set $in "app_token_file" (printf "%s/slack-app-token" $secrets) -}}
{{- end -}}
{{- if include "watchdogd.hasSecret" (dict "root" . "key" "slackSigningSecret") -}}
{{- $_ := set $in "signing_secret_file" (printf "%s/slack-signing-secret" $secrets) -}}
{{- end -}}
{{- end -}}
{{- $h := default dict (get $c "http") -}}
{{- $_ := set $h "listen" (printf "0.0.0.0:%d" (int .Values.service.port)) -}}
{{- $_ := set $c "http" $h -}}
{{- toYaml $c -}}
{{- end -}}

{{/*
The HTTP mode's Slack listener (slack.interactivity.mode: http in the
rendered config): its port, from slack.interactivity.listen, or nothing in
Socket Mode or without interactivity. Fails the render when the Service
could not reach the listener: a loopback host (also watchdogd's default,
127.0.0.1:9465, when listen is unset), no port number, or the port of
http.listen (service.port), which the chart gives the main listener.
*/}}
{{- define "watchdogd.slackPort" -}}
{{- $cfg := include "watchdogd.config" . | fromYaml -}}
{{- $in := get (default dict (get $cfg "slack")) "interactivity" | default dict -}}
{{- if eq (toString (get $in "mode")) "http" -}}
{{- $key := "config.slack.interactivity.listen" -}}
{{- $listen := toString (default "" (get $in "listen")) -}}
{{- if not $listen -}}
{{- fail (printf "%s is unset with mode: http: watchdogd then listens on 127.0.0.1:9465, which the Service cannot reach; set it to 0.0.0.0:<port>" $key) -}}
{{- end -}}
{{- if not (regexMatch `^(\[[^\]]*\]|[^:\[\]]*):[0-9]+$` $listen) -}}
{{- fail (printf "%s %q has no port: it must be host:port (an IPv6 host in brackets), e.g. 0.0.0.0:9465" $key $listen) -}}
{{- end -}}
{{- $port := atoi (regexReplaceAll "^.*:" $listen "") -}}
{{- if or (lt $port 1) (gt $port 65535) -}}
{{- fail (printf "%s %q has no port: it must be host:port with a port from 1 to 65535, e.g. 0.0.0.0:9465" $key $listen) -}}
{{- end -}}
{{- $host := regexReplaceAll ":[0-9]+$" $listen "" | trimPrefix "[" | trimSuffix "]" | trimSuffix "." | lower -}}
{{- if or (eq $host "localhost") (hasSuffix ".localhost" $host) (regexMatch `^(::ffff:)?127\.` $host) (regexMatch `^(0*:){2,7}0*1$` $host) -}}
{{- fail (printf "%s %q is a loopback address: the Service cannot reach it; listen on 0.0.0.0:%d" $key $listen $port) -}}
{{- end -}}
{{- if eq $port (int .Values.service.port) -}}
{{- fail (printf "%s %q has the port of http.listen (service.port %d): Slack's requests need a listener of their own" $key $listen (int .Values.service.port)) -}}
{{- end -}}
{{- if eq (int (default 0 .Values.service.slackPort)) (int .Values.service.port) -}}
{{- fail (printf "service.slackPort %d is service.port too: the Service needs a port of its own for Slack's requests" (int .Values.service.port)) -}}
{{- end -}}
{{- $port -}}
{{- end -}}
{{- end -}}

{{/* The Service's port for Slack's requests: service.slackPort, or the listener's. */}}
{{- define "watchdogd.slackServicePort" -}}
{{- with include "watchdogd.slackPort" . -}}
{{- default (atoi .) $.Values.service.slackPort -}}
{{- end -}}
{{- end -}}

{{/*
Where kandev's data volume is mounted when watchdogd shares kandev's pod
(sidecar and splice modes), or nothing: kandev's SQLite file is
<dataPath>/data/kandev.db and watchdogd's ledger <dataPath>/watchdogd/state.db.
*/}}
{{- define "watchdogd.dataPath" -}}
{{- if eq .Values.mode "sidecar" -}}
{{- .Values.sidecar.dataPath -}}
{{- else if eq .Values.mode "splice" -}}
{{- .Values.splice.dataPath -}}
{{- end -}}
{{- end -}}

{{/*
Whether the chart renders its resources: all but splice.renderPatch, which
renders only the patch of kandev's Deployment. "true" or nothing.
*/}}
{{- define "watchdogd.resources" -}}
{{- if not (and (eq .Values.mode "splice") .Values.splice.renderPatch) }}true{{ end -}}
{{- end -}}

{{/*
The names of watchdogd's ports and volumes in its pod. In splice mode the
pod is kandev's, whose own ports and volumes may be named http or config:
watchdogd's are prefixed there.
*/}}
{{- define "watchdogd.httpPortName" -}}
{{- if eq .Values.mode "splice" }}watchdogd{{ else }}http{{ end -}}
{{- end -}}
{{- define "watchdogd.slackPortName" -}}
{{- if eq .Values.mode "splice" }}watchdogd-slack{{ else }}slack{{ end -}}
{{- end -}}
{{- define "watchdogd.volumePrefix" -}}
{{- if eq .Values.mode "splice" }}watchdogd-{{ end -}}
{{- end -}}

{{/*
The labels that select watchdogd's pods (the Service's and the
PodMonitor's selector): its own pods', or in splice mode the label the
patch adds to kandev's pod.
*/}}
{{- define "watchdogd.podSelector" -}}
{{- if eq .Values.mode "splice" -}}
watchdogd/instance: {{ .Release.Name }}
{{- else -}}
{{ include "watchdogd.selectorLabels" . }}
{{- end -}}
{{- end -}}

{{/* The watchdogd container, shared by every mode. */}}
{{- define "watchdogd.container" -}}
name: watchdogd
image: {{ include "watchdogd.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
args: [run, --config, /etc/watchdogd/config/watchdogd.yaml]
ports:
  - name: {{ include "watchdogd.httpPortName" . }}
    containerPort: {{ .Values.service.port }}
    protocol: TCP
  {{- with include "watchdogd.slackPort" . }}
  - name: {{ include "watchdogd.slackPortName" $ }}
    containerPort: {{ . }}
    protocol: TCP
  {{- end }}
{{- $sc := deepCopy .Values.securityContext }}
{{- if eq .Values.mode "splice" }}
{{- /* kandev's pod: its pod-level context is kandev's, so watchdogd's user is set here. */}}
{{- $_ := set $sc "runAsNonRoot" true }}
{{- $_ := set $sc "runAsUser" .Values.splice.runAsUser }}
{{- $_ := set $sc "runAsGroup" .Values.splice.runAsGroup }}
{{- $_ := set $sc "seccompProfile" (dict "type" "RuntimeDefault") }}
{{- end }}
securityContext:
  {{- toYaml $sc | nindent 2 }}
resources:
  {{- toYaml .Values.resources | nindent 2 }}
{{- /* The operator commands (kubectl exec … watchdogd episodes list) find the config without --config. */}}
env:
  - name: WATCHDOGD_CONFIG
    value: /etc/watchdogd/config/watchdogd.yaml
  {{- with .Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{- define "watchdogd.probe" -}}
httpGet:
  path: {{ .path }}
  port: {{ include "watchdogd.httpPortName" .root }}
  scheme: {{ .root.Values.probes.scheme }}
  {{- with .root.Values.probes.httpHeaders }}
  httpHeaders:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
A probe: probes.<which> as given, a whole Probe replacing the chart's, or
the chart's own on path with its period and failure threshold.
*/}}
{{- define "watchdogd.probeBlock" -}}
{{- with index .root.Values.probes .which -}}
{{ toYaml . }}
{{- else -}}
{{ include "watchdogd.probe" . }}
periodSeconds: {{ .period }}
failureThreshold: {{ .failures }}
{{- end -}}
{{- end -}}

{{- define "watchdogd.configVolumes" -}}
{{- $p := include "watchdogd.volumePrefix" . -}}
- name: {{ $p }}config
  configMap:
    name: {{ include "watchdogd.fullname" . }}
- name: {{ $p }}secrets
  secret:
    secretName: {{ include "watchdogd.secretName" . }}
    defaultMode: 0400
- name: {{ $p }}tmp
  emptyDir:
    sizeLimit: 64Mi
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "watchdogd.configMounts" -}}
{{- $p := include "watchdogd.volumePrefix" . -}}
- name: {{ $p }}config
  mountPath: /etc/watchdogd/config
  readOnly: true
- name: {{ $p }}secrets
  mountPath: /etc/watchdogd/secrets
  readOnly: true
- name: {{ $p }}tmp
  mountPath: /tmp
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
A NetworkPolicy peer in words, for NOTES.txt: .peer, in the release's
.namespace.
*/}}
{{- define "watchdogd.describePeer" -}}
{{- $ns := get (default dict (get (default dict .peer.namespaceSelector) "matchLabels")) "kubernetes.io/metadata.name" -}}
{{- $pods := "every pod" -}}
{{- with .peer.podSelector }}{{ $pods = printf "pods matching %s" (toJson .) }}{{ end -}}
{{- if .peer.ipBlock -}}
addresses in {{ .peer.ipBlock.cidr }}
{{- else if and $ns (eq (len (keys .peer.namespaceSelector)) 1) (eq (len .peer.namespaceSelector.matchLabels) 1) -}}
{{ $pods }} in the namespace {{ $ns }}
{{- else if .peer.namespaceSelector -}}
{{ $pods }} in namespaces matching {{ toJson .peer.namespaceSelector }}
{{- else -}}
{{ $pods }} in the namespace {{ .namespace }}
{{- end -}}
{{- end -}}
