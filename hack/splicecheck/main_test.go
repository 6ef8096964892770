package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kandev = "../../deploy/helm/testdata/kandev-deployment.yaml"

// good is a patch as the chart renders it, cut to what the checks read.
const good = `apiVersion: apps/v1
kind: Deployment
metadata: {name: kandev}
spec:
  template:
    metadata:
      labels: {watchdogd/instance: w}
      annotations: {kubectl.kubernetes.io/default-container: kandev}
    spec:
      containers:
        - name: watchdogd
          image: w
          ports: [{name: watchdogd, containerPort: 9464}]
          securityContext: {runAsNonRoot: true, runAsUser: 1000}
          livenessProbe: {httpGet: {path: /livez, port: watchdogd}}
          volumeMounts:
            - {name: watchdogd-config, mountPath: /etc/watchdogd/config}
            - {name: kandev-data, mountPath: /data}
      volumes:
        - {name: watchdogd-config, configMap: {name: w}}
`

// TestCheck: a patch that adds watchdogd passes; each way of breaking
// kandev's pod is named.
func TestCheck(t *testing.T) {
	for _, c := range []struct{ name, old, new, want string }{
		{"as the chart renders it", "", "", ""},
		{"a volume named as kandev's", "watchdogd-config", "config", "kandev's volume config changed"},
		{"a port named as kandev's", "{name: watchdogd, containerPort", "{name: http, containerPort", "two ports named http"},
		{"a mount of no volume", "{name: kandev-data, mountPath", "{name: data, mountPath", "mounts data, which the pod does not have"},
		{"kandev's container replaced", "- name: watchdogd\n", "- name: kandev\n", "kandev's containers changed"},
		{"no default container", "kubectl.kubernetes.io/default-container: kandev", "other: x", `default container is ""`},
		{"a readiness probe", "livenessProbe:", "readinessProbe:", "has a readiness probe"},
		{"kandev's label overwritten", "watchdogd/instance: w", "app.kubernetes.io/name: watchdogd", "selector no longer matches"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("the patch lacks %q", c.old)
			}
			dir := t.TempDir()
			patch := filepath.Join(dir, "patch.yaml")
			if err := os.WriteFile(patch, []byte(strings.ReplaceAll(good, c.old, c.new)), 0o600); err != nil {
				t.Fatal(err)
			}
			err := check(kandev, patch, filepath.Join(dir, "out.yaml"), "watchdogd")
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}
