package db

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// InsertMetrics stores metric reports with one statement, and moves each
// trial's steps_completed forward. It is the ingestion path: callers batch.
// A report is stored once per trial, run, group and step: one already
// stored (a retried POST) is dropped.
func (db *DB) InsertMetrics(ctx context.Context, reports []resolute.MetricsReport) error {
	if len(reports) == 0 {
		return nil
	}
	reports = mergeSameStep(reports)
	now := time.Now()
	p := gen.InsertMetricsParams{
		TrialIds: make([]int64, len(reports)), TrialRunIds: make([]int32, len(reports)), Steps: make([]int64, len(reports)),
		GroupNames: make([]string, len(reports)), Metrics: make([]string, len(reports)), ReportedAts: make([]time.Time, len(reports)),
	}
	steps := map[int64]int64{}
	for i, r := range reports {
		at := r.ReportedAt
		if at.IsZero() {
			at = now
		}
		p.TrialIds[i], p.TrialRunIds[i], p.Steps[i] = r.TrialID, int32(r.TrialRunID), r.StepsCompleted
		p.GroupNames[i], p.Metrics[i], p.ReportedAts[i] = r.Group, string(r.Metrics), at
		steps[r.TrialID] = max(steps[r.TrialID], r.StepsCompleted)
	}
	return db.InTx(ctx, func(q *Queries) error {
		if err := q.q.InsertMetrics(ctx, p); err != nil {
			return translate(err, "metrics")
		}
		// Trials in id order: the runner locks trial rows too, and one order
		// keeps two batches from deadlocking.
		for _, id := range slices.Sorted(maps.Keys(steps)) {
			if err := q.q.SetTrialSteps(ctx, gen.SetTrialStepsParams{ID: id, StepsCompleted: steps[id]}); err != nil {
				return translate(err, "trial %d", id)
			}
		}
		// The series of these reports are merged later, off this path
		// (db/series_async.go); a chart reads the reports not merged yet.
		return nil
	})
}

// mergeSameStep merges the reports of one batch at the same trial, run,
// group and step into the first of them, as the database merges a report
// into one already stored (one INSERT may not change a row twice): a later
// value of the same metric wins.
func mergeSameStep(reports []resolute.MetricsReport) []resolute.MetricsReport {
	type key struct {
		trial int64
		run   int
		group string
		steps int64
	}
	first := map[key]int{}
	out := make([]resolute.MetricsReport, 0, len(reports))
	for _, r := range reports {
		k := key{r.TrialID, r.TrialRunID, r.Group, r.StepsCompleted}
		i, seen := first[k]
		if !seen {
			first[k] = len(out)
			out = append(out, r)
			continue
		}
		out[i].Metrics = mergeAvgMetrics(out[i].Metrics, r.Metrics)
	}
	return out
}

// mergeAvgMetrics is stored report a with b's avg_metrics added to its own.
func mergeAvgMetrics(a, b json.RawMessage) json.RawMessage {
	var ra, rb map[string]json.RawMessage
	var avgA, avgB map[string]json.RawMessage
	if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil ||
		json.Unmarshal(ra["avg_metrics"], &avgA) != nil || json.Unmarshal(rb["avg_metrics"], &avgB) != nil {
		return b // not reports of the harness's shape: the later one stands
	}
	if avgA == nil {
		avgA = map[string]json.RawMessage{}
	}
	for k, v := range avgB {
		avgA[k] = v
	}
	ra["avg_metrics"], _ = json.Marshal(avgA)
	merged, _ := json.Marshal(ra)
	return merged
}

// HideMetricsPastRestart hides the reports of a trial's runs before runID
// past the step of the trial's latest checkpoint, which runID restarts from
// (all of them without one), and returns how many it hid. They are kept but
// left out of series, the best validation and the searcher.
func (q *Queries) HideMetricsPastRestart(ctx context.Context, trialID int64, runID int) (int64, error) {
	n, err := q.q.HideMetricsPastRestart(ctx, gen.HideMetricsPastRestartParams{TrialID: trialID, RunID: int32(runID)})
	return n, translate(err, "metrics of trial %d", trialID)
}

// TellSearcher marks a trial's validation report at a run and step as told
// to the searcher, and reports whether it must be told now: not when it was
// told before (a retried POST) or is hidden. A report that is not stored is
// told.
func (q *Queries) TellSearcher(ctx context.Context, trialID int64, runID int, steps int64) (bool, error) {
	skip, err := q.q.TellSearcher(ctx, gen.TellSearcherParams{TrialID: trialID, TrialRunID: int32(runID), StepsCompleted: steps})
	if resolute.ErrorCode(translate(err, "")) == resolute.ENotFound {
		return true, nil
	}
	return !skip, translate(err, "validation of trial %d", trialID)
}

