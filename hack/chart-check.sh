#!/usr/bin/env bash
# make chart: lint and render the Helm chart for each values file, validate
# every manifest against Kubernetes' and prometheus-operator's schemas
# (generated offline), check the rendered watchdogd config, make sure
# values.schema.json refuses what it must, check and unit-test the alerts
# with promtool, decode the dashboard strictly against Grafana's schema, and
# check the dashboard's and alerts' queries against the metrics watchdogd
# exports, splice watchdogd into a kandev-shaped Deployment as kubectl
# patch would, and package the chart. Offline; no cluster.
set -euo pipefail
helm=$1 kubeconform=$2 schemas=$3 watchdogd=$4 promtool=$5 promcheck=$6 splicecheck=$7
chart=deploy/helm/watchdogd
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

values=("" "$chart"/ci/*-values.yaml)
for v in "${values[@]}"; do
  name=$(basename "${v:-default}" .yaml)
  args=()
  [ -n "$v" ] && args=(-f "$v")
  echo "== $name"
  "$helm" lint --strict "$chart" "${args[@]}"
  "$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 "${args[@]}" > "$out/$name.yaml"
  "$kubeconform" -strict -summary -schema-location "$schemas/{{.ResourceKind}}{{.KindSuffix}}.json" "$out/$name.yaml"
  # The rendered config file passes watchdogd's own check (secret sources
  # are configured; the mounted files need not exist here).
  "$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 "${args[@]}" --show-only templates/configmap.yaml |
    sed -n '/watchdogd.yaml: |/,$p' | tail -n +2 | sed 's/^    //' > "$out/$name-watchdogd.yaml"
  "$watchdogd" check-config "$out/$name-watchdogd.yaml" | tee "$out/$name-check.txt"
done

# The config points only at Secret keys the values say exist, and
# check-config names exactly those files as not read here: with an existing
# Secret holding database-url and slack-token (kandev's auth off), no
# kandev.token_file; with the chart's own Secret and no tokens, only the
# database URL.
want_unread() {
  local name=$1; shift
  printf 'not read: /etc/watchdogd/secrets/%s\n' "$@" > "$out/$name-want.txt"
  grep '^not read: ' "$out/$name-check.txt" | sed 's/ (.*//' | diff -u "$out/$name-want.txt" - ||
    { echo "$name: check-config's unread files are not the Secret keys the values name" >&2; exit 1; }
}
want_unread existingsecret-values database-url slack-token
want_unread servicemonitor-values database-url kandev-token
want_unread default database-url
want_unread outlets-values database-url alertmanager-password webhook-ops-hook webhook-audit
want_unread interactivity-values database-url slack-token slack-app-token
want_unread interactivity-http-values database-url slack-token slack-signing-secret
if grep -q 'kandev-token' "$out/existingsecret-values-watchdogd.yaml"; then
  echo "existingsecret-values: kandev.token_file set though the Secret has no kandev-token" >&2; exit 1
fi

# Sidecar mode renders a native sidecar with startup and liveness probes
# only, sharing kandev's data volume.
grep -q 'restartPolicy: Always' "$out/sidecar-values.yaml"
if sed -n '/initContainers:/,/containers:/p' "$out/sidecar-values.yaml" | grep -q readinessProbe; then
  echo "the sidecar has a readiness probe" >&2; exit 1
fi

# What the ci values ask for is rendered, not silently dropped (kubeconform
# only checks that what is there is valid).
for want in 'kind: PodDisruptionBudget' 'minAvailable: 1' 'priorityClassName: watchdogd-critical' \
  'topologySpreadConstraints:' 'name: HTTPS_PROXY' 'mountPath: /etc/watchdogd/ca' 'name: corporate-ca' \
  'kind: NetworkPolicy' 'kubernetes.io/metadata.name: monitoring' ' - Egress' 'port: 53'; do
  grep -q "$want" "$out/ha-values.yaml" || { echo "ha-values: '$want' not rendered" >&2; exit 1; }
done
# Both monitors scrape a listener behind TLS and basic auth as the values
# ask (kubeconform checked them against prometheus-operator's schemas).
monitor() { awk -v k="kind: $1" '$0 == k {on = 1} /^---/ {on = 0} on' "$out/monitors-auth-values.yaml"; }
for want in 'scrapeTimeout: 10s' 'scheme: https' 'basicAuth:' 'name: watchdogd-scrape' 'key: password' 'tlsConfig:' \
  'key: ca.crt' 'serverName: watchdogd' 'relabelings:' 'targetLabel: node' 'metricRelabelings:' 'regex: go_gc_.*'; do
  monitor PodMonitor | grep -qF -- "$want" || { echo "monitors-auth-values: the PodMonitor lacks '$want'" >&2; exit 1; }
