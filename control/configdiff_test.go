package control

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiffConfigs(t *testing.T) {
	tests := map[string]struct {
		configs []string
		want    []ConfigRow
	}{
		"nested keys are dotted and equal ones are marked as such": {
			configs: []string{
				`{"name":"a","hyperparameters":{"lr":{"type":"const","val":0.1}},"bind_mounts":[]}`,
				`{"name":"b","hyperparameters":{"lr":{"type":"const","val":0.1}},"bind_mounts":[]}`,
			},
			want: []ConfigRow{
				{Key: "bind_mounts", Values: []string{"[]", "[]"}},
				{Key: "hyperparameters.lr.type", Values: []string{"const", "const"}},
				{Key: "hyperparameters.lr.val", Values: []string{"0.1", "0.1"}},
				{Key: "name", Values: []string{"a", "b"}, Differ: true},
			},
		},
		"a key only one has differs, lists are indexed": {
			configs: []string{`{"a":[1,2],"b":null}`, `{"a":[1,3]}`, `{"a":[1,2],"b":null}`},
			want: []ConfigRow{
				{Key: "a.0", Values: []string{"1", "1", "1"}},
				{Key: "a.1", Values: []string{"2", "3", "2"}, Differ: true},
				{Key: "b", Values: []string{"null", "", "null"}, Differ: true},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var cs []json.RawMessage
			for _, c := range tc.configs {
				cs = append(cs, json.RawMessage(c))
			}
			if diff := cmp.Diff(tc.want, DiffConfigs(cs)); diff != "" {
				t.Errorf("DiffConfigs (-want +got):\n%s", diff)
			}
		})
	}
}
