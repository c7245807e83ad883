package db

import (
	"context"
	"encoding/json"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// CreateTrial adds a trial the searcher asked for.
func (q *Queries) CreateTrial(ctx context.Context, experimentID int64, requestID int, state string, hparams []byte, seed int64) (resolute.Trial, error) {
	t, err := q.q.CreateTrial(ctx, gen.CreateTrialParams{ExperimentID: experimentID, RequestID: int32(requestID), State: state, Hparams: hparams, Seed: seed})
	return toTrial(t), translate(err, "trial %d of experiment %d", requestID, experimentID)
}

// Trial returns the trial with id.
func (q *Queries) Trial(ctx context.Context, id int64) (resolute.Trial, error) {
	t, err := q.q.GetTrial(ctx, id)
	return toTrial(t), translate(err, "trial %d", id)
}

// TrialByRequest returns the trial the searcher knows as requestID.
func (q *Queries) TrialByRequest(ctx context.Context, experimentID int64, requestID int) (resolute.Trial, error) {
	t, err := q.q.GetTrialByRequest(ctx, gen.GetTrialByRequestParams{ExperimentID: experimentID, RequestID: int32(requestID)})
	return toTrial(t), translate(err, "trial %d of experiment %d", requestID, experimentID)
}

// Trials lists an experiment's trials by id.
func (q *Queries) Trials(ctx context.Context, experimentID int64) ([]resolute.Trial, error) {
	rows, err := q.q.ListTrials(ctx, experimentID)
	if err != nil {
		return nil, translate(err, "trials of experiment %d", experimentID)
	}
	out := make([]resolute.Trial, len(rows))
	for i, r := range rows {
		out[i] = toTrial(r)
	}
	return out, nil
}

// SetTrialState sets a trial's state (and the end time of final states).
func (q *Queries) SetTrialState(ctx context.Context, id int64, state string) error {
	return translate(q.q.SetTrialState(ctx, gen.SetTrialStateParams{ID: id, State: state}), "trial %d", id)
}

// StartTrialRun counts a new allocation of the trial and returns its run id.
func (q *Queries) StartTrialRun(ctx context.Context, id int64) (int, error) {
	n, err := q.q.StartTrialRun(ctx, id)
	return int(n), translate(err, "trial %d", id)
}

// AddTrialRestart counts a failure of the trial.
func (q *Queries) AddTrialRestart(ctx context.Context, id int64) error {
	return translate(q.q.AddTrialRestart(ctx, id), "trial %d", id)
}

// SetTrialProgress records the progress a trial reported.
func (q *Queries) SetTrialProgress(ctx context.Context, id int64, p float64) error {
	return translate(q.q.SetTrialProgress(ctx, gen.SetTrialProgressParams{ID: id, Progress: p}), "trial %d", id)
}

// SetTrialEarlyExit records why a trial exited early.
func (q *Queries) SetTrialEarlyExit(ctx context.Context, id int64, reason string) error {
	return translate(q.q.SetTrialEarlyExit(ctx, gen.SetTrialEarlyExitParams{ID: id, EarlyExit: &reason}), "trial %d", id)
}

// SetTrialRunnerState records the status a trial set for itself.
func (q *Queries) SetTrialRunnerState(ctx context.Context, id int64, s string) error {
	return translate(q.q.SetTrialRunnerState(ctx, gen.SetTrialRunnerStateParams{ID: id, RunnerState: s}), "trial %d", id)
}

// SetTrialLatestCheckpoint makes uuid the checkpoint the trial resumes from,
// e.g. a warm start from another experiment's checkpoint.
func (q *Queries) SetTrialLatestCheckpoint(ctx context.Context, id int64, uuid string) error {
	return translate(q.q.SetTrialCheckpoint(ctx, gen.SetTrialCheckpointParams{ID: id, LatestCheckpoint: &uuid}), "trial %d", id)
}

// SetTrialBestValidation records the trial's best searcher metric.
func (q *Queries) SetTrialBestValidation(ctx context.Context, id int64, v float64) error {
	return translate(q.q.SetTrialBestValidation(ctx, gen.SetTrialBestValidationParams{ID: id, BestValidation: &v}), "trial %d", id)
}

func toTrial(t gen.Trial) resolute.Trial {
	out := resolute.Trial{
		ID: t.ID, ExperimentID: t.ExperimentID, RequestID: int(t.RequestID), State: t.State, Hparams: json.RawMessage(t.Hparams),
		Seed: t.Seed, RunID: int(t.RunID), Restarts: int(t.Restarts), StepsCompleted: t.StepsCompleted,
		BestValidation: t.BestValidation, Progress: t.Progress, RunnerState: t.RunnerState, CreatedAt: t.CreatedAt, EndedAt: t.EndedAt,
	}
	if t.LatestCheckpoint != nil {
		out.LatestCheckpoint = *t.LatestCheckpoint
	}
	if t.EarlyExit != nil {
		out.EarlyExit = *t.EarlyExit
	}
	if t.LogPolicyMatched != nil {
		out.LogPolicyMatched = *t.LogPolicyMatched
	}
	out.RetriesCancelled, out.ExcludedAgents = t.CancelRetries, t.ExcludedAgents
	return out
}

// CreateAllocation adds a pending allocation of a task; trialID may be nil
// for tasks that are not trials. It has no token until StartAllocation.
func (q *Queries) CreateAllocation(ctx context.Context, id, taskID string, trialID *int64, slots int) error {
	err := q.q.CreateAllocation(ctx, gen.CreateAllocationParams{ID: id, TaskID: taskID, TrialID: trialID, Slots: int32(slots)})
	return translate(err, "allocation %s", id)
}

// Allocation returns the allocation with id.
func (q *Queries) Allocation(ctx context.Context, id string) (resolute.Allocation, error) {
	a, err := q.q.GetAllocation(ctx, id)
	return toAllocation(a), translate(err, "allocation %s", id)
}

// AllocationByToken returns the allocation whose token hashes to hash and
// the experiment of its trial (0 when it is no trial's).
func (q *Queries) AllocationByToken(ctx context.Context, hash []byte) (resolute.Allocation, int64, error) {
	row, err := q.q.GetAllocationByToken(ctx, hash)
	return toAllocation(row.Allocation), row.ExperimentID, translate(err, "allocation")
}

// PendingAllocations lists allocations waiting for slots, oldest first.
func (q *Queries) PendingAllocations(ctx context.Context) ([]resolute.Allocation, error) {
	return allocations(q.q.ListPendingAllocations(ctx))
}

// RunningAllocations lists allocations that hold slots.
func (q *Queries) RunningAllocations(ctx context.Context) ([]resolute.Allocation, error) {
	return allocations(q.q.ListRunningAllocations(ctx))
}

// OverdueAllocations lists running allocations whose kill deadline is
// before now.
func (q *Queries) OverdueAllocations(ctx context.Context, now time.Time) ([]resolute.Allocation, error) {
	return allocations(q.q.ListOverdueAllocations(ctx, now))
}

// TrialAllocations lists every allocation of a trial, oldest first.
func (q *Queries) TrialAllocations(ctx context.Context, trialID int64) ([]resolute.Allocation, error) {
	return allocations(q.q.ListTrialAllocations(ctx, &trialID))
}

// CurrentTrialAllocation returns the trial's allocation that has not ended.
func (q *Queries) CurrentTrialAllocation(ctx context.Context, trialID int64) (resolute.Allocation, error) {
	a, err := q.q.CurrentTrialAllocation(ctx, &trialID)
	return toAllocation(a), translate(err, "current allocation of trial %d", trialID)
}

// StartAllocation marks a pending allocation running on slots with the hash
// of its new token; false means it was not pending any more.
func (q *Queries) StartAllocation(ctx context.Context, id string, slots []int, tokenHash []byte) (bool, error) {
	return q.StartAllocationOn(ctx, id, slots, nil, tokenHash)
}

// StartAllocationOn is StartAllocation with the agent (machine or node) of
// each slot, for resource managers with more than one.
func (q *Queries) StartAllocationOn(ctx context.Context, id string, slots []int, agents []string, tokenHash []byte) (bool, error) {
	ids := make([]int32, len(slots))
	for i, s := range slots {
		ids[i] = int32(s)
	}
	if agents == nil {
		agents = []string{}
	}
	n, err := q.q.StartAllocation(ctx, gen.StartAllocationParams{ID: id, SlotIds: ids, TokenHash: tokenHash, SlotAgents: agents})
	return n == 1, translate(err, "allocation %s", id)
}

// EndAllocation marks an allocation terminated; false means it already was.
func (q *Queries) EndAllocation(ctx context.Context, id string, exitCode *int, reason string) (bool, error) {
	n, err := q.q.EndAllocation(ctx, gen.EndAllocationParams{ID: id, ExitCode: int32p(exitCode), ExitReason: reason})
	return n == 1, translate(err, "allocation %s", id)
}

// RequestPreemption asks a running allocation to checkpoint and exit, and to
// be killed after killAfter; false means it is not running.
func (q *Queries) RequestPreemption(ctx context.Context, id string, killAfter time.Time) (bool, error) {
	n, err := q.q.RequestPreemption(ctx, gen.RequestPreemptionParams{ID: id, KillAfter: &killAfter})
	return n == 1, translate(err, "allocation %s", id)
}

// AckPreemption records that the task saw the preemption signal.
func (q *Queries) AckPreemption(ctx context.Context, id string) error {
	return translate(q.q.AckPreemption(ctx, id), "allocation %s", id)
}

func allocations(rows []gen.Allocation, err error) ([]resolute.Allocation, error) {
	if err != nil {
		return nil, translate(err, "allocations")
	}
	out := make([]resolute.Allocation, len(rows))
	for i, r := range rows {
		out[i] = toAllocation(r)
	}
	return out, nil
}

func toAllocation(a gen.Allocation) resolute.Allocation {
	slots := make([]int, len(a.SlotIds))
	for i, s := range a.SlotIds {
		slots[i] = int(s)
	}
	return resolute.Allocation{
		ID: a.ID, TaskID: a.TaskID, TrialID: a.TrialID, State: a.State, Slots: int(a.Slots), SlotIDs: slots, SlotAgents: a.SlotAgents,
		Preempt: a.Preempt, PreemptAcked: a.PreemptAcked, KillAfter: a.KillAfter, ExitCode: intp(a.ExitCode),
		ExitReason: a.ExitReason, CreatedAt: a.CreatedAt, StartedAt: a.StartedAt, EndedAt: a.EndedAt,
	}
}

// LiveAllocation is an allocation that waits or runs, with its experiment.
type LiveAllocation struct {
	resolute.Allocation
	ExperimentID int64
	// ExcludedAgents are the agents its trial's log policies excluded.
	ExcludedAgents []string
}

// LiveAllocations lists the allocations that wait or run, oldest first.
func (q *Queries) LiveAllocations(ctx context.Context) ([]LiveAllocation, error) {
	rows, err := q.q.ListLiveAllocations(ctx)
	if err != nil {
		return nil, translate(err, "allocations")
	}
	out := make([]LiveAllocation, len(rows))
	for i, r := range rows {
		out[i] = LiveAllocation{Allocation: toAllocation(r.Allocation), ExperimentID: r.ExperimentID, ExcludedAgents: r.ExcludedAgents}
	}
	return out, nil
}

// UnstartAllocation puts a running allocation back to pending; where its
// pods met at the rendezvous is forgotten, so that its next launch's pods
// meet afresh.
func (q *Queries) UnstartAllocation(ctx context.Context, id string) error {
	if err := q.q.ClearRendezvous(ctx, id); err != nil {
		return translate(err, "rendezvous of allocation %s", id)
	}
	return translate(q.q.UnstartAllocation(ctx, id), "allocation %s", id)
}

// RendezvousPod is one pod's place in its allocation's rendezvous.
type RendezvousPod struct {
	Rank  int
	Addr  string
	Slots int
}

// PostRendezvous records where a pod of an allocation runs; a pod that
// posts again replaces its entry.
func (q *Queries) PostRendezvous(ctx context.Context, allocationID string, p RendezvousPod) error {
	err := q.q.UpsertRendezvous(ctx, gen.UpsertRendezvousParams{AllocationID: allocationID, Rank: int32(p.Rank), Addr: p.Addr, Slots: int32(p.Slots)})
	return translate(err, "rendezvous of allocation %s", allocationID)
}

// Rendezvous returns the pods of an allocation that have posted, by rank.
func (q *Queries) Rendezvous(ctx context.Context, allocationID string) ([]RendezvousPod, error) {
	rows, err := q.q.ListRendezvous(ctx, allocationID)
	out := make([]RendezvousPod, len(rows))
	for i, r := range rows {
		out[i] = RendezvousPod{Rank: int(r.Rank), Addr: r.Addr, Slots: int(r.Slots)}
	}
	return out, translate(err, "rendezvous of allocation %s", allocationID)
}
