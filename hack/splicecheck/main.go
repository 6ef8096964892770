// Command splicecheck applies the chart's splice patch to a kandev
// Deployment as `kubectl patch --type strategic` does (Kubernetes' own
// strategic merge, with apps/v1's merge keys: containers, volumes and ports
// by name), checks that the result is kandev's pod with watchdogd added and
// nothing of kandev's lost or shadowed, and writes it for kubeconform. It
// has a module of its own so that Kubernetes' API types never enter
// watchdogd's.
//
//	splicecheck -deployment kandev.yaml -patch patch.yaml -out spliced.yaml
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

func main() { os.Exit(run()) }

func run() int {
	deployment := flag.String("deployment", "", "kandev's Deployment (YAML)")
	patch := flag.String("patch", "", "the chart's rendered splice patch (YAML)")
	out := flag.String("out", "", "where to write the patched Deployment (YAML)")
	container := flag.String("container", "watchdogd", "the container the patch adds")
	flag.Parse()
	if err := check(*deployment, *patch, *out, *container); err != nil {
		fmt.Fprintln(os.Stderr, "splicecheck:", err)
		return 1
	}
	return 0
}

func check(deploymentFile, patchFile, out, name string) error {
	orig, err := readJSON(deploymentFile)
	if err != nil {
		return err
	}
	patch, err := readJSON(patchFile)
	if err != nil {
		return err
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, patch, appsv1.Deployment{})
	if err != nil {
		return fmt.Errorf("apply %s to %s: %w", patchFile, deploymentFile, err)
	}
	var before, after appsv1.Deployment
	if err := strictJSON(orig, &before); err != nil {
		return fmt.Errorf("%s: %w", deploymentFile, err)
	}
	if err := strictJSON(merged, &after); err != nil {
		return fmt.Errorf("the patched Deployment: %w", err)
	}
	if problems := compare(before, after, name); len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	y, err := yaml.JSONToYAML(merged)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, y, 0o644); err != nil {
		return err
	}
	fmt.Printf("splicecheck: %s patched into %s: %d init containers, %d containers, %d volumes\n",
		name, after.Name, len(after.Spec.Template.Spec.InitContainers), len(after.Spec.Template.Spec.Containers), len(after.Spec.Template.Spec.Volumes))
	return nil
}

// compare names what the patch broke: kandev's own containers (and the
// default one, so that kubectl logs and exec still mean kandev), init containers,
// volumes, labels, annotations and security context must be as they were,
// the selector must still match the pod, and the added container must be
// a plain container (a native sidecar's startup would hold
// kandev back while watchdogd cannot start) without a readiness probe
// (its readiness would take kandev out of its Service), whose every mount
// is a volume of the pod, with names that meet none of kandev's.
func compare(before, after appsv1.Deployment, name string) []string {
	var p []string
	b, a := before.Spec.Template.Spec, after.Spec.Template.Spec
	if !reflect.DeepEqual(b.InitContainers, a.InitContainers) {
		p = append(p, "kandev's init containers changed")
	}
	var added *corev1.Container
	var kept []corev1.Container
	for i := range a.Containers {
		if a.Containers[i].Name == name {
			added = &a.Containers[i]
		} else {
			kept = append(kept, a.Containers[i])
		}
	}
	if !reflect.DeepEqual(b.Containers, kept) {
		p = append(p, "kandev's containers changed")
	}
	if added == nil {
		return append(p, "no container "+name)
	}
	// A strategic merge puts the added container first: kubectl logs and
	// exec would default to it without this annotation.
	if d := after.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; d == name || !slices.ContainsFunc(b.Containers, func(c corev1.Container) bool { return c.Name == d }) {
		p = append(p, fmt.Sprintf("the pod's default container is %q, not one of kandev's", d))
	}
	if added.ReadinessProbe != nil {
		p = append(p, name+" has a readiness probe: it would take kandev out of its Service")
	}
	if added.LivenessProbe == nil || added.SecurityContext == nil || added.SecurityContext.RunAsNonRoot == nil || !*added.SecurityContext.RunAsNonRoot {
		p = append(p, name+" has no liveness probe, or may run as root")
	}
	volumes := map[string]bool{}
	for _, v := range a.Volumes {
		if volumes[v.Name] {
			p = append(p, "two volumes named "+v.Name)
		}
		volumes[v.Name] = true
	}
	for _, v := range b.Volumes {
		if !hasVolume(a.Volumes, v) {
			p = append(p, "kandev's volume "+v.Name+" changed")
		}
	}
	for _, m := range added.VolumeMounts {
		if !volumes[m.Name] {
			p = append(p, name+" mounts "+m.Name+", which the pod does not have")
		}
	}
	ports := map[string]bool{}
	for _, c := range append(append([]corev1.Container{}, a.Containers...), a.InitContainers...) {
		for _, port := range c.Ports {
			if port.Name != "" && ports[port.Name] {
				p = append(p, "two ports named "+port.Name)
			}
			ports[port.Name] = true
		}
	}
	sel, err := metaSelector(after)
	if err != nil || !sel.Matches(labels.Set(after.Spec.Template.Labels)) {
		p = append(p, "the Deployment's selector no longer matches its pod")
	}
	for k, v := range before.Spec.Template.Labels {
		if after.Spec.Template.Labels[k] != v {
			p = append(p, "kandev's pod label "+k+" changed")
		}
	}
	for k, v := range before.Spec.Template.Annotations {
		if after.Spec.Template.Annotations[k] != v {
			p = append(p, "kandev's pod annotation "+k+" changed")
		}
	}
	if !reflect.DeepEqual(b.SecurityContext, a.SecurityContext) {
		p = append(p, "kandev's pod security context changed")
	}
	return p
}

func hasVolume(vs []corev1.Volume, want corev1.Volume) bool {
	for _, v := range vs {
		if reflect.DeepEqual(v, want) {
			return true
		}
	}
	return false
}

func metaSelector(d appsv1.Deployment) (labels.Selector, error) {
	if d.Spec.Selector == nil {
		return nil, errors.New("no selector")
	}
	return labels.SelectorFromSet(d.Spec.Selector.MatchLabels), nil
}

func readJSON(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return j, nil
}

// strictJSON decodes a Deployment, refusing fields apps/v1 does not have.
func strictJSON(b []byte, v any) error {
	return yaml.UnmarshalStrict(bytes.TrimSpace(b), v)
}
