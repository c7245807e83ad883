package masterconf

import (
	"strings"
	"testing"
)

func TestObservabilityKeys(t *testing.T) {
	tests := map[string]struct {
		yaml    string
		env     map[string]string
		wantErr string
		want    Observability
	}{
		"/metrics is off by default": {yaml: "port: 8080\n"},
		"enable_prometheus turns it on, with or without a token": {
			yaml: "observability:\n  enable_prometheus: true\n",
			want: Observability{EnablePrometheus: true},
		},
		"the token may come from the environment": {
			yaml: "observability: {enable_prometheus: true}\n",
			env:  map[string]string{"RESOLUTE_OBSERVABILITY_METRICS_TOKEN": "0123456789abcdef"},
			want: Observability{EnablePrometheus: true, MetricsToken: "0123456789abcdef"},
		},
		"a token without /metrics is refused, not ignored": {
			yaml:    "observability: {metrics_token: 0123456789abcdef}\n",
			wantErr: "observability.metrics_token: has no effect unless observability.enable_prometheus is true",
		},
		"a short token is refused": {
			yaml:    "observability: {enable_prometheus: true, metrics_token: short}\n",
			wantErr: "observability.metrics_token: must be at least 16 characters (got 5)",
		},
		"a misspelt key is refused": {
			yaml:    "observability: {enable_promethus: true}\n",
			wantErr: "observability.enable_promethus: unknown key",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := load(t, tc.yaml, tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Observability != tc.want {
				t.Errorf("observability = %+v, want %+v", cfg.Observability, tc.want)
			}
		})
	}
}
