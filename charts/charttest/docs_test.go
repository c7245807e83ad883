package charttest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestValuesDocumented: docs/kubernetes.md's values table lists every key of
// values.yaml, and documents no key the chart does not have (a key shown only
// as a commented alternative in values.yaml, like checkpointStorage.bucket,
// counts as the chart's).
func TestValuesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir(t), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	keys := valueKeys("", values)

	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Za-z_.]+)` \\|")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	if len(documented) < 20 {
		t.Fatalf("found only %d rows in the values table of docs/kubernetes.md", len(documented))
	}
	for _, k := range keys {
		if !slices.Contains(documented, k) {
			t.Errorf("values.yaml key %s is missing from the values table of docs/kubernetes.md", k)
		}
	}
	for _, k := range documented {
		if slices.Contains(keys, k) {
			continue
		}
		// A commented alternative: "# <last segment>:" in values.yaml, under
		// a key that exists.
		parent, leaf := "", k
		if i := strings.LastIndex(k, "."); i >= 0 {
			parent, leaf = k[:i], k[i+1:]
		}
		if _, ok := values[strings.Split(parent, ".")[0]]; parent == "" || !ok ||
			!regexp.MustCompile(`(?m)^\s*#\s*`+regexp.QuoteMeta(leaf)+`:`).Match(data) {
			t.Errorf("docs/kubernetes.md documents %s, which values.yaml does not have", k)
		}
	}
}

// valueKeys flattens values into dotted paths; maps with keys are walked,
// everything else (scalars, lists, empty maps such as the pod specs) is a
// key of its own.
func valueKeys(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, valueKeys(path, sub)...)
		} else {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out
}

// TestResourceManagerKeysAreTheDocumentedOnes: the chart renders only the
// resource_manager keys that k8s/doc.go documents for master.yaml (masterconf
// rejects unknown keys too; this keeps the chart and that reference in step).
func TestResourceManagerKeysAreTheDocumentedOnes(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "k8s", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^//\t  ([a-z_]+):`).FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	if !documented["max_slots_per_pod"] {
		t.Fatalf("no resource_manager keys found in k8s/doc.go: %v", documented)
	}
	r := template(t, "keys", "ns", `
maxSlotsPerPod: 2
slotType: cpu
slotResourceRequests: {cpu: 3}
defaultScheduler: coscheduler
tlsSecret: tls
`)
	rm, _ := r.Master["resource_manager"].(map[string]any)
	for k := range rm {
		if !documented[k] {
			t.Errorf("the chart renders resource_manager.%s, which k8s/doc.go does not document", k)
		}
	}
	for _, k := range []string{"type", "namespace", "max_slots_per_pod", "slot_type", "slot_resource_requests",
		"default_scheduler", "determined_master_host", "determined_master_port", "determined_master_scheme"} {
		if _, ok := rm[k]; !ok {
			t.Errorf("resource_manager.%s is not rendered", k)
		}
	}
}
