package charttest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/resolute-ml/resolute/masterconf"
)

// repoRoot is the repository root, from this file's location.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func chartDir(t testing.TB) string { return filepath.Join(repoRoot(t), "charts", "resolute") }

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// helm returns the helm binary: RESOLUTE_HELM, or the one scripts/helm.sh
// builds (once, minutes) and caches.
func helm(t testing.TB) string {
	t.Helper()
	helmOnce.Do(func() {
		if p := os.Getenv("RESOLUTE_HELM"); p != "" {
			helmPath = p
			return
		}
		cmd := exec.Command("bash", filepath.Join(repoRoot(t), "scripts", "helm.sh"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			helmErr = errors.New("scripts/helm.sh: " + err.Error() + "\n" + stderr.String())
			return
		}
		helmPath = strings.TrimSpace(string(out))
	})
	if helmErr != nil {
		t.Fatal(helmErr)
	}
	return helmPath
}

// runHelm runs helm with its own empty configuration and cache directories.
func runHelm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// valuesFile writes values (YAML) to a file for helm's -f.
func valuesFile(t testing.TB, values string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// object is one rendered manifest: its raw YAML and its typed decoding.
type object struct {
	Kind, Name, Namespace string
	Raw                   []byte
	Obj                   k8sruntime.Object
}

// rendered is what `helm template` produced for one release.
type rendered struct {
	Release, Namespace string
	Objects            []object
	MasterYAML         string            // the master.yaml in the master's Secret
	Master             map[string]any    // MasterYAML as a map
	Config             masterconf.Config // MasterYAML loaded by masterconf
}

var (
	schemeOnce sync.Once
	decoder    k8sruntime.Decoder
)

// strictDecoder decodes the kinds the chart renders, failing on unknown or
// duplicate fields: a misspelt field in a template is an error here rather
// than something the API server silently drops.
func strictDecoder() k8sruntime.Decoder {
	schemeOnce.Do(func() {
		s := k8sruntime.NewScheme()
		for _, add := range []func(*k8sruntime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme,
			rbacv1.AddToScheme, schedulingv1.AddToScheme, networkingv1.AddToScheme} {
			if err := add(s); err != nil {
				panic(err)
			}
		}
		decoder = serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
	})
	return decoder
}

// template renders the chart with values (YAML) as release rel in namespace
// ns; it fails the test when helm fails.
func template(t testing.TB, rel, ns, values string) *rendered {
	t.Helper()
	out, err := templateErr(t, rel, ns, values)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	return parse(t, rel, ns, out)
}

func templateErr(t testing.TB, rel, ns, values string) (string, error) {
	t.Helper()
	return runHelm(t, "template", rel, chartDir(t), "--namespace", ns, "-f", valuesFile(t, values))
}

// documents splits a multi-document YAML stream, dropping empty documents.
func documents(t testing.TB, stream string) [][]byte {
	t.Helper()
	r := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return docs
		} else if err != nil {
			t.Fatalf("reading the rendered YAML: %v", err)
		}
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, doc)
		}
		if len(probe) > 0 {
			docs = append(docs, doc)
		}
	}
}

func parse(t testing.TB, rel, ns, stream string) *rendered {
	t.Helper()
	r := &rendered{Release: rel, Namespace: ns}
	for _, doc := range documents(t, stream) {
		if o, ok := operatorObject(t, doc); ok { // no Go types here: monitoring_test.go checks it
			r.Objects = append(r.Objects, o)
			continue
		}
		obj, gvk, err := strictDecoder().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("rendered object does not decode strictly: %v\n%s", err, doc)
		}
		var meta struct {
			Metadata struct{ Name, Namespace string }
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		r.Objects = append(r.Objects, object{Kind: gvk.Kind, Name: meta.Metadata.Name, Namespace: meta.Metadata.Namespace, Raw: doc, Obj: obj})
	}
	sec := get[*corev1.Secret](t, r, "Secret", "determined-master-config-"+rel)
	r.MasterYAML = sec.StringData["master.yaml"]
	if r.MasterYAML == "" {
		t.Fatalf("the master's Secret has no master.yaml: %v", sec.StringData)
	}
	if err := yaml.Unmarshal([]byte(r.MasterYAML), &r.Master); err != nil {
		t.Fatalf("master.yaml does not parse: %v\n%s", err, r.MasterYAML)
	}
	r.Config = loadMasterConfig(t, r.MasterYAML)
	return r
}

// loadMasterConfig loads master.yaml with masterconf's loader, as the master
// does with --config, so a rendered config is proven valid for the master.
func loadMasterConfig(t testing.TB, masterYAML string) masterconf.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "master.yaml")
	if err := os.WriteFile(p, []byte(masterYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := masterconf.Load([]string{"--config", p}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("the master would reject the rendered master.yaml: %v\n%s", err, masterYAML)
	}
	return cfg
}

// find returns the objects of a kind.
func (r *rendered) find(kind string) []object {
	var out []object
	for _, o := range r.Objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// lookup returns the object of that kind and name, if any.
func (r *rendered) lookup(kind, name string) (object, bool) {
	for _, o := range r.Objects {
		if o.Kind == kind && o.Name == name {
			return o, true
		}
	}
	return object{}, false
}

// get returns the typed object of that kind and name, failing the test
// without it.
func get[T k8sruntime.Object](t testing.TB, r *rendered, kind, name string) T {
	t.Helper()
	o, ok := r.lookup(kind, name)
	if !ok {
		var names []string
		for _, o := range r.Objects {
			names = append(names, o.Kind+"/"+o.Name)
		}
		t.Fatalf("no %s %q among the rendered objects: %s", kind, name, strings.Join(names, ", "))
	}
	typed, ok := o.Obj.(T)
	if !ok {
		t.Fatalf("%s %q decoded as %T", kind, name, o.Obj)
	}
	return typed
}
