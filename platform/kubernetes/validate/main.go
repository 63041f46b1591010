// kubevalidate reads rendered manifests (`helm template` output) on stdin and decodes every resource of a
// core Kubernetes kind strictly into its type from k8s.io/api: an unknown or misplaced field or a value of
// the wrong type fails it, as the API server's schema would. The operators' kinds (Strimzi, the Flink
// operator, CloudNativePG) have no types here: they are listed as unchecked, and checked by the chart's
// own tests against the native catalogs instead.
package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var separator = regexp.MustCompile(`(?m)^---\s*$`)

// target is an empty value of the Go type a core kind decodes into, or nil for a kind not known here.
func target(apiVersion, kind string) any {
	switch apiVersion + " " + kind {
	case "v1 Service":
		return &corev1.Service{}
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}
	case "v1 Secret":
		return &corev1.Secret{}
	case "apps/v1 StatefulSet":
		return &appsv1.StatefulSet{}
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}
	case "batch/v1 Job":
		return &batchv1.Job{}
	}
	return nil
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading stdin:", err)
		os.Exit(2)
	}
	invalid := 0
	for _, doc := range separator.Split(string(input), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var h header
		if err := yaml.Unmarshal([]byte(doc), &h); err != nil {
			fmt.Printf("INVALID document: %v\n", err)
			invalid++
			continue
		}
		if h.Kind == "" {
			continue // comments only
		}
		t := target(h.APIVersion, h.Kind)
		if t == nil {
			fmt.Printf("unchecked %s %s %s\n", h.APIVersion, h.Kind, h.Metadata.Name)
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), t); err != nil {
			fmt.Printf("INVALID %s %s %s: %v\n", h.APIVersion, h.Kind, h.Metadata.Name, err)
			invalid++
			continue
		}
		fmt.Printf("valid %s %s %s\n", h.APIVersion, h.Kind, h.Metadata.Name)
	}
	if invalid > 0 {
		os.Exit(1)
	}
}
