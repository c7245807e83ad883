package control

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
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
// directories in place. With a bucket the trial uploads them to the same
// path under the bucket's prefix, and the TensorBoard task syncs them into
// its own directory (tensorboardSync) before and while TensorBoard serves
// them.

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
// its runs get. From a bucket, Dir is relative to the task's directory,
// and the task syncs it from Path under Storage.
type tensorboardSource struct {
	Name, Dir string
	Storage   *expconf.CheckpointStorageConfig // a bucket's; nil on this machine
	Path      string                           // under the bucket's prefix
}

// bucketSource is a source in a bucket: synced from path into dir.
func bucketSource(name string, cs *expconf.CheckpointStorageConfig, clusterID string, experimentID, trialID int64) tensorboardSource {
	return tensorboardSource{Name: name, Dir: filepath.Join("tensorboard", name), Storage: cs,
		Path: filepath.ToSlash(TensorBoardDir("", clusterID, experimentID, trialID))}
}

// checkTensorBoardSources refuses a TensorBoard over nothing, over
// experiments or trials that do not exist, or over storage the master cannot
// read.
func (x *Tasks) checkTensorBoardSources(ctx context.Context, a authz.Actor, req TaskRequest) error {
	if req.Type != resolute.TaskTensorBoard {
		if len(req.ExperimentIDs) > 0 || len(req.TrialIDs) > 0 {
			return resolute.Errorf(resolute.EInvalid, "experimentIds and trialIds: only TensorBoards take them")
		}
		return nil
	}
	if len(req.ExperimentIDs) == 0 && len(req.TrialIDs) == 0 {
		return resolute.Errorf(resolute.EInvalid, "a TensorBoard needs experimentIds or trialIds: the experiments or trials to show")
	}
	if err := mayReadAll(ctx, x.c.db, a, req.ExperimentIDs, req.TrialIDs); err != nil {
		return err
	}
	_, err := x.tensorboardSources(ctx, req.ExperimentIDs, req.TrialIDs)
	return err
}

// mayReadAll refuses a TensorBoard over experiments and trials that a may
// not all read: under RBAC, one that spans a workspace where a holds no
// role that reads experiments.
func mayReadAll(ctx context.Context, d *db.DB, a authz.Actor, experimentIDs, trialIDs []int64) error {
	ids := slices.Clone(experimentIDs)
	for _, id := range trialIDs {
		t, err := d.Trial(ctx, id)
		if err != nil {
			return err
		}
		ids = append(ids, t.ExperimentID)
	}
	for _, id := range ids {
		e, err := d.Experiment(ctx, id)
		if err != nil {
			return err
		}
		if err := authz.Can(a, authz.Read, authz.Experiment(e)); err != nil {
			return resolute.Errorf(resolute.EForbidden, "a TensorBoard may show only experiments you may all read: %s",
				resolute.ErrorMessage(err))
		}
	}
	return nil
}

// tensorboardSources resolves experiments and trials to their TensorBoard
// directories: one per experiment, and one per trial not already inside a
// chosen experiment.
func (x *Tasks) tensorboardSources(ctx context.Context, experimentIDs, trialIDs []int64) ([]tensorboardSource, error) {
	var out []tensorboardSource
	bases := map[int64]string{}
	buckets := map[int64]*expconf.CheckpointStorageConfig{}
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
			buckets[id] = cfg.CheckpointStorage // synced by the task
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
		name := "experiment-" + strconv.FormatInt(id, 10)
		if cs := buckets[id]; cs != nil {
			out = append(out, bucketSource(name, cs, x.c.opts.ClusterID, id, 0))
			continue
		}
		out = append(out, tensorboardSource{Name: name, Dir: TensorBoardDir(b, x.c.opts.ClusterID, id, 0)})
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
		name := "trial-" + strconv.FormatInt(id, 10)
		if cs := buckets[t.ExperimentID]; cs != nil {
			out = append(out, bucketSource(name, cs, x.c.opts.ClusterID, t.ExperimentID, id))
			continue
		}
		out = append(out, tensorboardSource{Name: name, Dir: TensorBoardDir(b, x.c.opts.ClusterID, t.ExperimentID, id)})
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

// tensorboardSync is how a TensorBoard task gets the sources in buckets:
// its command runs under the harness's determined.exec.tensorboard, which
// syncs each into its directory before TensorBoard starts and every few
// seconds while it serves; DET_TENSORBOARD_SOURCES hands it the buckets
// with their secrets (never part of the task's shown config). No bucket:
// the command as it is.
func tensorboardSync(sources []tensorboardSource, command []string) ([]string, map[string]string, error) {
	type synced struct {
		Storage map[string]any `json:"storage"`
		Path    string         `json:"path"`
		Dir     string         `json:"dir"`
	}
	var list []synced
	for _, s := range sources {
		if s.Storage != nil {
			list = append(list, synced{Storage: s.Storage.Map(), Path: s.Path, Dir: s.Dir})
		}
	}
	if len(list) == 0 {
		return command, nil, nil
	}
	raw, err := json.Marshal(list)
	if err != nil {
		return nil, nil, err
	}
	return append([]string{"python3", "-m", "determined.exec.tensorboard"}, command...),
		map[string]string{"DET_TENSORBOARD_SOURCES": string(raw)}, nil
}
