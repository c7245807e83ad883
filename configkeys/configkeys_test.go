package configkeys_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/configkeys"
)

// tests reads every Go test and harness Python test of the repository:
// name to body.
func tests(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	goTest := regexp.MustCompile(`(?m)(?:^//.*\n)*^func (Test\w+)\(`)
	pyTest := regexp.MustCompile(`(?m)^\s*def (test_\w+)\(`)
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		var re *regexp.Regexp
		switch {
		case strings.HasSuffix(path, "_test.go"):
			re = goTest
		case strings.HasSuffix(path, ".py") && strings.HasPrefix(d.Name(), "test_"):
			re = pyTest
		default:
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		locs := re.FindAllSubmatchIndex(src, -1)
		for i, l := range locs {
			end := len(src)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			out[string(src[l[2]:l[3]])] += string(src[l[0]:end])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// TestEveryKeyNamesATestThatExistsAndSpeaksOfIt: each entry's tests exist
// (a Go func TestX or a harness def test_x) and mention the key, in
// snake_case or CamelCase, so that a table entry cannot name any test at
// all; each status has what it needs.
func TestEveryKeyNamesATestThatExistsAndSpeaksOfIt(t *testing.T) {
	all := tests(t)
	seen := map[string]bool{}
	for table, keys := range map[string][]configkeys.Key{"Experiment": configkeys.Experiment, "Master": configkeys.Master} {
		for _, k := range keys {
			id := table + " " + k.Path
			if seen[id] {
				t.Errorf("%s: listed twice", id)
			}
			seen[id] = true
			switch k.Status {
			case configkeys.Effect, configkeys.Refused, configkeys.Kept:
				if k.Test == "" {
					t.Errorf("%s: %s needs the test that proves it", id, k.Status)
				}
			case configkeys.Elsewhere:
				if k.Owner == "" || k.Test != "" {
					t.Errorf("%s: elsewhere names its owner and no test", id)
				}
			default:
				t.Errorf("%s: unknown status %q", id, k.Status)
			}
			if (k.RefusedOn == "") != (k.RefusalTest == "") || (k.RefusedOn != "" && k.Status != configkeys.Effect) {
				t.Errorf("%s: refused on %q with test %q", id, k.RefusedOn, k.RefusalTest)
			}
			leaf := configkeys.Leaf(k.Path)
			for _, name := range []string{k.Test, k.RefusalTest} {
				if name == "" {
					continue
				}
				body, ok := all[name]
				switch {
				case !ok:
					t.Errorf("%s: no test %s in the repository", id, name)
				case !strings.Contains(body, leaf) && !strings.Contains(strings.ToLower(body), strings.ToLower(camel(leaf))) &&
					!strings.Contains(body, strings.ReplaceAll(leaf, "_", "-")):
					t.Errorf("%s: test %s never mentions %s", id, name, leaf)
				}
			}
		}
	}
}

// TestTheDocsAreTheTable: docs/config-keys.md is the table rendered.
// CONFIGKEYS_WRITE_DOCS=1 writes it.
func TestTheDocsAreTheTable(t *testing.T) {
	const path = "../docs/config-keys.md"
	want := configkeys.Markdown()
	if os.Getenv("CONFIGKEYS_WRITE_DOCS") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is not the table: run CONFIGKEYS_WRITE_DOCS=1 go test ./configkeys", path)
	}
}