done
for want in 'scrapeTimeout: 15s' 'scheme: https' 'basicAuth:' 'key: username' 'configMap:' 'minVersion: TLS12'; do
  monitor ServiceMonitor | grep -qF -- "$want" || { echo "monitors-auth-values: the ServiceMonitor lacks '$want'" >&2; exit 1; }
done
if monitor ServiceMonitor | grep -q 'relabelings:'; then
  echo "monitors-auth-values: the ServiceMonitor renders relabelings it was not given" >&2; exit 1
fi
grep -q 'image: ghcr.io/watchdogd/watchdogd@sha256:' "$out/servicemonitor-values.yaml" ||
  { echo "servicemonitor-values: the image is not pinned by digest" >&2; exit 1; }
if grep -q 'PodDisruptionBudget\|priorityClassName\|topologySpreadConstraints' "$out/default.yaml"; then
  echo "default values render a disruption budget, priority or spread" >&2; exit 1
fi
# By default a NetworkPolicy lets only the namespace named monitoring in
# (Ingress only, egress open); the sidecar example pod (kandev's) has none.
"$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 --show-only templates/networkpolicy.yaml > "$out/default-np.yaml"
for want in 'kind: NetworkPolicy' '- Ingress' 'kubernetes.io/metadata.name: monitoring' 'port: http'; do
  grep -q -- "$want" "$out/default-np.yaml" || { echo "default values: the NetworkPolicy lacks '$want'" >&2; exit 1; }
done
if grep -q 'Egress' "$out/default-np.yaml"; then
  echo "default values: the NetworkPolicy limits egress" >&2; exit 1
fi
if grep -q 'kind: NetworkPolicy' "$out/sidecar-values.yaml"; then
  echo "sidecar values render a NetworkPolicy" >&2; exit 1
fi

# The HTTP mode's Slack listener (0.0.0.0:9465) is the container's port
# named slack, the Service's (its own number with service.slackPort), and
# the NetworkPolicy admits it from slackFrom's peers; Socket Mode and no
# interactivity render none of it.
doc() { awk -v k="kind: $1" '$0 == k {on = 1} /^---/ {on = 0} on' "$2"; }
http=$out/interactivity-http-values.yaml
doc Deployment "$http" | grep -A1 -- '- name: slack$' | grep -q 'containerPort: 9465$' ||
  { echo "interactivity-http-values: the container has no port slack 9465" >&2; exit 1; }
doc Service "$http" | grep -A2 -- '- name: slack$' | tr -s ' \n' ' ' | grep -q -- '- name: slack port: 9465 targetPort: slack' ||
  { echo "interactivity-http-values: the Service has no port slack 9465 to the container's slack" >&2; exit 1; }
doc NetworkPolicy "$http" | sed -n '/- port: slack$/,$p' | grep -q 'kubernetes.io/metadata.name: ingress-nginx' ||
  { echo "interactivity-http-values: the NetworkPolicy does not admit the port slack from slackFrom" >&2; exit 1; }
"$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 -f "$chart/ci/interactivity-http-values.yaml" \
  --set service.slackPort=443 --set 'networkPolicy.slackFrom=null' > "$out/http-443.yaml"
doc Service "$out/http-443.yaml" | grep -A2 -- '- name: slack$' | tr -s ' \n' ' ' | grep -q -- '- name: slack port: 443 targetPort: slack' ||
  { echo "service.slackPort=443: the Service's port slack is not 443" >&2; exit 1; }
doc NetworkPolicy "$out/http-443.yaml" | grep -q -- '- port: slack$' ||
  { echo "networkPolicy.slackFrom empty: the NetworkPolicy does not admit the port slack" >&2; exit 1; }
if doc NetworkPolicy "$out/http-443.yaml" | sed -n '/- port: slack$/,$p' | grep -q 'from:'; then
  echo "networkPolicy.slackFrom empty: the port slack is not open to every source" >&2; exit 1
fi
for name in default interactivity-values sidecar-values; do
  if grep -q 'name: slack$\|port: slack$' "$out/$name.yaml"; then
    echo "$name: a port for the HTTP mode's Slack listener without mode: http" >&2; exit 1
  fi