// ResetBestValidation sets a trial's best searcher metric from its visible
// validation reports, then its experiment's from its trials'.
func (q *Queries) ResetBestValidation(ctx context.Context, t resolute.Trial, metric string, smallerIsBetter bool) error {
	err := q.q.ResetTrialBestValidation(ctx, gen.ResetTrialBestValidationParams{ID: t.ID, Metric: metric, SmallerIsBetter: smallerIsBetter})
	if err != nil {
		return translate(err, "trial %d", t.ID)
	}
	err = q.q.ResetExperimentBestValidation(ctx, gen.ResetExperimentBestValidationParams{ID: t.ExperimentID, SmallerIsBetter: smallerIsBetter})
	return translate(err, "experiment %d", t.ExperimentID)
}

// TrialMetrics lists a trial's reports of one group in step order.
func (q *Queries) TrialMetrics(ctx context.Context, trialID int64, group string) ([]resolute.MetricsReport, error) {
	rows, err := q.q.ListTrialMetrics(ctx, gen.ListTrialMetricsParams{TrialID: trialID, GroupName: group})
	if err != nil {
		return nil, translate(err, "metrics of trial %d", trialID)
	}
	return toReports(rows), nil
}

// TrialMetricsTail returns a trial's last n reports of a group, in step
// order: what a page shows of a long run without reading all of it.
func (q *Queries) TrialMetricsTail(ctx context.Context, trialID int64, group string, n int) ([]resolute.MetricsReport, error) {
	rows, err := q.q.ListTrialMetricsTail(ctx, gen.ListTrialMetricsTailParams{TrialID: trialID, GroupName: group, Limit: int32(n)})
	if err != nil {
		return nil, translate(err, "metrics of trial %d", trialID)
	}
	slices.Reverse(rows)
	return toReports(rows), nil
}

// LatestTrialMetrics returns the last report of each group of a trial.
func (q *Queries) LatestTrialMetrics(ctx context.Context, trialID int64) ([]resolute.MetricsReport, error) {
	rows, err := q.q.LatestTrialMetrics(ctx, trialID)
	if err != nil {
		return nil, translate(err, "metrics of trial %d", trialID)
	}
	return toReports(rows), nil
}

// ExperimentMetricSeries returns one metric of a group of every trial of an
// experiment that reported it, in one query.
func (q *Queries) ExperimentMetricSeries(ctx context.Context, experimentID int64, group, metric string) ([]resolute.TrialSeries, error) {
	rows, err := q.q.ListExperimentMetricSeries(ctx, gen.ListExperimentMetricSeriesParams{ExperimentID: experimentID, GroupName: group, Metric: metric})
	if err != nil {
		return nil, translate(err, "metrics of experiment %d", experimentID)
	}
	out := []resolute.TrialSeries{}
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].TrialID != r.TrialID {
			out = append(out, resolute.TrialSeries{TrialID: r.TrialID})
		}
		s := &out[len(out)-1]
		s.Points = append(s.Points, resolute.MetricPoint{StepsCompleted: r.StepsCompleted, Value: r.Value})
	}
	return out, nil
}

// ExperimentMetricNames returns the names of the training and validation
// metrics an experiment's trials reported, by group, sorted: those of each
// trial's first and latest report of the group.
func (q *Queries) ExperimentMetricNames(ctx context.Context, experimentID int64) (map[string][]string, error) {
	rows, err := q.q.ListExperimentMetricNames(ctx, experimentID)
	if err != nil {
		return nil, translate(err, "metric names of experiment %d", experimentID)
	}
	out := map[string][]string{}
	for _, r := range rows {
		out[r.GroupName] = append(out[r.GroupName], r.Name)
	}
	return out, nil
}

// TrialMetricGroups returns the groups a trial reported metrics of, sorted.
func (q *Queries) TrialMetricGroups(ctx context.Context, trialID int64) ([]string, error) {
	groups, err := q.q.ListTrialMetricGroups(ctx, trialID)
	return groups, translate(err, "metric groups of trial %d", trialID)
}

func toReports(rows []gen.Metric) []resolute.MetricsReport {
	out := make([]resolute.MetricsReport, len(rows))
	for i, r := range rows {
		out[i] = resolute.MetricsReport{TrialID: r.TrialID, TrialRunID: int(r.TrialRunID), StepsCompleted: r.StepsCompleted,
			Group: r.GroupName, Metrics: json.RawMessage(r.Metrics), ReportedAt: r.ReportedAt}
	}
	return out
}

