package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
)

// workload is what a trial reported at one step, as Determined's describe
// tables it: its training and validation metrics and its checkpoint.
type workload struct {
	trialID, steps           int64
	training, validation     map[string]any
	trainedAt, validatedAt   time.Time
	checkpoint               string
	checkpointAt, reportedAt time.Time
}

// trialWorkloads reads every report of a trial (training, validation) and
// its checkpoints, merged by step in step order.
func trialWorkloads(ctx context.Context, s *session, trialID int64) ([]workload, error) {
	byStep := map[int64]*workload{}
	at := func(steps int64) *workload {
		w := byStep[steps]
		if w == nil {
			w = &workload{trialID: trialID, steps: steps}
			byStep[steps] = w
		}
		return w
	}
	for _, group := range []string{"training", "validation"} {
		reports, err := s.TrialMetrics(ctx, trialID, group)
		if err != nil {
			return nil, err
		}
		for _, r := range reports {
			w := at(r.StepsCompleted)
			m := avgMetrics(r.Metrics)
			if group == "training" {
				w.training, w.trainedAt = m, r.ReportedAt
			} else {
				w.validation, w.validatedAt = m, r.ReportedAt
			}
			if r.ReportedAt.After(w.reportedAt) {
				w.reportedAt = r.ReportedAt
			}
		}
	}
	ckpts, err := s.TrialCheckpoints(ctx, trialID)
	if err != nil {
		return nil, err
	}
	for _, c := range ckpts {
		w := at(c.StepsCompleted)
		w.checkpoint, w.checkpointAt = c.UUID, c.ReportTime
		if c.ReportTime.After(w.reportedAt) {
			w.reportedAt = c.ReportTime
		}
	}
	out := make([]workload, 0, len(byStep))
	for _, w := range byStep {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b workload) int { return int(a.steps - b.steps) })
	return out, nil
}

// avgMetrics is a report's metrics: its avg_metrics when it nests them.
func avgMetrics(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if avg, ok := m["avg_metrics"].(map[string]any); ok {
		return avg
	}
	return m
}

// metricNames are the names of the scalar metrics any workload reported
// in one group, sorted.
func metricNames(ws []workload, of func(workload) map[string]any) []string {
	seen := map[string]bool{}
	for _, w := range ws {
		for k, v := range of(w) {
			if _, ok := v.(float64); ok {
				seen[k] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// workloadTable is the Workloads table of Determined's describe: a row a
// step of a trial, with a column per training metric (when training) and
// per validation metric.
func workloadTable(ws []workload, training bool) ([]string, [][]string) {
	tnames := metricNames(ws, func(w workload) map[string]any { return w.training })
	vnames := metricNames(ws, func(w workload) map[string]any { return w.validation })
	if !training {
		tnames = nil
	}
	headers := []string{"Trial ID", "# of Batches", "Report Time"}
	for _, n := range tnames {
		headers = append(headers, "Training Metric: "+n)
	}
	headers = append(headers, "Checkpoint UUID", "Checkpoint Report Time", "Validation Report Time")
	for _, n := range vnames {
		headers = append(headers, "Validation Metric: "+n)
	}
	value := func(m map[string]any, k string) string {
		if f, ok := m[k].(float64); ok {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return ""
	}
	var rows [][]string
	for _, w := range ws {
		if !training && w.validation == nil && w.checkpoint == "" {
			continue // a training report alone: nothing this table shows
		}
		row := []string{strconv.FormatInt(w.trialID, 10), strconv.FormatInt(w.steps, 10), date(w.reportedAt)}
		for _, n := range tnames {
			row = append(row, value(w.training, n))
		}
		row = append(row, w.checkpoint, date(w.checkpointAt), date(w.validatedAt))
		for _, n := range vnames {
			row = append(row, value(w.validation, n))
		}
		rows = append(rows, row)
	}
	return headers, rows
}

// experimentTables are Determined's describe tables of an experiment:
// the experiment, its trials, and their workloads.
func experimentTables(ctx context.Context, s *session, e resolute.Experiment, trials []resolute.Trial, training bool) (tables [3][]string, rows [3][][]string, err error) {
	tables[0] = []string{"Experiment ID", "State", "Progress", "Start Time", "End Time", "Name", "Description", "Archived", "Resource Pool", "Labels"}
	labels := slices.Clone(e.Labels)
	sort.Strings(labels)
	rows[0] = [][]string{{strconv.FormatInt(e.ID, 10), e.State, percent(e.Progress), date(e.CreatedAt), endDate(e.EndedAt),
		e.Name, e.Description, strconv.FormatBool(e.Archived), e.ResourcePool, strings.Join(labels, ", ")}}
	tables[1] = []string{"Trial ID", "Experiment ID", "State", "Start Time", "End Time", "H-Params"}
	var all []workload
	for _, t := range trials {
		rows[1] = append(rows[1], []string{strconv.FormatInt(t.ID, 10), strconv.FormatInt(e.ID, 10), t.State,
			date(t.CreatedAt), endDate(t.EndedAt), string(t.Hparams)})
		ws, err := trialWorkloads(ctx, s, t.ID)
		if err != nil {
			return tables, rows, err
		}
		all = append(all, ws...)
	}
	tables[2], rows[2] = workloadTable(all, training)
	return tables, rows, nil
}

// writeDescribeCSVs writes experiments.csv, trials.csv and workloads.csv
// into dir, as Determined's `det experiment describe --outdir` does.
func writeDescribeCSVs(dir string, headers [3][]string, rows [3][][]string, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, name := range []string{"experiments.csv", "trials.csv", "workloads.csv"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = writeCSV(f, headers[i], rows[i])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "Wrote experiments.csv, trials.csv and workloads.csv to %s\n", dir)
	return nil
}