done

# Splice mode installs watchdogd's ConfigMap, Secret, Service and
# monitors, and no workload, ServiceAccount, volume claim or
# NetworkPolicy of its own: the pod is kandev's. The Service and the
# PodMonitor select the label the patch gives kandev's pod, on the port
# named watchdogd.
splice=$out/splice-values.yaml
for kind in Deployment ServiceAccount PersistentVolumeClaim NetworkPolicy; do
  if grep -q "^kind: $kind$" "$splice"; then echo "splice-values: the chart renders a $kind of its own" >&2; exit 1; fi
done
doc Service "$splice" | grep -q 'watchdogd/instance: watchdogd' && doc Service "$splice" | grep -q 'targetPort: watchdogd' ||
  { echo "splice-values: the Service does not select the patched pod's port watchdogd" >&2; exit 1; }
doc PodMonitor "$splice" | grep -q 'watchdogd/instance: watchdogd' && doc PodMonitor "$splice" | grep -q -- '- port: watchdogd' ||
  { echo "splice-values: the PodMonitor does not select the patched pod's port watchdogd" >&2; exit 1; }
# splice.renderPatch renders the patch alone; applied to a kandev-shaped
# Deployment with Kubernetes' strategic merge (kubectl patch's), it keeps
# all of kandev's pod and adds watchdogd (hack/splicecheck), and the
# result is a valid Deployment.
"$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 -f "$chart/ci/splice-values.yaml" \
  --set splice.renderPatch=true > "$out/splice-patch.yaml"
[ "$(grep -c '^kind: ' "$out/splice-patch.yaml")" = 1 ] && grep -q '^kind: Deployment$' "$out/splice-patch.yaml" ||
  { echo "splice.renderPatch: the render is not the one Deployment patch" >&2; exit 1; }
"$splicecheck" -deployment deploy/helm/testdata/kandev-deployment.yaml -patch "$out/splice-patch.yaml" -out "$out/spliced.yaml"
"$kubeconform" -strict -summary -schema-location "$schemas/{{.ResourceKind}}{{.KindSuffix}}.json" "$out/spliced.yaml"
# The values' liveness probe replaced the chart's whole.
awk '/^ *livenessProbe:/ {on = 1; next} on && /^ *[a-zA-Z]+Probe:|^ *volumeMounts:/ {on = 0} on' "$out/spliced.yaml" > "$out/spliced-liveness.txt"
grep -q 'periodSeconds: 30' "$out/spliced-liveness.txt" && grep -q 'failureThreshold: 10' "$out/spliced-liveness.txt" &&
  ! grep -q 'scheme:' "$out/spliced-liveness.txt" ||
  { cat "$out/spliced-liveness.txt"; echo "splice-values: probes.liveness did not replace the chart's probe whole" >&2; exit 1; }

# Probes are overridable as whole blocks: a readiness probe given as a
# tcpSocket replaces the chart's /readyz.
"$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 --show-only templates/deployment.yaml \
  --set-json 'probes.readiness={"tcpSocket":{"port":"http"},"periodSeconds":5}' > "$out/probe.yaml"
"$kubeconform" -strict -schema-location "$schemas/{{.ResourceKind}}{{.KindSuffix}}.json" "$out/probe.yaml"
sed -n '/readinessProbe:/,/volumeMounts:/p' "$out/probe.yaml" | tr -s ' \n' ' ' |
  grep -q 'readinessProbe: periodSeconds: 5 tcpSocket: port: http volumeMounts:' ||
  { echo "probes.readiness did not replace the chart's readiness probe" >&2; exit 1; }

# NOTES.txt (helm install prints it; helm template renders none, so it is
# rendered here as a YAML string of a copy of the chart): which namespaces
# can scrape and how to add one, and in splice mode how to apply the patch.
cp -r "$chart" "$out/notes-chart"
{ echo 'notes: |'; sed 's/^/  /' "$chart/templates/NOTES.txt"; } > "$out/notes-chart/templates/notes.yaml"
notes() { "$helm" template watchdogd "$out/notes-chart" --namespace kandev --kube-version 1.34.0 --show-only templates/notes.yaml "$@"; }
notes > "$out/notes-default.txt"
for want in 'the NetworkPolicy admits only' '- every pod in the namespace monitoring' 'A Prometheus anywhere else times out' \
  '"kubernetes.io/metadata.name":"monitoring"}}},{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"NAMESPACE"}}}]'; do
  grep -qF -- "$want" "$out/notes-default.txt" || { cat "$out/notes-default.txt"; echo "NOTES.txt lacks '$want'" >&2; exit 1; }
