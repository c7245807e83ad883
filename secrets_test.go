package resolute_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
)

func TestMaskConfig(t *testing.T) {
	tests := map[string]struct {
		in, want string
	}{
		"s3 keys are masked, the rest stays": {
			in:   `{"checkpoint_storage":{"type":"s3","bucket":"b","access_key":"AK","secret_key":"SK","endpoint_url":"http://m"},"name":"x"}`,
			want: `{"checkpoint_storage":{"access_key":"********","bucket":"b","endpoint_url":"http://m","secret_key":"********","type":"s3"},"name":"x"}`},
		"azure's connection string and credential are masked": {
			in:   `{"checkpoint_storage":{"type":"azure","container":"c","account_url":"https://a","credential":"KEY"}}`,
			want: `{"checkpoint_storage":{"account_url":"https://a","container":"c","credential":"********","type":"azure"}}`},
		"a config without secrets comes back as it was": {
			in:   `{"name": "x",  "checkpoint_storage": {"type": "gcs", "bucket": "b"}}`,
			want: `{"name": "x",  "checkpoint_storage": {"type": "gcs", "bucket": "b"}}`},
		"what is not JSON comes back as an empty object": {
			in: `{"checkpoint_storage": {"secret_key": "SK"`, want: `{}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := string(resolute.MaskConfig(json.RawMessage(tc.in))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestAnExperimentAndATaskAsJSONNeverShowTheirSecrets(t *testing.T) {
	cfg := json.RawMessage(`{"checkpoint_storage":{"type":"s3","bucket":"b","secret_key":"SK-123"}}`)
	e, _ := json.Marshal(resolute.Experiment{ID: 1, Config: cfg})
	tk, _ := json.Marshal(resolute.Task{ID: "gc", Config: cfg})
	resp, _ := json.Marshal(resolute.ExperimentResponse{Experiment: resolute.Experiment{Config: cfg}})
	for what, out := range map[string][]byte{"experiment": e, "task": tk, "experiment response": resp} {
		if strings.Contains(string(out), "SK-123") || !strings.Contains(string(out), resolute.Masked) {
			t.Errorf("%s as JSON: %s", what, out)
		}
	}
	if !strings.Contains(string(cfg), "SK-123") {
		t.Errorf("masking changed the experiment's own config: %s", cfg)
	}
}
