package control

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// DeleteTensorBoardFiles deletes the TensorBoard files an experiment's
// trials wrote to its checkpoint storage (TensorBoardDir), as Determined's
// DELETE /api/v1/experiments/{id}/tensorboard-files: its owner or an
// administrator, once it has ended (its trials no longer write there). As
// checkpoint deletion, a CHECKPOINT_GC task deletes them where tasks run
// (the shared directory, or the bucket); it returns the task's id.
func (s *Checkpoints) DeleteTensorBoardFiles(ctx context.Context, a authz.Actor, experimentID int64) (string, error) {
	x := s.exps
	var task string
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		e, err := q.Experiment(ctx, experimentID)
		if err != nil {
			return err
		}
		if err := authz.Can(a, authz.ChangeExperiment, authz.Experiment(e)); err != nil {
			return err
		}
		if !resolute.Terminal(e.State) {
			return resolute.Errorf(resolute.EConflict, "experiment %d is %s and its trials may still write TensorBoard files; delete them once it has ended", e.ID, e.State)
		}
		cfg, err := expconf.ParseExperiment(e.Config)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(TensorBoardDir("", x.c.opts.ClusterID, e.ID, 0))
		config, err := deleteTaskConfig(e, cfg.CheckpointStorage, []string{dir}, "the TensorBoard files")
		if err != nil {
			return err
		}
		task, err = q.CreateTask(ctx, db.NewTask{Type: resolute.TaskCheckpointGC, Description: fmt.Sprintf("Delete the TensorBoard files of experiment %d", e.ID),
			Config: config, UserID: e.UserID, ProjectID: e.ProjectID, ResourcePool: x.c.opts.AuxPool, ExperimentIDs: []int64{e.ID}})
		if err != nil {
			return err
		}
		return q.CreateAllocation(ctx, task+".1", task, nil, 0)
	})
	if err != nil {
		return "", err
	}
	x.c.logger.Info("TensorBoard files deleted", "experiment", experimentID, "user", a.Username(), "task", task)
	x.c.wakeAdmission()
	return task, nil
}
