package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
)

// ckpt is a checkpoint of trial with a validation loss (nil for none).
func ckpt(uuid string, trial, steps int64, loss *float64) resolute.Checkpoint {
	c := resolute.Checkpoint{UUID: uuid, TrialID: trial, StepsCompleted: steps, State: "COMPLETED"}
	if loss != nil {
		c.Validation, _ = json.Marshal(map[string]any{"avg_metrics": map[string]float64{"loss": *loss}})
	}
	return c
}

func f(v float64) *float64 { return &v }

func TestBestCheckpoints(t *testing.T) {
	t.Parallel()
	deleted := ckpt("gone", 1, 50, f(0.01))
	deleted.State = "DELETED"
	list := []resolute.Checkpoint{
		ckpt("a", 1, 10, f(0.5)), ckpt("b", 1, 20, f(0.2)), ckpt("c", 2, 10, f(0.3)),
		ckpt("d", 2, 20, nil), ckpt("e", 3, 10, f(0.9)), deleted,
	}
	uuids := func(l []resolute.Checkpoint) []string {
		out := []string{}
		for _, c := range l {
			out = append(out, c.UUID)
		}
		return out
	}
	tests := map[string]struct {
		smaller  bool
		n        int
		perTrial bool
		want     []string
	}{
		"smaller is better, all checkpoints":       {true, 3, false, []string{"b", "c", "a"}},
		"larger is better, all checkpoints":        {false, 2, false, []string{"e", "a"}},
		"smaller is better, one per trial":         {true, 5, true, []string{"b", "c", "e"}},
		"larger is better, one per trial":          {false, 2, true, []string{"e", "a"}},
		"no checkpoints asked for gives none":      {true, 0, false, []string{}},
		"without a validation or deleted, skipped": {true, 10, false, []string{"b", "c", "a", "e"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := uuids(bestCheckpoints(list, "loss", tc.smaller, tc.n, tc.perTrial))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("best (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSearcherMetric(t *testing.T) {
	t.Parallel()
	m, smaller := searcherMetric(resolute.Experiment{Config: json.RawMessage(`{"searcher": {"metric": "acc", "smaller_is_better": false}}`)})
	if m != "acc" || smaller {
		t.Errorf("got %q %v", m, smaller)
	}
	if m, smaller = searcherMetric(resolute.Experiment{Config: json.RawMessage(`{"searcher": {"metric": "loss"}}`)}); m != "loss" || !smaller {
		t.Errorf("smaller_is_better defaults to true: got %q %v", m, smaller)
	}
}

func TestTables(t *testing.T) {
	t.Parallel()
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.Local)
	var b strings.Builder
	experimentTable(&b, []resolute.Experiment{{ID: 4, Username: "admin", Name: "mnist", State: "ACTIVE",
		Progress: 0.25, CreatedAt: start, NumTrials: 2, BestValidation: f(0.125)}})
	want := "ID  Owner  Name   State   Progress  Start Time           End Time  Trials  Best\n" +
		"--  -----  ----   -----   --------  ----------           --------  ------  ----\n" +
		"4   admin  mnist  ACTIVE  25.0%     2024-05-01 12:00:00            2       0.125\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("experiment table (-want +got):\n%s", diff)
	}

	b.Reset()
	c := ckpt("1b2c", 7, 100, f(0.5))
	c.Size = 2048
	c.Resources = map[string]int64{"model.pt": 2048}
	checkpointTable(&b, []resolute.Checkpoint{c}, "loss")
	if !strings.Contains(b.String(), "7         100           COMPLETED  0.5                1b2c  1      2.0 KiB") {
		t.Errorf("checkpoint table:\n%s", b.String())
	}
}

func TestJSONToYAML(t *testing.T) {
	t.Parallel()
	got, err := jsonToYAML(json.RawMessage(`{"name": "x", "searcher": {"max_length": 1000000, "lr": 0.001}, "labels": ["a"], "x": null}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "labels:\n  - a\nname: x\nsearcher:\n  lr: 0.001\n  max_length: 1000000\nx: null\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("yaml (-want +got):\n%s", diff)
	}
}

func TestUploadProgress(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }

	var small strings.Builder
	p := newUploadProgress(&small, 1000, clock)
	p.update(500)
	p.update(1000)
	p.done()
	if small.String() != "" {
		t.Errorf("a small, quick upload shows progress: %q", small.String())
	}

	var slow strings.Builder
	p = newUploadProgress(&slow, 1000, clock)
	p.update(100)
	now = now.Add(2 * time.Second)
	p.update(500)
	p.update(501)
	p.update(1000)
	p.done()
	want := "\rUploading context:  50% (500 B of 1000 B)\rUploading context: 100% (1000 B of 1000 B)\n"
	if slow.String() != want {
		t.Errorf("slow upload printed %q, want %q", slow.String(), want)
	}

	var large strings.Builder
	p = newUploadProgress(&large, 4<<20, clock)
	p.update(1 << 20)
	p.done()
	if !strings.HasPrefix(large.String(), "\rUploading context:  25% (1.0 MiB of 4.0 MiB)") {
		t.Errorf("large upload printed %q", large.String())
	}
}

func TestTooLargeContextIsRefusedBeforeLogin(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "train.py"), []byte("pass\n"), 0o644)
	big, err := os.Create(filepath.Join(dir, "weights.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 100 MiB on paper, nothing on disk.
	if err := big.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	big.Close()
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("name: x\n"), 0o644)

	var out, errOut strings.Builder
	// No master listens here: the refusal must come before any call.
	getenv := func(k string) string {
		return map[string]string{"DET_MASTER": "http://127.0.0.1:1", "XDG_CONFIG_HOME": t.TempDir()}[k]
	}
	err = run(t.Context(), []string{"experiment", "create", cfg, dir}, strings.NewReader(""), &out, &errOut, getenv)
	if err == nil {
		t.Fatal("a 100 MiB context was accepted")
	}
	code := report(&errOut, err)
	if code != 1 || !strings.Contains(errOut.String(), "holds 100.0 MiB in 2 files; the limit is 96.0 MiB") ||
		!strings.Contains(errOut.String(), "100.0 MiB  weights.bin") || !strings.Contains(errOut.String(), ".detignore") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut.String())
	}
}
