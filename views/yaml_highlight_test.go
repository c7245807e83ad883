package views

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHighlightYAMLCutsLinesIntoTheirParts(t *testing.T) {
	unused := map[string]string{"environment.image": "not here"}
	tests := map[string]struct {
		src  string
		want []YAMLLine
	}{
		"a key and a string, with a comment": {"name: mnist # the name",
			[]YAMLLine{{Key: "name", Value: "mnist", ValueKind: "str", Comment: "# the name"}}},
		"a hash inside quotes is no comment": {`tag: "a # b"`,
			[]YAMLLine{{Key: "tag", Value: `"a # b"`, ValueKind: "str"}}},
		"numbers and literals": {"lr: 1e-05\nn: -4\non: true\nx: null",
			[]YAMLLine{{Key: "lr", Value: "1e-05", ValueKind: "num"}, {Key: "n", Value: "-4", ValueKind: "num"},
				{Key: "on", Value: "true", ValueKind: "lit"}, {Key: "x", Value: "null", ValueKind: "lit"}}},
		"a list item with a key": {"log_policies:\n  - name: OOM",
			[]YAMLLine{{Key: "log_policies"}, {Lead: "  - ", Key: "name", Value: "OOM", ValueKind: "str"}}},
		"a block scalar's lines are text, not keys": {"entrypoint: |\n  echo a: b\n  python3 x.py\nname: n",
			[]YAMLLine{{Key: "entrypoint", Value: "|", ValueKind: "lit"}, {Lead: "  ", Value: "echo a: b", ValueKind: "str"},
				{Lead: "  ", Value: "python3 x.py", ValueKind: "str"}, {Key: "name", Value: "n", ValueKind: "str"}}},
		"an unused key and its nested lines are marked, its sibling not": {"environment:\n  image:\n    cpu: i\n  force: x\nimage: y",
			[]YAMLLine{{Key: "environment"}, {Lead: "  ", Key: "image", Unused: "not here", UnusedKey: true},
				{Lead: "    ", Key: "cpu", Value: "i", ValueKind: "str", Unused: "not here"},
				{Lead: "  ", Key: "force", Value: "x", ValueKind: "str"}, {Key: "image", Value: "y", ValueKind: "str"}}},
		"a comment line": {"# top\n  # indented",
			[]YAMLLine{{Comment: "# top"}, {Lead: "  ", Comment: "# indented"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, HighlightYAML(tc.src, unused)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
