package db

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// SetExperimentNotes replaces an experiment's notes (Markdown).
func (q *Queries) SetExperimentNotes(ctx context.Context, id int64, notes string) error {
	n, err := q.q.SetExperimentNotes(ctx, gen.SetExperimentNotesParams{ID: id, Notes: notes})
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	return translate(err, "experiment %d", id)
}

// AddExperimentLabel adds a label unless the experiment has it, and returns
// its labels.
func (q *Queries) AddExperimentLabel(ctx context.Context, id int64, label string) ([]string, error) {
	labels, err := q.q.AddExperimentLabel(ctx, gen.AddExperimentLabelParams{ID: id, Label: label})
	return labels, translate(err, "experiment %d", id)
}

// RemoveExperimentLabel removes a label, and returns the labels left.
func (q *Queries) RemoveExperimentLabel(ctx context.Context, id int64, label string) ([]string, error) {
	labels, err := q.q.RemoveExperimentLabel(ctx, gen.RemoveExperimentLabelParams{ID: id, Label: label})
	return labels, translate(err, "experiment %d", id)
}

// SetExperimentMaxSlots sets the most slots an experiment's trials may hold
// together; nil for no limit.
func (q *Queries) SetExperimentMaxSlots(ctx context.Context, id int64, maxSlots *int) error {
	n, err := q.q.SetExperimentMaxSlots(ctx, gen.SetExperimentMaxSlotsParams{ID: id, MaxSlots: int32p(maxSlots)})
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	return translate(err, "experiment %d", id)
}

// ExperimentLogs lists the log lines of several tasks (an experiment's
// trials) in order. With f.After 0 and tail set it returns the last f.Limit
// lines instead of the first.
func (q *Queries) ExperimentLogs(ctx context.Context, taskIDs []string, f LogFilter, tail bool) ([]resolute.TaskLog, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	var search *string
	levels := resolute.LevelsAtLeast(f.Level)
	if f.Search != "" {
		search = &f.Search
	}
	var rows []gen.TaskLog
	var err error
	if tail && f.After == 0 {
		rows, err = q.q.ListExperimentLogsTail(ctx, gen.ListExperimentLogsTailParams{TaskIds: taskIDs, Levels: levels, Search: search, Lim: int32(f.Limit)})
		slices.Reverse(rows)
	} else {
		rows, err = q.q.ListExperimentLogs(ctx, gen.ListExperimentLogsParams{TaskIds: taskIDs, After: f.After, Levels: levels, Search: search, Lim: int32(f.Limit)})
	}
	if err != nil {
		return nil, translate(err, "logs")
	}
	return taskLogs(rows), nil
}

// ExperimentCheckpointCounts maps each trial of an experiment to its number
// of completed checkpoints; trials without any are absent.
func (q *Queries) ExperimentCheckpointCounts(ctx context.Context, experimentID int64) (map[int64]int, error) {
	rows, err := q.q.CountExperimentCheckpoints(ctx, experimentID)
	if err != nil {
		return nil, translate(err, "checkpoints of experiment %d", experimentID)
	}
	out := make(map[int64]int, len(rows))
	for _, r := range rows {
		out[r.TrialID] = int(r.Checkpoints)
	}
	return out, nil
}

// ExperimentLatestMetricNames returns, by group, the names of the training
// and validation metrics in each trial's latest report: cheap enough for a
// page that polls, where ExperimentMetricNames reads the first reports too.
func (q *Queries) ExperimentLatestMetricNames(ctx context.Context, experimentID int64) (map[string][]string, error) {
	rows, err := q.q.ListExperimentLatestMetricNames(ctx, experimentID)
	if err != nil {
		return nil, translate(err, "metric names of experiment %d", experimentID)
	}
	out := map[string][]string{}
	for _, r := range rows {
		out[r.GroupName] = append(out[r.GroupName], r.Name)
	}
	return out, nil
}
