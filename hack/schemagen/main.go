// Command schemagen writes the JSON schemas kubeconform validates the Helm
// chart against, offline: Kubernetes' from the OpenAPI spec that the Go
// module proxy serves inside k8s.io/kubernetes, and prometheus-operator's
// from its CRDs (PodMonitor, ServiceMonitor, PrometheusRule). The result is
// a cache (make chart keeps it in .cache/), never committed.
//
//	go run ./hack/schemagen -k8s v1.34.4 -prometheus-operator v0.85.0 -out .cache/schemas
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

func main() { os.Exit(run()) }

func run() int {
	k8s := flag.String("k8s", "v1.34.4", "k8s.io/kubernetes module version")
	po := flag.String("prometheus-operator", "v0.85.0", "github.com/prometheus-operator/prometheus-operator module version")
	out := flag.String("out", ".cache/schemas", "output directory")
	flag.Parse()
	if err := generate(*k8s, *po, *out); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		return 1
	}
	return 0
}

func generate(k8sVersion, poVersion, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	k8sDir, err := moduleDir("k8s.io/kubernetes@" + k8sVersion)
	if err != nil {
		return err
	}
	n, err := kubernetes(filepath.Join(k8sDir, "api/openapi-spec/swagger.json"), out)
	if err != nil {
		return err
	}
	poDir, err := moduleDir("github.com/prometheus-operator/prometheus-operator@" + poVersion)
	if err != nil {
		return err
	}
	m, err := crds(filepath.Join(poDir, "example/prometheus-operator-crd"), out,
		"podmonitors", "servicemonitors", "prometheusrules")
	if err != nil {
		return err
	}
	fmt.Printf("schemagen: %d Kubernetes and %d CRD schemas in %s\n", n, m, out)
	return nil
}

// moduleDir downloads a module through the Go module proxy (no go.mod
// change) and returns its directory.
func moduleDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	b, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(b, &info); jerr != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %w (%s)", modVersion, errors.Join(err, jerr), info.Error)
	}
	return info.Dir, nil
}

type schema = map[string]any

// kubernetes writes one standalone schema per group/version/kind, named as
// kubeconform looks them up: {kind}{-group}-{version}.json.
func kubernetes(swagger, out string) (int, error) {
	b, err := os.ReadFile(swagger)
	if err != nil {
		return 0, err
	}
	var spec struct {
		Definitions map[string]schema `json:"definitions"`
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return 0, fmt.Errorf("%s: %w", swagger, err)
	}
	n := 0
	for name, def := range spec.Definitions {
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk := g.(map[string]any)
			group, version, kind := gvk["group"].(string), gvk["version"].(string), gvk["kind"].(string)
			s := expand(def, spec.Definitions, map[string]bool{name: true})
			if err := write(out, kind, group, version, s); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// expand inlines $refs (a recursive reference becomes an open schema), makes
// objects strict, lets optional values be null, and accepts Kubernetes'
// int-or-string and quantity spellings.
func expand(s schema, defs map[string]schema, seen map[string]bool) schema {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/definitions/")
		if seen[name] {
			return schema{}
		}
		seen[name] = true
		defer delete(seen, name)
		return expand(defs[name], defs, seen)
	}
	out := schema{}
	for k, v := range s {
		switch k {
		case "properties":
			props := schema{}
			for pk, pv := range v.(map[string]any) {
				props[pk] = expand(pv.(map[string]any), defs, seen)
			}
			out[k] = props
		case "items":
			out[k] = expand(v.(map[string]any), defs, seen)
		case "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				out[k] = expand(m, defs, seen)
			} else {
				out[k] = v
			}
		case "x-kubernetes-group-version-kind", "description":
		default:
			out[k] = v
		}
	}
	if out["format"] == "int-or-string" {
		return schema{"oneOf": []any{schema{"type": "string"}, schema{"type": "integer"}}}
	}
	if t, ok := out["type"].(string); ok {
		out["type"] = []any{t, "null"}
		if t == "object" {
			if _, has := out["properties"]; has {
				if _, set := out["additionalProperties"]; !set {
					out["additionalProperties"] = false
				}
			}
		}
	}
	return out
}

func write(out, kind, group, version string, s schema) error {
	suffix := "-" + strings.ToLower(version)
	if group != "" {
		suffix = "-" + strings.ToLower(strings.Split(group, ".")[0]) + suffix
	}
	s["$schema"] = "http://json-schema.org/schema#"
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, strings.ToLower(kind)+suffix+".json"), b, 0o644)
}

// crds writes each served version's openAPIV3Schema of the named CRDs.
func crds(dir, out string, names ...string) (int, error) {
	n := 0
	for _, name := range names {
		path := filepath.Join(dir, "monitoring.coreos.com_"+name+".yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			return n, err
		}
		var crd struct {
			Spec struct {
				Group string `yaml:"group"`
				Names struct {
					Kind string `yaml:"kind"`
				} `yaml:"names"`
				Versions []struct {
					Name   string `yaml:"name"`
					Schema struct {
						OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
					} `yaml:"schema"`
				} `yaml:"versions"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			return n, fmt.Errorf("%s: %w", path, err)
		}
		if len(crd.Spec.Versions) == 0 {
			return n, errors.New(path + ": no versions")
		}
		for _, v := range crd.Spec.Versions {
			s := strictCRD(v.Schema.OpenAPIV3Schema)
			if err := write(out, crd.Spec.Names.Kind, crd.Spec.Group, v.Name, s); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// strictCRD closes a CRD schema's objects that list their properties, as
// kubeconform -strict expects.
func strictCRD(s map[string]any) map[string]any {
	for k, v := range s {
		switch vv := v.(type) {
		case map[string]any:
			s[k] = strictCRD(vv)
		case []any:
			for i, item := range vv {
				if m, ok := item.(map[string]any); ok {
					vv[i] = strictCRD(m)
				}
			}
		}
	}
	if _, has := s["properties"]; has && s["type"] == "object" {
		if _, set := s["additionalProperties"]; !set {
			if p, ok := s["x-kubernetes-preserve-unknown-fields"].(bool); !ok || !p {
				s["additionalProperties"] = false
			}
		}
	}
	return s
}
