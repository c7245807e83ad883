package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/harness"
	"github.com/resolute-ml/resolute/k8s"
	"github.com/resolute-ml/resolute/local"
	"github.com/resolute-ml/resolute/masterconf"
	"github.com/resolute-ml/resolute/monitoring"
	"github.com/resolute-ml/resolute/scheduler"
)

// started is what startExperiments hands back: the runner, the
// terminals of running allocations, and how to stop watching the resource
// manager (tasks keep running, to be adopted by the next start).
type started struct {
	runner    *control.Runner
	terminals handlers.Terminals
	close     func() error
}

// Both resource managers are the one seam control uses.
var (
	_ control.ResourceManager = (*local.Manager)(nil)
	_ control.ResourceManager = (*k8s.Manager)(nil)
)

// startExperiments starts the configured resource manager and the
// runner of experiments and tasks: it adopts the allocations that survived a restart, and
// runs admission and the event pump until ctx ends.
func startExperiments(ctx context.Context, cfg masterconf.Config, database *db.DB, configs *control.Configs, mon *monitoring.Metrics,
	clusterID string, webhooks *control.WebhookSender, logger *slog.Logger) (started, error) {
	kubernetes := cfg.ResourceManager.Type == "kubernetes"
	var rm control.ResourceManager
	var pools []masterconf.Pool
	var err error
	if kubernetes {
		rm, pools, err = startKubernetes(ctx, cfg, database, logger)
	} else {
		rm, pools, err = startLocal(cfg, logger)
	}
	if err != nil {
		return started{}, err
	}
	runner := control.NewRunner(database, configs, rm, runOptions(cfg, clusterID, pools, kubernetes, logger), logger,
		control.WithCycleObserver(func(c control.CycleStats) { mon.ObserveCycle(c.Took, poolCounts(c.Pools)) }),
		control.WithWebhooks(webhooks))
	if err := runner.Admission.Recover(ctx); err != nil {
		rm.Close()
		return started{}, fmt.Errorf("recover experiments: %w", err)
	}
	go runner.Admission.Pump(ctx)
	go runner.Admission.Run(ctx)
	return started{runner: runner, terminals: rm, close: rm.Close}, nil
}

// startLocal starts the local resource manager: tasks run on this machine
// with the harness installed under the data directory.
func startLocal(cfg masterconf.Config, logger *slog.Logger) (control.ResourceManager, []masterconf.Pool, error) {
	python := cfg.TaskPython
	if python == "" {
		python = harness.DefaultPython()
	}
	rt, err := harness.Install(filepath.Join(cfg.DataDir, "harness"), python)
	if err != nil {
		return nil, nil, fmt.Errorf("task_python: %w", err)
	}
	shared, err := sharedCheckpointDirs(cfg)
	if err != nil {
		return nil, nil, err
	}
	rm, err := local.New(local.Options{StateDir: filepath.Join(cfg.DataDir, "allocations"), Slots: cfg.ResourceManager.Slots,
		HarnessDir: rt.PythonPath, BinDir: rt.BinDir, Python: rt.Python, Logger: logger.With("component", "local"),
		WorkRoot: workRoot(cfg), KeepWorkDirs: cfg.ResourceManager.KeepWorkDirs,
		HomeRoot: filepath.Join(cfg.DataDir, "homes"), SharedDirs: shared})
	if err != nil {
		return nil, nil, fmt.Errorf("local resource manager: %w", err)
	}
	snap := rm.Capacity()
	logger.Info("local resource manager ready", "slots", len(snap.Slots), "slot_type", slotType(snap), "task_python", rt.Python)
	if os.Geteuid() == 0 {
		logger.Info("tasks run as their owners' linked Unix users, or as uid task_uid_base + user id", "task_uid_base", cfg.TaskUIDBase)
	}
	pools, err := cfg.Pools(len(snap.Slots))
	if err != nil {
		rm.Close()
		return nil, nil, err
	}
	return rm, pools, nil
}

// runOptions are the runner's options from master.yaml. On
// Kubernetes a higher priority runs first (masterconf sets its default, 50).
func runOptions(cfg masterconf.Config, clusterID string, confPools []masterconf.Pool, kubernetes bool, logger *slog.Logger) control.RunOptions {
	var pools []control.Pool
	for _, p := range confPools {
		sc := scheduler.Config{Type: p.Scheduler.Type, Preemption: p.Scheduler.Preemption,
			FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority}
		pool := control.Pool{Name: p.Name, Description: p.Description, SlotIDs: p.SlotIDs, Scheduler: sc}
		if kubernetes {
			pool.SlotIDs = nil
			pool.Scheduler.HigherFirst = true
		}
		pools = append(pools, pool)
		logger.Info("resource pool", "pool", p.Name, "slots", len(pool.SlotIDs), "scheduler", p.Scheduler.Type, "preemption", p.Scheduler.Preemption)
	}
	return control.RunOptions{
		MasterURL: cfg.TaskMasterURL(), ClusterID: clusterID, WorkRoot: workRoot(cfg), TaskUIDBase: cfg.TaskUIDBase,
		KillGrace: 10 * time.Second, Pools: pools, ComputePool: cfg.ComputePool(), AuxPool: cfg.AuxPool(),
		NotebookTimeout:    time.Duration(cfg.NotebookTimeout) * time.Second,
		TensorboardTimeout: time.Duration(cfg.TensorboardTimeout) * time.Second,
		Namespaces:         kubernetes,
	}
}

// workRoot holds the allocations' work directories, one per allocation.
func workRoot(cfg masterconf.Config) string { return filepath.Join(cfg.DataDir, "work") }

// sharedCheckpointDirs are the directories every task writes checkpoints
// to: the master's shared_fs checkpoint storage. Tasks run as their own
// users, so it is shared as /tmp is (mode 01777); the default one, under
// data_dir, is the master's own and made so (when tasks run as their
// users), even when an older master made it 0755.
func sharedCheckpointDirs(cfg masterconf.Config) ([]string, error) {
	if cfg.CheckpointStorage["type"] != "shared_fs" {
		return nil, nil
	}
	dir, ok := cfg.CheckpointStorage["host_path"].(string)
	if !ok || dir == "" {
		return nil, nil
	}
	if os.Geteuid() == 0 && filepath.Clean(dir) == filepath.Join(cfg.DataDir, "checkpoints") {
		if err := os.Chmod(dir, os.ModeSticky|0o777); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("checkpoint storage: %w", err)
		}
	}
	return []string{dir}, nil
}

func slotType(s local.Snapshot) string {
	if len(s.Slots) > 0 {
		return s.Slots[0].Type
	}
	return "none"
}

// poolCounts is what an admission cycle saw, as monitoring counts it.
func poolCounts(load map[string]control.PoolLoad) map[string]monitoring.PoolCounts {
	out := make(map[string]monitoring.PoolCounts, len(load))
	for pool, l := range load {
		out[pool] = monitoring.PoolCounts{Pending: l.Pending, Running: l.Running, Preempting: l.Preempting}
	}
	return out
}
