package control

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// TensorBoards show the event files trials keep in checkpoint storage. The
// harness (determined.core.init) gives each trial the directory
//
//	<storage>/<cluster id>/tensorboard/experiment/<experiment id>/trial/<trial id>/
//
// as core_context.train.get_tensorboard_path(), where <storage> is the
// experiment's shared_fs host_path (plus storage_path) or directory
// container_path: Determined's layout. With storage on a file system the
// master and the trials share, nothing is copied; TensorBoard reads the
// directories in place. Cloud storage is not supported yet.

// TensorBoardDir is where the trial's TensorBoard files live under storage
// base; trialID 0 gives the experiment's directory, holding its trials'.
func TensorBoardDir(base, clusterID string, experimentID, trialID int64) string {
	dir := filepath.Join(base, cmp.Or(clusterID, "cluster"), "tensorboard", "experiment", strconv.FormatInt(experimentID, 10))
	if trialID != 0 {
		dir = filepath.Join(dir, "trial", strconv.FormatInt(trialID, 10))
	}
	return dir
}

// tensorboardSource is one directory a TensorBoard shows, with the name
// its runs get.
type tensorboardSource struct {
	Name, Dir string
}

// checkTensorBoardSources refuses a TensorBoard over nothing, over
// experiments or trials that do not exist, or over storage the master cannot
// read.
func (x *Tasks) checkTensorBoardSources(ctx context.Context, req TaskRequest) error {
	if req.Type != resolute.TaskTensorBoard {
		if len(req.ExperimentIDs) > 0 || len(req.TrialIDs) > 0 {
			return resolute.Errorf(resolute.EInvalid, "experimentIds and trialIds: only TensorBoards take them")
		}
		return nil
	}
	if len(req.ExperimentIDs) == 0 && len(req.TrialIDs) == 0 {
		return resolute.Errorf(resolute.EInvalid, "a TensorBoard needs experimentIds or trialIds: the experiments or trials to show")
	}
	_, err := x.tensorboardSources(ctx, req.ExperimentIDs, req.TrialIDs)
	return err
}

// tensorboardSources resolves experiments and trials to their TensorBoard
// directories: one per experiment, and one per trial not already inside a
// chosen experiment.
func (x *Tasks) tensorboardSources(ctx context.Context, experimentIDs, trialIDs []int64) ([]tensorboardSource, error) {
	var out []tensorboardSource
	bases := map[int64]string{}
	base := func(id int64) (string, error) {
		if b, ok := bases[id]; ok {
			return b, nil
		}
		e, err := x.c.db.Experiment(ctx, id)
		if err != nil {
			return "", err
		}
		cfg, err := expconf.ParseExperiment(e.Config)
		if err != nil {
			return "", err
		}
		b, err := cfg.CheckpointStorage.LocalDir()
		if err != nil {
			return "", resolute.Errorf(resolute.EInvalid, "experiment %d: TensorBoard reads files on this machine's file system; %v", id, err)
		}
		bases[id] = b
		return b, nil
	}
	seenExp := map[int64]bool{}
	for _, id := range experimentIDs {
		if seenExp[id] {
			continue
		}
		seenExp[id] = true
		b, err := base(id)
		if err != nil {
			return nil, err
		}
		out = append(out, tensorboardSource{Name: "experiment-" + strconv.FormatInt(id, 10), Dir: TensorBoardDir(b, x.c.opts.ClusterID, id, 0)})
	}
	seen := map[int64]bool{}
	for _, id := range trialIDs {
		t, err := x.c.db.Trial(ctx, id)
		if err != nil {
			return nil, err
		}
		b, err := base(t.ExperimentID)
		if err != nil {
			return nil, err
		}
		if seen[id] || slices.Contains(experimentIDs, t.ExperimentID) {
			continue
		}
		seen[id] = true
		out = append(out, tensorboardSource{Name: "trial-" + strconv.FormatInt(id, 10), Dir: TensorBoardDir(b, x.c.opts.ClusterID, t.ExperimentID, id)})
	}
	for _, s := range out {
		// TensorBoard splits --logdir_spec at commas and the first colon.
		if strings.ContainsAny(s.Dir, ",") {
			return nil, resolute.Errorf(resolute.EInvalid, "TensorBoard cannot read %s: its path holds a comma", s.Dir)
		}
	}
	return out, nil
}

// tensorboardLogdir is TensorBoard's argument for the directories:
// --logdir for one, --logdir_spec name:dir,... for several.
func tensorboardLogdir(sources []tensorboardSource) []string {
	if len(sources) == 1 {
		return []string{"--logdir", sources[0].Dir}
	}
	spec := make([]string, len(sources))
	for i, s := range sources {
		spec[i] = s.Name + ":" + s.Dir
	}
	return []string{"--logdir_spec", strings.Join(spec, ",")}
}

// tensorboardDescription names what a TensorBoard shows:
// "TensorBoard (experiments 1, 2; trial 3)".
func tensorboardDescription(experimentIDs, trialIDs []int64) string {
	var parts []string
	list := func(ids []int64) string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.FormatInt(id, 10)
		}
		return strings.Join(s, ", ")
	}
	switch len(experimentIDs) {
	case 0:
	case 1:
		parts = append(parts, "experiment "+list(experimentIDs))
	default:
		parts = append(parts, "experiments "+list(experimentIDs))
	}
	switch len(trialIDs) {
	case 0:
	case 1:
		parts = append(parts, "trial "+list(trialIDs))
	default:
		parts = append(parts, "trials "+list(trialIDs))
	}
	return fmt.Sprintf("TensorBoard (%s)", strings.Join(parts, "; "))
}
