package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// readCSVFile reads a whole CSV file.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// TestDescribeMetricsTablesEveryReportAndWritesCSVFiles: after a real
// trial trains (training every 10 batches, validation and a checkpoint at
// 25 and 50), det trial describe --metrics and --csv table a row a step
// with a column a metric, and det experiment describe --metrics --outdir
// writes Determined's three CSV files.
func TestDescribeMetricsTablesEveryReportAndWritesCSVFiles(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	id := createdID(t, c.ok("", "experiment", "create", writeConfig(t, constConfig), contextDir(t), "-f"))
	c.ok("", "e", "wait", id, "--polling-interval", "0.2")
	var trials []resolute.Trial
	if err := json.Unmarshal([]byte(c.ok("", "e", "lt", id, "--json")), &trials); err != nil || len(trials) != 1 {
		t.Fatalf("trials: %v %s", err, c.ok("", "e", "lt", id, "--json"))
	}
	tid := itoa64(trials[0].ID)

	out := c.ok("", "trial", "describe", tid, "--metrics")
	for _, want := range []string{"Latest Metrics:", "Workloads:", "Training Metric: loss", "Validation Metric: validation_loss", "Checkpoint UUID"} {
		if !strings.Contains(out, want) {
			t.Errorf("det trial describe --metrics lacks %q:\n%s", want, out)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(c.ok("", "trial", "describe", tid, "--csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Without --metrics: the steps with a validation or checkpoint.
	if len(rows) != 3 || rows[1][1] != "25" || rows[2][1] != "50" || slices.Contains(rows[0], "Training Metric: loss") {
		t.Errorf("det trial describe --csv:\n%v", rows)
	}
	uuid := slices.Index(rows[0], "Checkpoint UUID")
	// The GC policy keeps the latest checkpoint: step 50's.
	if uuid < 0 || len(rows[2][uuid]) != 36 {
		t.Errorf("no checkpoint UUID at step 50: %v", rows)
	}

	dir := filepath.Join(t.TempDir(), "out")
	c.ok("", "experiment", "describe", id, "--metrics", "--outdir", dir)
	exps := readCSVFile(t, filepath.Join(dir, "experiments.csv"))
	if len(exps) != 2 || exps[1][0] != id || exps[1][1] != resolute.StateCompleted || exps[1][5] != "cli-const" {
		t.Errorf("experiments.csv: %v", exps)
	}
	if trs := readCSVFile(t, filepath.Join(dir, "trials.csv")); len(trs) != 2 || trs[1][0] != tid {
		t.Errorf("trials.csv: %v", trs)
	}
	wl := readCSVFile(t, filepath.Join(dir, "workloads.csv"))
	var steps []string
	for _, r := range wl[1:] {
		steps = append(steps, r[1])
	}
	if strings.Join(steps, ",") != "10,20,25,30,40,50" || !slices.Contains(wl[0], "Training Metric: loss") || !slices.Contains(wl[0], "Validation Metric: validation_loss") {
		t.Errorf("workloads.csv: %v", wl)
	}
	loss := slices.Index(wl[0], "Training Metric: loss")
	if loss < 0 || wl[1][loss] == "" || wl[3][loss] != "" {
		t.Errorf("a training loss at step 10 and none at 25 (validation only): %v", wl)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