// CreateCheckpoint records a checkpoint a trial reported and makes it the
// trial's latest.
func (q *Queries) CreateCheckpoint(ctx context.Context, c resolute.Checkpoint) error {
	resources, err := json.Marshal(c.Resources)
	if err != nil {
		return err
	}
	meta := []byte(c.Metadata)
	if len(meta) == 0 {
		meta = []byte("{}")
	}
	n, err := q.q.CreateCheckpoint(ctx, gen.CreateCheckpointParams{Uuid: c.UUID, TrialID: c.TrialID, ExperimentID: c.ExperimentID,
		AllocationID: c.AllocationID, TaskID: c.TaskID, StepsCompleted: c.StepsCompleted, Resources: resources, Size: c.Size, Metadata: meta})
	if err != nil {
		return translate(err, "checkpoint %s", c.UUID)
	}
	if n == 0 {
		return resolute.Errorf(resolute.EConflict, "checkpoint %s is another trial's or was deleted; report a new one", c.UUID)
	}
	return translate(q.q.SetTrialCheckpoint(ctx, gen.SetTrialCheckpointParams{ID: c.TrialID, LatestCheckpoint: &c.UUID}), "trial %d", c.TrialID)
}

// Checkpoint returns the checkpoint with uuid.
func (q *Queries) Checkpoint(ctx context.Context, uuid string) (resolute.Checkpoint, error) {
	c, err := q.q.GetCheckpoint(ctx, uuid)
	return toCheckpoint(c), translate(err, "checkpoint %s", uuid)
}

// CheckpointForUpdate locks the checkpoint with uuid until the transaction
// ends and returns it.
func (q *Queries) CheckpointForUpdate(ctx context.Context, uuid string) (resolute.Checkpoint, error) {
	if _, err := q.q.LockCheckpoint(ctx, uuid); err != nil {
		return resolute.Checkpoint{}, translate(err, "checkpoint %s", uuid)
	}
	return q.Checkpoint(ctx, uuid)
}

// ExperimentCheckpoints lists an experiment's live checkpoints.
func (q *Queries) ExperimentCheckpoints(ctx context.Context, experimentID int64) ([]resolute.Checkpoint, error) {
	return checkpoints(q.q.ListExperimentCheckpoints(ctx, experimentID))
}

// TrialCheckpoints lists a trial's live checkpoints by step.
func (q *Queries) TrialCheckpoints(ctx context.Context, trialID int64) ([]resolute.Checkpoint, error) {
	return checkpoints(q.q.ListTrialCheckpoints(ctx, trialID))
}

// TrialCheckpointsPage lists one page of a trial's live checkpoints, the
// latest first, and how many it has in all.
func (q *Queries) TrialCheckpointsPage(ctx context.Context, trialID int64, limit, offset int) ([]resolute.Checkpoint, int, error) {
	n, err := q.q.CountTrialCheckpoints(ctx, trialID)
	if err != nil {
		return nil, 0, translate(err, "trial %d", trialID)
	}
	list, err := checkpoints(q.q.ListTrialCheckpointsPage(ctx, gen.ListTrialCheckpointsPageParams{TrialID: trialID, Limit: int32(limit), Offset: int32(offset)}))
	return list, int(n), err
}

// SetCheckpointDeleted marks a checkpoint's files gone.
func (q *Queries) SetCheckpointDeleted(ctx context.Context, uuid string) error {
	return translate(q.q.SetCheckpointDeleted(ctx, uuid), "checkpoint %s", uuid)
}

// UpdateCheckpointResources records what files of a checkpoint remain.
func (q *Queries) UpdateCheckpointResources(ctx context.Context, uuid string, resources map[string]int64) error {
	b, _ := json.Marshal(resources)
	var size int64
	for _, n := range resources {
		size += n
	}
	return translate(q.q.UpdateCheckpointResources(ctx, gen.UpdateCheckpointResourcesParams{Uuid: uuid, Resources: b, Size: size}), "checkpoint %s", uuid)
}

// ValidationAtStep returns a trial's validation metrics at a step, or nil.
func (q *Queries) ValidationAtStep(ctx context.Context, trialID, steps int64) (json.RawMessage, error) {
	m, err := q.q.ValidationAtStep(ctx, gen.ValidationAtStepParams{TrialID: trialID, StepsCompleted: steps})
	if resolute.ErrorCode(translate(err, "")) == resolute.ENotFound {
		return nil, nil
	}
	return m, translate(err, "validation of trial %d", trialID)
}

func checkpoints(rows []gen.Checkpoint, err error) ([]resolute.Checkpoint, error) {
	if err != nil {
		return nil, translate(err, "checkpoints")
	}
	out := make([]resolute.Checkpoint, len(rows))
	for i, r := range rows {
		out[i] = toCheckpoint(r)
	}
	return out, nil
}