done
notes --set-json 'networkPolicy.ingressFrom=[{"podSelector":{}},{"ipBlock":{"cidr":"10.0.0.0/8"}}]' > "$out/notes-peers.txt"
grep -qF -- '- every pod in the namespace kandev' "$out/notes-peers.txt" && grep -qF -- '- addresses in 10.0.0.0/8' "$out/notes-peers.txt" ||
  { cat "$out/notes-peers.txt"; echo "NOTES.txt does not name the peers" >&2; exit 1; }
notes -f "$chart/ci/splice-values.yaml" > "$out/notes-splice.txt"
grep -qF -- '--set splice.renderPatch=true' "$out/notes-splice.txt" && grep -qF -- 'patch deployment kandev --type strategic' "$out/notes-splice.txt" &&
  ! grep -q 'NetworkPolicy' "$out/notes-splice.txt" ||
  { cat "$out/notes-splice.txt"; echo "NOTES.txt in splice mode does not say how to apply the patch" >&2; exit 1; }

# The render refuses values whose Slack listener the Service could not
# reach, with the message each file's "# want:" line names.
for bad in deploy/helm/testdata/bad-render/*.yaml; do
  want=$(sed -n 's/^# want: //p' "$bad")
  [ -n "$want" ] || { echo "$bad has no '# want:' line" >&2; exit 1; }
  if "$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 -f "$bad" > "$out/bad.log" 2>&1; then
    echo "the chart rendered $bad" >&2; exit 1
  fi
  grep -qF -- "$want" "$out/bad.log" || { cat "$out/bad.log"; echo "$bad: not refused with '$want'" >&2; exit 1; }
  echo "refused as it must: $bad"
done

for bad in deploy/helm/testdata/bad-values/*.yaml; do
  if "$helm" lint "$chart" -f "$bad" > "$out/bad.log" 2>&1; then
    echo "values.schema.json accepted $bad" >&2; exit 1
  fi
  grep -q 'values don.t meet the specifications of the schema' "$out/bad.log" || { cat "$out/bad.log"; exit 1; }
  echo "refused as it must: $bad"
done
# The alerts, as rendered in namespace kandev with the default values:
# valid PromQL, and each fires when it must and only then
# (deploy/helm/testdata/rules-test.yaml).
"$helm" template watchdogd "$chart" --namespace kandev --kube-version 1.34.0 --set prometheusRule.enabled=true \
  --show-only templates/prometheusrule.yaml | sed -n '/^spec:/,$p' | tail -n +2 | sed 's/^  //' > "$out/rules.yaml"
cp deploy/helm/testdata/rules-test.yaml "$out/"
"$promtool" check rules "$out/rules.yaml"
"$promtool" test rules "$out/rules-test.yaml"
# Every alert's runbook_url anchor has its section in docs/runbook.md.
for alert in $(sed -n 's/^ *- alert: //p' "$out/rules.yaml"); do
  grep -qx "## $alert" docs/runbook.md || { echo "docs/runbook.md has no section for $alert" >&2; exit 1; }
done
# The dashboard decodes strictly against Grafana's schema, the dashboard's
# and the alerts' queries read only series watchdogd exports, and the
# dashboard's queries parse as PromQL.
"$promcheck" -dashboard "$chart/dashboards/watchdogd.json" -rules "$out/rules.yaml" -out "$out/dashboard-rules.yaml"
"$promtool" check rules "$out/dashboard-rules.yaml"

# The package the release pushes to oci://ghcr.io/watchdogd/charts holds
# the whole chart: it renders exactly as the directory does.
version=$(awk '$1 == "version:" {print $2}' "$chart/Chart.yaml")
"$helm" package "$chart" --destination "$out/package"
[ -s "$out/package/watchdogd-$version.tgz" ] || { echo "helm package made no watchdogd-$version.tgz" >&2; exit 1; }
"$helm" template watchdogd "$out/package/watchdogd-$version.tgz" --namespace kandev --kube-version 1.34.0 > "$out/packaged.yaml"
diff -u "$out/default.yaml" "$out/packaged.yaml" || { echo "the packaged chart renders otherwise than the directory" >&2; exit 1; }
echo "chart: OK"
