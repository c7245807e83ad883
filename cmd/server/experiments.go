package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/harness"
	"github.com/resolute-ml/resolute/local"
	"github.com/resolute-ml/resolute/masterconf"
	"github.com/resolute-ml/resolute/scheduler"
)

// started is what startExperiments hands back: the experiment runner, the
// terminals of running allocations, and how to stop watching the resource
// manager (tasks keep running, to be adopted by the next start).
type started struct {
	exps      *control.Experiments
	terminals handlers.Terminals
	close     func() error
}

// resourceManager is what the master runs work on, and the events it
// reports, whichever kind it is.
type resourceManager interface {
	control.ResourceManager
	Events() <-chan resolute.AllocationEvent
	Close() error
}

// startExperiments starts the configured resource manager and the
// experiment runner: it adopts the allocations that survived a restart, and
// runs admission and the event pump until ctx ends.
func startExperiments(ctx context.Context, cfg masterconf.Config, database *db.DB, configs *control.Configs,
	clusterID string, logger *slog.Logger) (started, error) {
	if cfg.ResourceManager.Type == "kubernetes" {
		return startKubernetes(ctx, cfg, database, configs, clusterID, logger)
	}
	python := cfg.TaskPython
	if python == "" {
		python = harness.DefaultPython()
	}
	rt, err := harness.Install(filepath.Join(cfg.DataDir, "harness"), python)
	if err != nil {
		return started{}, fmt.Errorf("task_python: %w", err)
	}
	rm, err := local.New(local.Options{StateDir: filepath.Join(cfg.DataDir, "allocations"), Slots: cfg.ResourceManager.Slots,
		Logger: logger.With("component", "local")})
	if err != nil {
		return started{}, fmt.Errorf("local resource manager: %w", err)
	}
	snap := rm.Capacity()
	logger.Info("local resource manager ready", "slots", len(snap.Slots), "slot_type", slotType(snap), "task_python", rt.Python)
	confPools, err := cfg.Pools(len(snap.Slots))
	if err != nil {
		rm.Close()
		return started{}, err
	}
	opts := runOptions(cfg, clusterID, confPools, false, logger)
	opts.HarnessDir, opts.BinDir, opts.Python = rt.PythonPath, rt.BinDir, rt.Python
	exps := control.NewExperiments(database, configs, rm, opts, logger)
	adopted, err := rm.Recover(ctx)
	if err != nil {
		rm.Close()
		return started{}, fmt.Errorf("adopt running tasks: %w", err)
	}
	alive := map[string]bool{}
	for _, a := range adopted {
		alive[a.AllocationID] = true
	}
	if err := exps.Recover(ctx, alive, rm.Ended()); err != nil {
		rm.Close()
		return started{}, fmt.Errorf("recover experiments: %w", err)
	}
	startRunner(ctx, exps, rm)
	return started{exps: exps, terminals: handlers.ExecTerminals(rm.Exec), close: rm.Close}, nil
}

// startRunner starts the event pump and admission.
func startRunner(ctx context.Context, exps *control.Experiments, rm resourceManager) {
	go exps.Pump(ctx, rm.Events())
	go exps.Run(ctx)
}

// runOptions are the experiment runner's options from master.yaml. On
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
		MasterURL: cfg.TaskMasterURL(), ClusterID: clusterID, WorkRoot: filepath.Join(cfg.DataDir, "work"),
		KillGrace: 10 * time.Second, Pools: pools, ComputePool: cfg.ComputePool(), AuxPool: cfg.AuxPool(),
		NotebookTimeout:    time.Duration(cfg.NotebookTimeout) * time.Second,
		TensorboardTimeout: time.Duration(cfg.TensorboardTimeout) * time.Second,
		Containers:         kubernetes,
	}
}

func slotType(s local.Snapshot) string {
	if len(s.Slots) > 0 {
		return s.Slots[0].Type
	}
	return "none"
}
