package control

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSystemSamples(t *testing.T) {
	tests := map[string]struct {
		avg     string
		want    map[string]string
		wantErr string
	}{
		"each agent's metrics are kept as they came, GPUs and mounts nested one level": {
			avg: `{"agent-1": {"disk_iops": 3, "/": {"disk_util": 41.5}}, "agent-2": {"GPU-a": {"gpu_util": 87, "gpu_free_memory": 1e9}}}`,
			want: map[string]string{
				"agent-1": `{"/":{"disk_util":41.5},"disk_iops":3}`,
				"agent-2": `{"GPU-a":{"gpu_free_memory":1000000000,"gpu_util":87}}`,
			},
		},
		"a report without agents is refused": {avg: `{}`, wantErr: "at least one agent"},
		"metrics not keyed by agent are refused (a flat training-style report)": {
			avg: `{"cpu_util_simple": 12}`, wantErr: "avg_metrics.cpu_util_simple: expected an agent id",
		},
		"a string is not a metric (NaN comes as one from the harness)": {
			avg: `{"a": {"cpu_util_simple": "NaN"}}`, wantErr: "avg_metrics.a.cpu_util_simple: expected a number",
		},
		"nesting deeper than a GPU's or a mount's metrics is refused": {
			avg: `{"a": {"GPU-a": {"gpu_util": {"x": 1}}}}`, wantErr: "avg_metrics.a.GPU-a.gpu_util: expected a number",
		},
		"an empty agent id is refused": {avg: `{"": {"x": 1}}`, wantErr: "expected an agent id"},
		"null is not a metric":         {avg: `{"a": {"x": null}}`, wantErr: "avg_metrics.a.x: expected a number"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var avg map[string]any
			if err := json.Unmarshal([]byte(tc.avg), &avg); err != nil {
				t.Fatal(err)
			}
			got, err := systemSamples(avg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotS := map[string]string{}
			for k, v := range got {
				gotS[k] = string(v)
			}
			if diff := cmp.Diff(tc.want, gotS); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSystemSamplesBoundsTheReport(t *testing.T) {
	many := map[string]any{}
	for i := range maxSystemMetrics + 1 {
		many[strings.Repeat("m", i+1)] = 1.0
	}
	if _, err := systemSamples(map[string]any{"a": many}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("a report of %d metrics: %v", len(many), err)
	}
}
