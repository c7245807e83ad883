package expconf

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/configkeys"
)

// keyProbes are configs that walk every branch of the parser: each searcher,
// each storage type, each hyperparameter type, one item of every list and
// the map forms of image and environment_variables. They need not be valid:
// the parser asks for every key of each object it visits either way. NAME
// stands for a name the user chooses (a hyperparameter, a port).
var keyProbes = []struct{ kind, doc string }{
	{"experiment", `
hyperparameters:
  NAME: {type: const, val: 1}
environment:
  image: {cpu: a}
  environment_variables: {cpu: [A=1]}
  registry_auth: {username: u}
  ports: {NAME: 1}
  proxy_ports: [{proxy_port: 1}]
resources: {devices: [{host_path: /dev/x}]}
bind_mounts: [{host_path: /a, container_path: /b}]
log_policies: [{name: a, action: {type: cancel_retries}}]
reproducibility: {}
retention_policy: {}
integrations: {webhooks: {}}
`},
	{"task:command", `
environment: {proxy_ports: [{proxy_port: 1}]}
resources: {devices: [{host_path: /dev/x}]}
bind_mounts: [{host_path: /a, container_path: /b}]
`},
	{"task:checkpoint_gc", `checkpoint_storage: {type: shared_fs}`},
}

func init() {
	for _, t := range []string{"int", "double", "log", "categorical"} {
		keyProbes = append(keyProbes, struct{ kind, doc string }{"experiment",
			"hyperparameters: {NAME: {type: " + t + "}}"})
	}
	keyProbes = append(keyProbes, struct{ kind, doc string }{"experiment",
		"hyperparameters: {NAME: {NAME: {type: const}}}"})
	for _, s := range searcherNames {
		keyProbes = append(keyProbes, struct{ kind, doc string }{"experiment", "searcher: {name: " + s + "}"})
	}
	for _, s := range storageTypes {
		keyProbes = append(keyProbes, struct{ kind, doc string }{"experiment", "checkpoint_storage: {type: " + s + "}"})
	}
	for _, t := range taskTypes {
		keyProbes = append(keyProbes, struct{ kind, doc string }{"task:" + t, "{}"})
	}
}

var listIndex = regexp.MustCompile(`\[\d+\]`)

// parserKeys runs every probe through the parser and returns each key path
// it asked for (hyperparameter and port names as *, list items as []), with
// the message of the keys it refuses ("" for those it accepts).
func parserKeys(t *testing.T) map[string]string {
	keys := map[string]string{}
	keyHook = func(path, msg string) {
		path = listIndex.ReplaceAllString(path, "[]")
		path = strings.ReplaceAll(path, "NAME", "*")
		if old, seen := keys[path]; !seen || (old != "" && msg == "") {
			keys[path] = msg
		}
	}
	defer func() { keyHook = nil }()
	for _, p := range keyProbes {
		if kind, ok := strings.CutPrefix(p.kind, "task:"); ok {
			_, _ = ParseTask([]byte(p.doc), kind)
		} else {
			_, _ = ParseExperiment([]byte(p.doc))
		}
	}
	return keys
}

// keyGetters are the decoder's methods that take a key name first.
var keyGetters = map[string]bool{"take": true, "reject": true, "str": true, "integer": true,
	"intPtr": true, "number": true, "boolean": true, "boolPtr": true, "list": true, "text": true,
	"textList": true, "strList": true, "freeForm": true, "deprecated": true, "has": true}

// literalKeys lists every key name written as a literal in a getter call in
// this package's source, so a key added on a branch no probe reaches still
// fails the audit.
func literalKeys(t *testing.T) []string {
	files, _ := filepath.Glob("*.go")
	set := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !keyGetters[sel.Sel.Name] {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				set[s] = true
			}
			return true
		})
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestEveryExperimentAndTaskConfigKeyHasItsEffectOrIsRefused: every key
// the parser accepts is in configkeys.Experiment (with the test of its
// effect, of its refusal or of its warning), every key there is one the
// parser knows, and every key the parser refuses says it is not supported.
func TestEveryExperimentAndTaskConfigKeyHasItsEffectOrIsRefused(t *testing.T) {
	keys := parserKeys(t)
	leaf := map[string]bool{}
	for k := range keys {
		leaf[k[strings.LastIndex(k, ".")+1:]] = true
	}
	for _, k := range literalKeys(t) {
		if !leaf[k] {
			t.Errorf("the parser names key %q but no key probe reaches it: add a probe to keyProbes", k)
		}
	}
	paths := make([]string, 0, len(keys))
	for k := range keys {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if os.Getenv("KEYAUDIT_PRINT") != "" {
			t.Logf("%s\t%s", p, keys[p])
		}
		entry, ok := configkeys.Lookup(configkeys.Experiment, p)
		switch {
		case !ok:
			t.Errorf("%s is accepted but not in configkeys.Experiment: give it its effect (and the test that proves it) or refuse it saying it is not supported", p)
		case keys[p] != "" && entry.Status != configkeys.Refused:
			t.Errorf("%s: the parser refuses it (%q) but the table says %s", p, keys[p], entry.Status)
		case keys[p] != "" && !strings.Contains(keys[p], "not supported"):
			t.Errorf("%s: the refusal %q does not say it is not supported", p, keys[p])
		}
	}
	for _, k := range configkeys.Experiment {
		if _, ok := keys[k.Path]; !ok {
			t.Errorf("configkeys.Experiment has %s, which the parser does not know", k.Path)
		}
	}
}
