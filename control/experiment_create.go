package control

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/contextdir"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/searcher"
)

// CreateRequest is a new experiment.
type CreateRequest struct {
	ConfigYAML string
	Template   string
	Overrides  []string
	// Context is the tar.gz of the context directory as uploaded (spooled
	// to a temporary file); nil: none, or for a fork its parent's.
	Context   contextdir.Archive
	ProjectID int64 // 0: the config's project/workspace, else the default project
	Paused    bool
	ParentID  *int64
}

// Create validates a submission and stores the experiment, owned by the
// actor, with the trials its searcher asks for first. Every signed-in user
// may create experiments, in a project that is not archived, and fork any.
func (x *Experiments) Create(ctx context.Context, a authz.Actor, req CreateRequest) (resolute.Experiment, error) {
	if req.ParentID != nil {
		// Fork or continue: what the request leaves out comes from the parent.
		if err := x.inherit(ctx, a, &req); err != nil {
			return resolute.Experiment{}, err
		}
	}
	if err := checkContext(req.Context); err != nil {
		return resolute.Experiment{}, err
	}
	cfg, err := x.c.configs.ExpandExperimentIn(ctx, a, req.ProjectID, []byte(req.ConfigYAML), req.Template, req.Overrides)
	if err != nil {
		return resolute.Experiment{}, err
	}
	if err := x.unmask(ctx, cfg, req.ParentID); err != nil {
		return resolute.Experiment{}, err
	}
	projectID, err := x.c.projectFor(ctx, cfg, req.ProjectID)
	if err != nil {
		return resolute.Experiment{}, err
	}
	if err := x.c.checkRuntime(cfg.Resources, cfg.Environment, cfg.BindMounts); err != nil {
		return resolute.Experiment{}, err
	}
	if err := x.c.checkSingleNode(cfg.Resources); err != nil {
		return resolute.Experiment{}, err
	}
	seed := uint32(cfg.Reproducibility.ExperimentSeed)
	s, err := searcher.New(cfg.Searcher, cfg.Hyperparameters, seed)
	if err != nil {
		return resolute.Experiment{}, resolute.Errorf(resolute.EInvalid, "%s", resolute.ErrorMessage(err))
	}
	actions := s.Initial()
	configJSON, err := cfg.JSON()
	if err != nil {
		return resolute.Experiment{}, err
	}
	state := resolute.StateActive
	if req.Paused {
		state = resolute.StatePaused
	}
	var contextFrom *int64
	if req.ParentID != nil && contextReader(req.Context) == nil {
		contextFrom = req.ParentID // the parent's, copied inside the database
	}
	var id int64
	var pool string
	err = x.c.db.InTx(ctx, func(q *db.Queries) error {
		p, err := q.ProjectForUpdate(ctx, projectID)
		if err != nil {
			return err
		}
		if err := authz.Can(a, authz.CreateExperiment, authz.Project(p, 0)); err != nil {
			return err
		}
		if p.Archived {
			return resolute.Errorf(resolute.EConflict, "project %q is archived", p.Name)
		}
		// The workspace's default pool, and its right to the pool, are
		// read under the bindings' lock: a pool bound elsewhere meanwhile
		// is refused, not used.
		pl, err := placementOf(ctx, q, projectID)
		if err != nil {
			return err
		}
		if pool, err = x.c.routePool(pl, cfg.Resources.ResourcePool, false); err != nil {
			return err
		}
		snap, err := s.Snapshot()
		if err != nil {
			return err
		}
		id, err = q.CreateExperiment(ctx, db.NewExperiment{
			ProjectID: projectID, UserID: a.UserID(), Name: cfg.Name, Description: cfg.Description, Labels: cfg.Labels,
			State: state, Config: configJSON, OriginalConfig: req.ConfigYAML, Template: req.Template, ParentID: req.ParentID,
			SearcherState: snap, Seed: int64(seed), Priority: cfg.Resources.Priority, Weight: cfg.Resources.Weight,
			MaxSlots: cfg.Resources.MaxSlots, ResourcePool: pool,
			Context: contextReader(req.Context), ContextFrom: contextFrom,
		})
		if err != nil {
			return err
		}
		return x.apply(ctx, q, &run{id: id, state: state, cfg: cfg, s: s}, actions)
	})
	if err != nil {
		return resolute.Experiment{}, err
	}
	x.c.wakeAdmission()
	x.c.logger.Info("experiment created", "experiment", id, "name", cfg.Name, "searcher", cfg.Searcher.Name, "user", a.Username())
	return x.c.db.Experiment(ctx, id)
}

// inherit fills a fork's config from its parent, which a must be able to
// read; Create copies the parent's context when the fork brings none.
func (x *Experiments) inherit(ctx context.Context, a authz.Actor, req *CreateRequest) error {
	parent, err := x.c.db.Experiment(ctx, *req.ParentID)
	if err != nil {
		return err
	}
	if err := authz.Can(a, authz.Read, authz.Experiment(parent)); err != nil {
		return err
	}
	if req.ConfigYAML == "" {
		if req.ConfigYAML, err = x.c.db.ExperimentOriginalConfig(ctx, parent.ID); err != nil {
			return err
		}
		if req.Template == "" {
			req.Template = parent.Template
		}
	}
	if req.ProjectID == 0 {
		req.ProjectID = parent.ProjectID
	}
	return nil
}

// unmask puts back the storage secrets a fork's config leaves masked (it
// was made from the parent's config as shown, masked) from its parent's;
// a config with no parent may not use the mask as a secret.
func (x *Experiments) unmask(ctx context.Context, cfg *expconf.ExperimentConfig, parentID *int64) error {
	var parent *expconf.CheckpointStorageConfig
	if parentID != nil {
		e, err := x.c.db.Experiment(ctx, *parentID)
		if err != nil {
			return err
		}
		if pc, err := expconf.ParseExperiment(e.Config); err == nil {
			parent = pc.CheckpointStorage
		}
	}
	if err := cfg.CheckpointStorage.Unmask(parent); err != nil {
		return resolute.Errorf(resolute.EInvalid, "%s", resolute.ErrorMessage(err))
	}
	return nil
}