func toCheckpoint(c gen.Checkpoint) resolute.Checkpoint {
	var res map[string]int64
	json.Unmarshal(c.Resources, &res)
	return resolute.Checkpoint{UUID: c.Uuid, TrialID: c.TrialID, ExperimentID: c.ExperimentID, AllocationID: c.AllocationID,
		TaskID: c.TaskID, StepsCompleted: c.StepsCompleted, State: c.State, Resources: res, Size: c.Size,
		Metadata: json.RawMessage(c.Metadata), ReportTime: c.ReportTime}
}

// InsertTaskLogs stores log lines with one COPY.
func (db *DB) InsertTaskLogs(ctx context.Context, logs []resolute.TaskLog) error {
	if len(logs) == 0 {
		return nil
	}
	rows := make([][]any, len(logs))
	for i, l := range logs {
		var rank *int32
		if l.Rank != nil {
			r := int32(*l.Rank)
			rank = &r
		}
		src := l.Source
		if src == "" {
			src = "task"
		}
		rows[i] = []any{l.TaskID, l.AllocationID, l.Time, l.Level, l.StdType, rank, src, l.Log, l.AgentID, l.ContainerID}
	}
	_, err := db.pool.CopyFrom(ctx, pgx.Identifier{"task_logs"},
		[]string{"task_id", "allocation_id", "time", "level", "stdtype", "rank", "source", "log", "agent_id", "container_id"}, pgx.CopyFromRows(rows))
	return translate(err, "task logs")
}

// LogFilter selects a task's log lines.
type LogFilter struct {
	After  int64  // only lines with a larger id
	Level  string // this level and above (resolute.LevelAtLeast); "" for all
	Search string // case-insensitive text, "" for all
	// Since and Until bound the lines' times; nil for no bound.
	Since, Until *time.Time
	// Ranks, Sources and StdTypes keep only lines of these ranks, sources
	// ("task", "master") and streams ("stdout", "stderr"); nil for all.
	Ranks             []int
	Sources, StdTypes []string
	// AgentIDs and ContainerIDs keep only lines printed on these agents
	// and in these containers (TaskLog's AgentID, ContainerID); nil for all.
	AgentIDs, ContainerIDs []string
	Limit                  int
}

// ranks is f.Ranks as the queries take them: nil for every rank.
func (f LogFilter) ranks() []int32 {
	if f.Ranks == nil {
		return nil
	}
	out := make([]int32, len(f.Ranks))
	for i, r := range f.Ranks {
		out[i] = int32(r)
	}
	return out
}

// TaskLogs lists a task's log lines in order.
func (q *Queries) TaskLogs(ctx context.Context, taskID string, f LogFilter) ([]resolute.TaskLog, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	p := gen.ListTaskLogsParams{TaskID: taskID, ID: f.After, Limit: int32(f.Limit), AfterTime: f.Since, BeforeTime: f.Until,
		Ranks: f.ranks(), Sources: f.Sources, Stdtypes: f.StdTypes, AgentIds: f.AgentIDs, ContainerIds: f.ContainerIDs}
	p.Levels = resolute.LevelsAtLeast(f.Level)
	if f.Search != "" {
		p.Search = &f.Search
	}
	rows, err := q.q.ListTaskLogs(ctx, p)
	if err != nil {
		return nil, translate(err, "logs of task %s", taskID)
	}
	return taskLogs(rows), nil
}

// TaskLogsTail lists the last n lines of a task under f (whose After and
// Limit it ignores), oldest first.
func (q *Queries) TaskLogsTail(ctx context.Context, taskID string, f LogFilter, n int) ([]resolute.TaskLog, error) {
	p := gen.ListTaskLogsTailParams{TaskID: taskID, Lim: int32(n), AfterTime: f.Since, BeforeTime: f.Until,
		Ranks: f.ranks(), Sources: f.Sources, Stdtypes: f.StdTypes, AgentIds: f.AgentIDs, ContainerIds: f.ContainerIDs}
	p.Levels = resolute.LevelsAtLeast(f.Level)
	if f.Search != "" {
		p.Search = &f.Search
	}
	rows, err := q.q.ListTaskLogsTail(ctx, p)
	if err != nil {
		return nil, translate(err, "logs of task %s", taskID)
	}
	slices.Reverse(rows)
	return taskLogs(rows), nil
}

func taskLogs(rows []gen.TaskLog) []resolute.TaskLog {
	out := make([]resolute.TaskLog, len(rows))
	for i, r := range rows {
		out[i] = resolute.TaskLog{ID: r.ID, TaskID: r.TaskID, AllocationID: r.AllocationID, Time: r.Time, Level: r.Level,
			StdType: r.Stdtype, Rank: intp(r.Rank), Source: r.Source, Log: r.Log, AgentID: r.AgentID, ContainerID: r.ContainerID}
	}
	return out
}
