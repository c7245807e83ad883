package expconf

import "testing"

func TestOrderedYAMLPutsSectionsInTheReferencesOrder(t *testing.T) {
	tests := map[string]struct {
		expanded, original, want string
	}{
		"sections in the reference's order, the unknown ones after, sorted": {
			`{"zz": 1, "log_policies": [], "name": "n", "searcher": {"metric": "loss", "name": "single"}, "aa": 2}`, "",
			"name: n\nsearcher:\n  name: single\n  metric: loss\nlog_policies: []\naa: 2\nzz: 1\n"},
		"hyperparameters as written, each one's keys as the reference lists them": {
			`{"hyperparameters": {"a": {"type": "const", "val": 1}, "lr": {"base": 10, "maxval": -1, "minval": -4, "type": "log"}}}`,
			"hyperparameters:\n  lr: {type: log}\n  a: 1\n",
			"hyperparameters:\n  lr:\n    type: log\n    minval: -4\n    maxval: -1\n    base: 10\n  a:\n    type: const\n    val: 1\n"},
		"a nested group of hyperparameters is ordered too": {
			`{"hyperparameters": {"opt": {"lr": {"val": 1, "type": "const"}}}}`, "",
			"hyperparameters:\n  opt:\n    lr:\n      type: const\n      val: 1\n"},
		"a string that reads as a number stays a string": {`{"name": "1e-5"}`, "", "name: \"1e-5\"\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := OrderedYAML([]byte(tc.expanded), tc.original)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
