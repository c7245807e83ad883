package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/harness"
	"github.com/resolute-ml/resolute/local"
	"github.com/resolute-ml/resolute/masterconf"
	"github.com/resolute-ml/resolute/scheduler"
)

// startExperiments starts the local resource manager and the experiment
// runner: it installs the harness for tasks, adopts the allocations that
// survived a restart, and runs admission and the event pump until ctx ends.
// It returns the resource manager too (terminals are opened in its
// allocations); closing it leaves tasks running, to be adopted by the next
// start.
func startExperiments(ctx context.Context, cfg masterconf.Config, database *db.DB, configs *control.Configs,
	clusterID string, logger *slog.Logger) (*control.Experiments, *local.Manager, error) {
	python := cfg.TaskPython
	if python == "" {
		python = harness.DefaultPython()
	}
	rt, err := harness.Install(filepath.Join(cfg.DataDir, "harness"), python)
	if err != nil {
		return nil, nil, fmt.Errorf("task_python: %w", err)
	}
	rm, err := local.New(local.Options{StateDir: filepath.Join(cfg.DataDir, "allocations"), Slots: cfg.ResourceManager.Slots,
		Logger: logger.With("component", "local")})
	if err != nil {
		return nil, nil, fmt.Errorf("local resource manager: %w", err)
	}
	snap := rm.Capacity()
	logger.Info("local resource manager ready", "slots", len(snap.Slots), "slot_type", slotType(snap), "task_python", rt.Python)
	confPools, err := cfg.Pools(len(snap.Slots))
	if err != nil {
		rm.Close()
		return nil, nil, err
	}
	var pools []control.Pool
	for _, p := range confPools {
		pools = append(pools, control.Pool{Name: p.Name, Description: p.Description, SlotIDs: p.SlotIDs,
			Scheduler: scheduler.Config{Type: p.Scheduler.Type, Preemption: p.Scheduler.Preemption,
				FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority}})
		logger.Info("resource pool", "pool", p.Name, "slots", len(p.SlotIDs), "scheduler", p.Scheduler.Type, "preemption", p.Scheduler.Preemption)
	}
	exps := control.NewExperiments(database, configs, rm, control.RunOptions{
		MasterURL: cfg.URL(), ClusterID: clusterID, WorkRoot: filepath.Join(cfg.DataDir, "work"),
		HarnessDir: rt.PythonPath, BinDir: rt.BinDir, Python: rt.Python, KillGrace: 10 * time.Second,
		Pools: pools, ComputePool: cfg.ComputePool(), AuxPool: cfg.AuxPool(),
		NotebookTimeout:    time.Duration(cfg.NotebookTimeout) * time.Second,
		TensorboardTimeout: time.Duration(cfg.TensorboardTimeout) * time.Second,
	}, logger)
	adopted, err := rm.Recover(ctx)
	if err != nil {
		rm.Close()
		return nil, nil, fmt.Errorf("adopt running tasks: %w", err)
	}
	alive := map[string]bool{}
	for _, a := range adopted {
		alive[a.AllocationID] = true
	}
	if err := exps.Recover(ctx, alive, rm.Ended()); err != nil {
		rm.Close()
		return nil, nil, fmt.Errorf("recover experiments: %w", err)
	}
	go exps.Pump(ctx, rm.Events())
	go exps.Run(ctx)
	return exps, rm, nil
}

func slotType(s local.Snapshot) string {
	if len(s.Slots) > 0 {
		return s.Slots[0].Type
	}
	return "none"
}
